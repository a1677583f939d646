import LogStore

/// One live index per store and name, shared by every cache or array object that opens it, and
/// forgotten when the last of them lets it go. (A live index holds its store, so the store's
/// identity cannot be reused while the entry matters.)
final class StoreIndexRegistry<Index: AnyObject>: @unchecked Sendable {
    private struct Key: Hashable {
        let store: ObjectIdentifier
        let name: String
    }

    private final class Weak {
        weak var index: Index?
        init(_ index: Index) { self.index = index }
    }

    private let lock = CacheLock()
    private var entries: [Key: Weak] = [:]

    /// The live index of `name` in `store`, or the one `load` makes (then kept weakly).
    func index(for store: LogStore, name: String, load: () throws -> Index) throws -> Index {
        try lock.withLock {
            let key = Key(store: ObjectIdentifier(store), name: name)
            if let index = entries[key]?.index { return index }
            let index = try load()
            entries = entries.filter { $0.value.index != nil }
            entries[key] = Weak(index)
            return index
        }
    }
}
