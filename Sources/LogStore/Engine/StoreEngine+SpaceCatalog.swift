import Foundation

extension StoreEngine {
    static let spaceNamePrefix = Array("space/".utf8)
    static let firstNamedSpace: UInt32 = 1 << 31

    /// The key space registered under `name`, registering the next free one (from 2^31 up) on
    /// first use. Names are stored in the engine's key space, so they survive reopen and
    /// compaction, and a name always maps to the same space.
    func space(named name: String) throws -> UInt32 {
        try catalogMutex.withLock {
            let key = Self.spaceNamePrefix + Array(name.utf8)
            if let stored = try get(key: key, space: LogStore.engineSpace, crypt: nil) {
                guard stored.count == 4 else { throw StoreError.corrupt("space catalog entry for \(name) is \(stored.count) bytes") }
                return stored.withUnsafeBytes { LittleEndian.load32($0.baseAddress!, 0) }
            }
            guard !options.readOnly else { throw StoreError.readOnly }
            var next = Self.firstNamedSpace
            for entry in try entries(space: LogStore.engineSpace, prefix: Self.spaceNamePrefix, crypt: nil) where entry.value.count == 4 {
                let id = entry.value.withUnsafeBytes { LittleEndian.load32($0.baseAddress!, 0) }
                if id >= next { next = id + 1 }
            }
            // The top space is the engine's own.
            guard next < LogStore.engineSpace else { throw StoreError.valueTooLarge(Int(next)) }
            var value: [UInt8] = []
            LittleEndian.append32(next, to: &value)
            try write(metadata(key, value))
            return next
        }
    }

    /// Every registered name and its space.
    func namedSpaces() throws -> [String: UInt32] {
        var result: [String: UInt32] = [:]
        for entry in try entries(space: LogStore.engineSpace, prefix: Self.spaceNamePrefix, crypt: nil) where entry.value.count == 4 {
            result[String(decoding: entry.key.dropFirst(Self.spaceNamePrefix.count), as: UTF8.self)] =
                entry.value.withUnsafeBytes { LittleEndian.load32($0.baseAddress!, 0) }
        }
        return result
    }
}
