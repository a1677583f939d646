#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A plain mutex over pthread_mutex_t, heap-allocated so its address never moves.
final class Mutex: @unchecked Sendable {
    private let raw = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    init() { pthread_mutex_init(raw, nil) }
    deinit { pthread_mutex_destroy(raw); raw.deallocate() }

    func lock() { pthread_mutex_lock(raw) }
    func unlock() { pthread_mutex_unlock(raw) }

    @inline(__always)
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(raw)
        defer { pthread_mutex_unlock(raw) }
        return try body()
    }

    /// `withLock` for a background thread that takes a lock a busy thread holds nearly all the
    /// time (the syncer and the writer's `writeMutex`): it polls with `trylock` to catch the
    /// gaps between the busy thread's critical sections, yields after a while, and blocks only
    /// after about 4,000 failed tries. A waiter that blocks makes the busy thread's unlock a
    /// `futex` wake (a system call on its path) and sleeps through the gaps it could have
    /// used; a poller costs the busy thread nothing. (issue 21's profile of a put burst: about
    /// 40% of the syncer's context switches were waits for `writeMutex`.)
    func withLockSpinning<R>(_ body: () throws -> R) rethrows -> R {
        var tries = 0
        while pthread_mutex_trylock(raw) != 0 {
            tries += 1
            if tries >= 4096 {
                pthread_mutex_lock(raw)
                break
            }
            if tries & 63 == 0 { sched_yield() }
        }
        defer { pthread_mutex_unlock(raw) }
        return try body()
    }

    /// Waits on `condition`, which must be used with this mutex only.
    func wait(_ condition: Condition) { pthread_cond_wait(condition.raw, raw) }
}

/// A condition variable for `Mutex.wait(_:)`.
final class Condition: @unchecked Sendable {
    let raw = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    init() { pthread_cond_init(raw, nil) }
    deinit { pthread_cond_destroy(raw); raw.deallocate() }
    func broadcast() { pthread_cond_broadcast(raw) }
}

/// A readers-writer lock: many readers at once, or one writer.
final class ReadWriteLock: @unchecked Sendable {
    private let raw = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)

    init() { pthread_rwlock_init(raw, nil) }
    deinit { pthread_rwlock_destroy(raw); raw.deallocate() }

    @inline(__always)
    func withReadLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_rwlock_rdlock(raw)
        defer { pthread_rwlock_unlock(raw) }
        return try body()
    }

    @inline(__always)
    func withWriteLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_rwlock_wrlock(raw)
        defer { pthread_rwlock_unlock(raw) }
        return try body()
    }
}
