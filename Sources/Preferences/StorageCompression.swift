import Foundation
import LogStore

/// zstd compression for every store a DataCenter or a CustomStorage opens (its common and user
/// stores, and so its preferences, disk caches and file/object arrays). An addition of this
/// project, off unless asked for (`DataCenter(root:appKey:defaultKey:appVersion:compression:)`,
/// `CustomStorage(path:compression:)`).
///
/// Values of at least `threshold` bytes are compressed by the engine (FORMAT.md, "Values",
/// flag 0x08) before any encryption, and kept compressed only when that makes them smaller.
/// Preference and cache values are small and alike, which zstd alone hardly shrinks; with
/// `trainsDictionaries`, each preferences space (`prefs:<business>`), disk cache
/// (`lrucache:<name>`) and object array (`objectarray:<name>`) that holds at least
/// `dictionaryMinimumValues` values and has no dictionary yet gets one trained on its values
/// when its store opens (or when `trainCompressionDictionaries()` is called), and its later
/// values are compressed with it (FORMAT.md, "Compression dictionaries").
///
/// Turning it on or off is safe at any time: a store reads compressed and plain records
/// alike, whatever its options.
public struct StorageCompression: Sendable, Equatable {
    /// zstd level, 1 (fastest) to 19.
    public var level: Int32
    /// Values shorter than this many bytes are stored as they are.
    public var threshold: Int
    /// Whether spaces are given trained dictionaries (see above).
    public var trainsDictionaries: Bool
    /// The values a space needs before a dictionary is trained for it.
    public var dictionaryMinimumValues: Int
    /// The largest dictionary trained, in bytes.
    public var dictionaryMaxSize: Int

    /// - Parameters: see the properties. The defaults suit preferences and cache entries of a
    ///   few dozen bytes and more.
    public init(level: Int32 = 3, threshold: Int = 32, trainsDictionaries: Bool = true,
                dictionaryMinimumValues: Int = 100, dictionaryMaxSize: Int = 16 << 10) {
        self.level = level
        self.threshold = threshold
        self.trainsDictionaries = trainsDictionaries
        self.dictionaryMinimumValues = dictionaryMinimumValues
        self.dictionaryMaxSize = dictionaryMaxSize
    }

    /// The engine option this amounts to.
    var engineOption: LogStore.Options.Compression { .init(level: level, threshold: threshold) }

    /// The prefixes of the space names that get dictionaries: preferences, disk cache entries,
    /// object arrays (file arrays hold 1 MiB chunks, which need none).
    static let trainedSpacePrefixes = ["prefs:", "lrucache:", "objectarray:"]

    /// Trains a dictionary for every space of `store` that should have one and has none yet.
    /// A space whose values cannot all be read (custom-crypt values) is skipped and logged.
    /// - Returns: the number of dictionaries trained.
    /// - Complexity: one pass over the store's keys per space without a dictionary.
    func trainDictionaries(in store: LogStore) throws -> Int {
        guard trainsDictionaries else { return 0 }
        var trained = 0
        for (name, space) in try store.namedSpaces().sorted(by: { $0.key < $1.key })
        where Self.trainedSpacePrefixes.contains(where: name.hasPrefix) && store.compressionDictionaryID(space: space) == nil {
            guard try store.keys(space: space).count >= max(1, dictionaryMinimumValues) else { continue }
            do {
                if try store.trainCompressionDictionary(space: space, maxSize: dictionaryMaxSize) != nil { trained += 1 }
            } catch StoreError.cryptRequired {
                PreferencesLog.info("no dictionary for \(name): it holds custom-crypt values")
            }
        }
        return trained
    }
}
