import Foundation

/// A value guarded by a lock, for the layer's mutable state inside `Sendable` classes.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// A weak reference that can cross concurrency domains: set once at init, read under a lock.
final class WeakRef<Object: AnyObject & Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private weak var object: Object?

    init(_ object: Object?) { self.object = object }

    var value: Object? {
        lock.lock()
        defer { lock.unlock() }
        return object
    }
}
