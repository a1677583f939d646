import CZstd

/// A trained zstd dictionary, ready for compressing and decompressing (FORMAT.md,
/// "Compression dictionaries"). Its id is the one zstd writes into every frame made with it,
/// which is how a reader finds the dictionary a value needs.
final class ZstdDictionary: @unchecked Sendable {
    let id: UInt32
    let bytes: [UInt8]
    private let compressionDictionary: OpaquePointer
    private let decompressionDictionary: OpaquePointer

    /// - Throws: `corrupt` when `bytes` is not a zstd dictionary with an id.
    init(bytes: [UInt8], level: Int32) throws {
        let id = bytes.withUnsafeBytes { ZDICT_getDictID($0.baseAddress, $0.count) }
        guard id != 0,
              let cdict = bytes.withUnsafeBytes({ ZSTD_createCDict($0.baseAddress, $0.count, level) }) else {
            throw StoreError.corrupt("not a zstd dictionary with an id (\(bytes.count) bytes)")
        }
        guard let ddict = bytes.withUnsafeBytes({ ZSTD_createDDict($0.baseAddress, $0.count) }) else {
            ZSTD_freeCDict(cdict)
            throw StoreError.corrupt("zstd dictionary \(id) cannot be loaded")
        }
        self.id = id
        self.bytes = bytes
        compressionDictionary = cdict
        decompressionDictionary = ddict
    }

    deinit {
        ZSTD_freeCDict(compressionDictionary)
        ZSTD_freeDDict(decompressionDictionary)
    }

    /// Trains a dictionary of at most `maxSize` bytes from `samples`; nil when zstd finds too
    /// little to learn from (too few or too small samples).
    static func train(samples: [[UInt8]], maxSize: Int, level: Int32) throws -> ZstdDictionary? {
        guard samples.count >= 8 else { return nil }
        var joined: [UInt8] = []
        var sizes: [Int] = []
        for sample in samples where !sample.isEmpty {
            joined += sample
            sizes.append(sample.count)
        }
        var buffer = [UInt8](repeating: 0, count: maxSize)
        let size = buffer.withUnsafeMutableBytes { out in
            joined.withUnsafeBytes { input in
                sizes.withUnsafeBufferPointer { sizeList in
                    ZDICT_trainFromBuffer(out.baseAddress, out.count, input.baseAddress, sizeList.baseAddress, UInt32(sizeList.count))
                }
            }
        }
        guard ZDICT_isError(size) == 0 else { return nil }
        return try ZstdDictionary(bytes: Array(buffer[..<size]), level: level)
    }

    /// The compressed frame of `input` made with this dictionary, or nil when not smaller.
    func compress(_ input: UnsafeRawBufferPointer, with codec: ZstdCodec) -> [UInt8]? {
        codec.compress(input, dictionary: compressionDictionary)
    }

    func decompress(_ frame: UnsafeRawBufferPointer, rawLength: Int, with codec: ZstdCodec, what: @autoclosure () -> String) throws -> [UInt8] {
        try codec.decompress(frame, rawLength: rawLength, dictionary: decompressionDictionary, what: what())
    }
}
