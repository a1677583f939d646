// The facade: `import UnifiedStorage` brings in every layer. Layers arrive with their issues;
// today that is the LogStore engine.
@_exported import LogStore
