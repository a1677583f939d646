import Dispatch
import Foundation

/// Runs the parts of a walk that can go on two cores at once (`StoreEngine.forEachStoredValue`
/// over halves of a keydir table): the calling thread and Dispatch's pool, the call returning
/// when every part has.
enum ParallelParts {
    /// Parts a walk of `work` items is split into: two on a machine with more than one core
    /// when there is enough work to pay for the hand-off (tens of microseconds), else one.
    static func count(for work: Int, minimumPerPart: Int) -> Int {
        canSplit && work >= 2 * minimumPerPart ? 2 : 1
    }

    private static let canSplit = ProcessInfo.processInfo.activeProcessorCount > 1

    /// Calls `part` with each of `0 ..< count`, at once on as many threads. `part` must touch
    /// only what its index owns, and shared state that nobody changes meanwhile.
    static func run(_ count: Int, _ part: (Int) -> Void) {
        guard count > 1 else { part(0); return }
        withoutActuallyEscaping(part) { part in
            let box = PartBox(part)
            DispatchQueue.concurrentPerform(iterations: count) { box.part($0) }
        }
    }

    /// The closure handed to Dispatch's threads. Unchecked: `run` returns only after every
    /// part has, and each part keeps to what it owns (see `run`).
    private final class PartBox: @unchecked Sendable {
        let part: (Int) -> Void
        init(_ part: @escaping (Int) -> Void) { self.part = part }
    }
}
