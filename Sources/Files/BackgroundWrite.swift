import Dispatch
import LogStore

/// One write of sealed bytes at a time on a thread of its own, so that an encrypted writer
/// seals its next batch while the kernel copies the last one into the page cache: the two
/// take about the same time per MiB, and done one after the other they made an encrypted write
/// ~0.6-0.7x of a plain one (BENCHMARKS.md, "Files").
///
/// Used from one thread (the writer's owner). At most one write is in flight: `start` may be
/// called only after `wait` (or before any write). The bytes handed to `start` must stay
/// untouched until `wait` returns.
final class BackgroundWrite: @unchecked Sendable {
    private let queue = DispatchQueue(label: "UnifiedStorage.Files.BackgroundWrite")
    private let group = DispatchGroup()
    /// Whether a write was started and not yet waited for. (Owner's thread.)
    private(set) var inFlight = false
    // The write in flight: set by the owner before the hand-off, read on the queue; the
    // failure is set on the queue and read by the owner after `group.wait()`, which orders them.
    private var file: SystemFile?
    private var bytes = UnsafeRawBufferPointer(start: nil, count: 0)
    private var offset = 0
    private var failure: (any Error)?

    /// Starts writing `bytes` at `offset` of `file` on the background thread.
    func start(_ file: SystemFile, _ bytes: UnsafeRawBufferPointer, at offset: Int) {
        self.file = file
        self.bytes = bytes
        self.offset = offset
        inFlight = true
        group.enter()
        queue.async { [self] in
            do {
                try self.file?.write(self.bytes, at: self.offset)
            } catch {
                failure = error
            }
            group.leave()
        }
    }

    /// Waits for the write in flight, if any.
    /// - Throws: the error that write threw (`StoreError.io`), once.
    func wait() throws {
        guard inFlight else { return }
        group.wait()
        inFlight = false
        file = nil
        if let failure {
            self.failure = nil
            throw failure
        }
    }

    /// Waits for the write in flight, if any, and forgets its error (the file is being
    /// abandoned).
    func waitDiscardingError() {
        try? wait()
    }
}
