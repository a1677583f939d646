#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Every kind of system call the engine makes, as the fault injector names them.
package enum IOCall: String, Sendable, CaseIterable {
    case open, fstat, pwrite, pread, fdatasync, ftruncate, fallocate, flock, mmap
    case mkdir, opendir, rename, unlink, fsyncDirectory
}

/// A failure to inject at one I/O call.
package enum InjectedFault: Sendable, Equatable {
    /// The call fails with this errno (ENOSPC, EIO, ...).
    case error(Int32)
    /// A `pwrite` writes only the first half of its bytes, then fails with ENOSPC (what a
    /// filling disk does). At any other call it acts as `.error(ENOSPC)`.
    case shortWrite
}

/// Test-only fault injection at the engine's I/O door (`SystemFile`, `Directory`,
/// `MappedRegion`): counts every I/O call and can make the N-th one (counting from when it was
/// armed) fail. Tests drive it to fail each call site in turn, the way SQLite's I/O error tests
/// do; production code never arms it.
///
/// Disarmed, a call site costs one relaxed atomic load.
package enum FaultInjection {
    private static let armed = Atomic<Bool>(false)
    /// The state behind a pthread mutex (`Mutex`): ThreadSanitizer follows it, where it
    /// reported `Synchronization.Mutex`'s futex as a race when writers of two threads reached
    /// `check` at once.
    private static let box = StateBox()

    private final class StateBox: @unchecked Sendable {
        // Unchecked: `state` is touched only with `mutex` held.
        let mutex = Mutex()
        var state = State()
    }

    private static func withState<R>(_ body: (inout State) -> R) -> R {
        box.mutex.withLock { body(&box.state) }
    }

    private struct State {
        var counting = false
        var calls = 0
        var failAt: Int? = nil
        var fault: InjectedFault = .error(EIO)
        var onlyCalls: Set<IOCall>? = nil
        var underPath: String? = nil
        var fired: (call: IOCall, path: String)? = nil
        var log: [IOCall] = []
    }

    /// Starts counting calls from zero; when `failAt` is given, the call with that index (0-based,
    /// among the calls in `only` when given, and on files under the folder `under` when given)
    /// fails with `fault`, once. `under` keeps the calls of other stores in the process (a
    /// background syncer writing its mark file) out of the count.
    package static func arm(failAt: Int?, fault: InjectedFault = .error(EIO), only: Set<IOCall>? = nil, under folder: String? = nil) {
        withState {
            $0 = State(counting: true, calls: 0, failAt: failAt, fault: fault, onlyCalls: only,
                       underPath: folder.map { $0.hasSuffix("/") ? $0 : $0 + "/" })
        }
        armed.store(true, ordering: .sequentiallyConsistent)
    }

    /// Stops counting and injecting. Returns the number of calls seen since `arm`.
    @discardableResult
    package static func disarm() -> Int {
        armed.store(false, ordering: .sequentiallyConsistent)
        return withState { state in
            state.counting = false
            return state.calls
        }
    }

    /// The call and path that received the injected fault, if it fired.
    package static var fired: (call: IOCall, path: String)? { withState { $0.fired } }

    /// The calls seen since `arm`, in order (kept for diagnostics of a failing case).
    package static var log: [IOCall] { withState { $0.log } }

    /// Called by the I/O door before each system call: the fault to inject, if this is the call.
    @inline(__always)
    static func check(_ call: IOCall, _ path: String) -> InjectedFault? {
        guard armed.load(ordering: .relaxed) else { return nil }
        return withState { state -> InjectedFault? in
            guard state.counting else { return nil }
            if let only = state.onlyCalls, !only.contains(call) { return nil }
            if let folder = state.underPath, !path.hasPrefix(folder) { return nil }
            let index = state.calls
            state.calls += 1
            state.log.append(call)
            guard index == state.failAt else { return nil }
            state.fired = (call, path)
            return state.fault
        }
    }

    /// `check` for calls that can only fail whole: throws `StoreError.io` for an injected fault.
    @inline(__always)
    static func failIfInjected(_ call: IOCall, _ path: String, operation: @autoclosure () -> String) throws {
        guard let fault = check(call, path) else { return }
        throw StoreError.io(operation: operation() + " (injected)", errno: fault.errno)
    }
}

extension InjectedFault {
    /// The errno the failing call reports.
    var errno: Int32 {
        switch self {
        case .error(let code): return code
        case .shortWrite: return ENOSPC
        }
    }
}
