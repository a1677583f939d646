// The facade: `import UnifiedStorage` brings in every layer. Layers arrive with their issues;
// today that is the LogStore engine and the Preferences layer.
@_exported import LogStore
@_exported import Preferences
