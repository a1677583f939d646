import Foundation

extension StoreEngine {
    static let spaceNamePrefix = Array("space/".utf8)
    static let firstNamedSpace: UInt32 = 1 << 31

    /// The key space registered under `name`, registering the next free one (from 2^31 up) on
    /// first use. Names are stored in the engine's key space, so they survive reopen and
    /// compaction, and a name always maps to the same space.
    /// - Complexity: O(1) after the first call of the session, which reads the catalog once.
    func space(named name: String) throws -> UInt32 {
        try catalogMutex.withLock {
            var catalog = try loadedSpaceCatalog()
            if let id = catalog.spaces[name] { return id }
            guard !options.readOnly else { throw StoreError.readOnly }
            let next = catalog.nextSpace
            // The top space is the engine's own.
            guard next < LogStore.engineSpace else { throw StoreError.valueTooLarge(Int(next)) }
            var value: [UInt8] = []
            LittleEndian.append32(next, to: &value)
            try write(metadata(Self.spaceNamePrefix + Array(name.utf8), value))
            // Only a written registration enters the cache, so a failed write leaves it as it was.
            catalog.spaces[name] = next
            catalog.nextSpace = next + 1
            spaceCatalog = catalog
            return next
        }
    }

    /// Every registered name and its space.
    func namedSpaces() throws -> [String: UInt32] {
        try catalogMutex.withLock { try loadedSpaceCatalog().spaces }
    }

    /// The catalog, read from the engine's key space on first use and cached for the session:
    /// registrations only ever go through `space(named:)`, which keeps the cache current.
    /// Without it, every new name would scan and sort the whole catalog (a store with many
    /// tables or caches paid O(n log n) per registration). Call with `catalogMutex` held.
    private func loadedSpaceCatalog() throws -> SpaceCatalog {
        if let spaceCatalog { return spaceCatalog }
        var catalog = SpaceCatalog()
        for entry in try entries(space: LogStore.engineSpace, prefix: Self.spaceNamePrefix, crypt: nil) {
            let name = String(decoding: entry.key.dropFirst(Self.spaceNamePrefix.count), as: UTF8.self)
            guard entry.value.count == 4 else {
                throw StoreError.corrupt("space catalog entry for \(name) is \(entry.value.count) bytes")
            }
            let id = entry.value.withUnsafeBytes { LittleEndian.load32($0.baseAddress!, 0) }
            catalog.spaces[name] = id
            if id >= catalog.nextSpace { catalog.nextSpace = id &+ 1 }
        }
        spaceCatalog = catalog
        return catalog
    }
}

/// The engine's cached copy of the space catalog: names to key spaces, and the next free space.
struct SpaceCatalog {
    var spaces: [String: UInt32] = [:]
    var nextSpace = StoreEngine.firstNamedSpace
}
