import Foundation
import Synchronization

/// Who wants to hear of the commits of which database: the observations of
/// `SQLDatabase.observe` register here, and `SQLDatabase.commit()` reports each commit's
/// tables. With no observer anywhere, a commit pays one relaxed atomic load.
final class CommitObservers: @unchecked Sendable {
    static let shared = CommitObservers()
    /// The number of registered observers in the process (the commit path's fast check).
    private static let count = Atomic<Int>(0)

    typealias Observer = @Sendable (Set<String>) -> Void

    private let lock = NSLock()
    private var observers: [ObjectIdentifier: [UInt64: Observer]] = [:]
    private var nextToken: UInt64 = 0

    static var isEmpty: Bool { count.load(ordering: .relaxed) == 0 }

    /// Registers `observer` for the commits of `database`; returns the token that removes it.
    func add(_ observer: @escaping Observer, for database: SQLDatabase) -> UInt64 {
        lock.lock()
        defer { lock.unlock() }
        nextToken += 1
        observers[ObjectIdentifier(database), default: [:]][nextToken] = observer
        Self.count.add(1, ordering: .relaxed)
        return nextToken
    }

    /// Removes the observer `token` of `database` (nothing when already removed).
    func remove(_ token: UInt64, for database: SQLDatabase) {
        lock.lock()
        defer { lock.unlock() }
        let key = ObjectIdentifier(database)
        guard observers[key]?.removeValue(forKey: token) != nil else { return }
        if observers[key]?.isEmpty == true { observers[key] = nil }
        Self.count.subtract(1, ordering: .relaxed)
    }

    /// How many observers `database` has (for tests).
    func count(for database: SQLDatabase) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return observers[ObjectIdentifier(database)]?.count ?? 0
    }

    /// Tells every observer of `database` that a commit changed `tables` (lower-cased names).
    func notify(_ database: SQLDatabase, tables: Set<String>) {
        lock.lock()
        let current = observers[ObjectIdentifier(database)].map { Array($0.values) } ?? []
        lock.unlock()
        for observer in current { observer(tables) }
    }
}

extension SQLDatabase {
    /// Called by `commit()` once a commit's batch is written, with the statement lock held:
    /// reports the tables whose rows or schema it changed. Observers only take note (they run
    /// their queries later, on their own tasks).
    func notifyCommitted(_ changedTables: Dictionary<ObjectIdentifier, TableState>.Values, schema: Set<String>) {
        guard !CommitObservers.isEmpty else { return }
        var names = schema
        for table in changedTables { names.insert(table.name.lowercased()) }
        guard !names.isEmpty else { return }
        CommitObservers.shared.notify(self, tables: names)
    }
}
