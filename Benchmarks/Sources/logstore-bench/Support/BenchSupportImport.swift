// The dlopen loader and the error type are shared with sql-bench (target BenchSupport);
// re-exported so every file of this executable sees them.
@_exported import BenchSupport
