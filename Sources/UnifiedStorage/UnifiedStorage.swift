// The facade: `import UnifiedStorage` brings in every layer.
@_exported import LogStore
@_exported import DAO
@_exported import Preferences
@_exported import Caches
@_exported import Files
