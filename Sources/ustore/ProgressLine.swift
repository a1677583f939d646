import Foundation

/// A one-line progress display on stderr for the long commands (compact, rekey, import,
/// verify), shown only when stderr is a terminal: `label 42%` (or `label… 3s` when the share
/// done is unknown), rewritten in place, erased when the work ends. Thread-safe.
final class ProgressLine: @unchecked Sendable {
    private let label: String
    private let enabled: Bool
    private let lock = NSLock()
    private let started = Date()
    private var lastDrawn = Date.distantPast
    private var fraction: Double?
    private var finished = false

    /// A progress line for `label`; it draws nothing unless `enabled` (default: stderr is a
    /// terminal).
    init(_ label: String, enabled: Bool = isatty(STDERR_FILENO) == 1) {
        self.label = label
        self.enabled = enabled
    }

    /// Records the share done (0...1) and redraws at most ten times a second.
    func update(_ done: Double) {
        lock.lock()
        defer { lock.unlock() }
        fraction = min(max(done, 0), 1)
        drawIfDue()
    }

    /// Runs `body` while redrawing the elapsed time twice a second (for work that reports no
    /// share done), then erases the line.
    func whileRunning<Result>(_ body: () throws -> Result) rethrows -> Result {
        if enabled {
            Thread.detachNewThread { [self] in
                while true {
                    lock.lock()
                    if finished { lock.unlock(); return }
                    drawIfDue()
                    lock.unlock()
                    Thread.sleep(forTimeInterval: 0.5)
                }
            }
        }
        defer { finish() }
        return try body()
    }

    /// Erases the line (once).
    func finish() {
        lock.lock()
        defer { lock.unlock() }
        guard !finished else { return }
        finished = true
        if enabled { try? Output.writeAll(Array("\r\u{1B}[K".utf8), to: STDERR_FILENO) }
    }

    private func drawIfDue() {
        guard enabled, !finished, Date().timeIntervalSince(lastDrawn) >= 0.1 || fraction == 1 else { return }
        lastDrawn = Date()
        let text: String
        if let fraction {
            text = "\(label) \(Int((fraction * 100).rounded(.down)))%"
        } else {
            text = "\(label)… \(Int(Date().timeIntervalSince(started)))s"
        }
        try? Output.writeAll(Array("\r\(text)\u{1B}[K".utf8), to: STDERR_FILENO)
    }
}
