/// What can go wrong in a benchmark run (shared by the harness executables).
public enum BenchError: Error, CustomStringConvertible {
    case usage(String)
    case verification(String)
    /// A peer's library is not installed (the peer is skipped).
    case unavailable(String)
    /// An engine call failed.
    case engine(String)

    public var description: String {
        switch self {
        case .usage(let message): return "usage: \(message)"
        case .verification(let message): return "verification failed: \(message)"
        case .unavailable(let message): return "unavailable: \(message)"
        case .engine(let message): return "engine error: \(message)"
        }
    }
}
