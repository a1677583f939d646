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
        var index = try dictionaryIndex() ?? DictionaryIndex(dictionaries: [], spaces: [:])
        if !index.dictionaries.contains(dictionary.id) { index.dictionaries.append(dictionary.id) }
        index.spaces[space] = dictionary.id
        try write(batch: [metadata(Self.dictionaryPrefix + Array("\(dictionary.id)".utf8), dictionary.bytes),
                          metadata(Self.spaceDictionaryPrefix + Array("\(space)".utf8), id),
                          metadata(Self.dictionaryIndexKey, index.encoded())])
        rw.withWriteLock {
            dictionaries[dictionary.id] = dictionary
            spaceDictionaries[space] = dictionary
        }
        return dictionary.id
    }

    static let dictionaryIndexKey = Array("zdict-index".utf8)

    /// Which dictionaries exist and which space uses which, in one record, so that opening a
    /// store reads one record instead of scanning the keydir (FORMAT.md, "The engine's key space").
    struct DictionaryIndex {
        var dictionaries: [UInt32]
        var spaces: [UInt32: UInt32]

        func encoded() -> [UInt8] {
            var bytes: [UInt8] = []
            LittleEndian.append32(UInt32(dictionaries.count), to: &bytes)
            for id in dictionaries { LittleEndian.append32(id, to: &bytes) }
            LittleEndian.append32(UInt32(spaces.count), to: &bytes)
            for (space, id) in spaces.sorted(by: { $0.key < $1.key }) {
                LittleEndian.append32(space, to: &bytes)
                LittleEndian.append32(id, to: &bytes)
            }
            return bytes
        }

        init(dictionaries: [UInt32], spaces: [UInt32: UInt32]) {
            self.dictionaries = dictionaries
            self.spaces = spaces
        }

        init?(decoding bytes: [UInt8]) {
            func word(_ at: Int) -> UInt32? {
                guard at + 4 <= bytes.count else { return nil }
                return UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
            }
            guard let count = word(0), Int(count) <= bytes.count / 4 else { return nil }
            var at = 4
            dictionaries = []
            for _ in 0..<count {
                guard let id = word(at) else { return nil }
                dictionaries.append(id)
                at += 4
            }
            guard let pairs = word(at), Int(pairs) <= bytes.count / 8 else { return nil }
            at += 4
            spaces = [:]
            for _ in 0..<pairs {
                guard let space = word(at), let id = word(at + 4) else { return nil }
                spaces[space] = id
                at += 8
            }
            guard at == bytes.count else { return nil }
        }
    }

    func dictionaryIndex() throws -> DictionaryIndex? {
        guard let bytes = try get(key: Self.dictionaryIndexKey, space: LogStore.engineSpace, crypt: nil) else { return nil }
        guard let index = DictionaryIndex(decoding: bytes) else {
            throw StoreError.corrupt("the dictionary index record (zdict-index) is malformed")
        }
        return index
    }

    /// Loads every dictionary the store holds and which space uses which. Called at open: one
    /// record read when the store has no dictionary.
    func loadDictionaries() throws {
        let index: DictionaryIndex
        do {
            guard let found = try dictionaryIndex() else { return }
            index = found
        } catch {
            recoveryReport.append("compression dictionaries not loaded: \(error)")
            return
        }
        var loaded: [UInt32: ZstdDictionary] = [:]
        for id in index.dictionaries {
            do {
                guard let bytes = try get(key: Self.dictionaryPrefix + Array("\(id)".utf8), space: LogStore.engineSpace, crypt: nil) else {
                    recoveryReport.append("compression dictionary \(id) is missing")
                    continue
                }
                loaded[id] = try ZstdDictionary(bytes: bytes, level: options.compression?.level ?? 3)
            } catch {
                recoveryReport.append("compression dictionary \(id) unreadable: \(error)")
            }
        }
        var bySpace: [UInt32: ZstdDictionary] = [:]
        for (space, id) in index.spaces { if let dictionary = loaded[id] { bySpace[space] = dictionary } }
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
