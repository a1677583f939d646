import Foundation

extension StoreEngine {
    static let dictionaryPrefix = Array("zdict/".utf8)
    static let spaceDictionaryPrefix = Array("zdict-space/".utf8)

    /// Trains a zstd dictionary on the current values of `space` and makes it the dictionary
    /// that space's compressed writes use from now on. Values already written keep the
    /// dictionary (or none) they were compressed with; every dictionary stays in the store.
    /// Returns the dictionary's id, or nil when the space holds too little to learn from.
    func trainDictionary(space: UInt32, maxSize: Int, sampleLimit: Int) throws -> UInt32? {
        guard !options.readOnly else { throw StoreError.readOnly }
        guard space != LogStore.engineSpace else { return nil }
        var samples: [[UInt8]] = []
        for entry in try entries(space: space, prefix: [], crypt: nil) {
            samples.append(entry.value)
            if samples.count >= sampleLimit { break }
        }
        guard let dictionary = try ZstdDictionary.train(samples: samples, maxSize: max(1024, maxSize),
                                                       level: options.compression?.level ?? 3) else { return nil }
        if let existing = rw.withReadLock({ dictionaries[dictionary.id] }), existing.bytes != dictionary.bytes {
            // zstd draws ids at random; a clash with a different dictionary is not worth risking.
            return nil
        }
        var id: [UInt8] = []
        LittleEndian.append32(dictionary.id, to: &id)
        try write(batch: [metadata(Self.dictionaryPrefix + Array("\(dictionary.id)".utf8), dictionary.bytes),
                          metadata(Self.spaceDictionaryPrefix + Array("\(space)".utf8), id)])
        rw.withWriteLock {
            dictionaries[dictionary.id] = dictionary
            spaceDictionaries[space] = dictionary
        }
        return dictionary.id
    }

    /// Loads every dictionary the store holds and which space uses which. Called at open.
    func loadDictionaries() throws {
        var loaded: [UInt32: ZstdDictionary] = [:]
        for entry in try entries(space: LogStore.engineSpace, prefix: Self.dictionaryPrefix, crypt: nil) {
            do {
                let dictionary = try ZstdDictionary(bytes: entry.value, level: options.compression?.level ?? 3)
                loaded[dictionary.id] = dictionary
            } catch {
                recoveryReport.append("compression dictionary \(String(decoding: entry.key, as: UTF8.self)) unreadable: \(error)")
            }
        }
        var bySpace: [UInt32: ZstdDictionary] = [:]
        for entry in try entries(space: LogStore.engineSpace, prefix: Self.spaceDictionaryPrefix, crypt: nil) {
            let spaceText = String(decoding: entry.key.dropFirst(Self.spaceDictionaryPrefix.count), as: UTF8.self)
            guard let space = UInt32(spaceText), entry.value.count == 4 else { continue }
            let id = entry.value.withUnsafeBytes { LittleEndian.load32($0.baseAddress!, 0) }
            if let dictionary = loaded[id] { bySpace[space] = dictionary }
        }
        rw.withWriteLock {
            dictionaries = loaded
            spaceDictionaries = bySpace
        }
    }

    /// The dictionary new compressed values of `space` are made with, if one was trained.
    func compressionDictionary(for space: UInt32) -> ZstdDictionary? {
        rw.withReadLock { spaceDictionaries.isEmpty ? nil : spaceDictionaries[space] }
    }

    /// Decompresses a stored frame, with the dictionary its header names if any.
    func decompress(_ frame: [UInt8], rawLength: Int, location: RecordLocation) throws -> [UInt8] {
        try frame.withUnsafeBytes { bytes in
            let what = "\(segmentPath(location.segment)) record at offset \(location.offset)"
            let id = ZstdCodec.dictionaryID(of: bytes)
            guard id != 0 else { return try zstd.decompress(bytes, rawLength: rawLength, what: what) }
            guard let dictionary = rw.withReadLock({ dictionaries[id] }) else {
                throw StoreError.corrupt("\(what): compressed with dictionary \(id), which the store does not hold")
            }
            return try dictionary.decompress(bytes, rawLength: rawLength, with: zstd, what: what)
        }
    }
}
