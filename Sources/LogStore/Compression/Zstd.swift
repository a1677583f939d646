import CZstd

/// zstd compression of record values through the system libzstd, with reused contexts.
///
/// `compress` returns nil when compressing does not pay (the frame would not be smaller), so
/// callers store the value raw. `decompress` never produces more than the length the record
/// declares, so a hostile frame cannot expand past it (no decompression bombs).
final class ZstdCodec: @unchecked Sendable {
    let level: Int32
    private let mutex = Mutex()
    private var compressors: [OpaquePointer] = []
    private var decompressors: [OpaquePointer] = []

    init(level: Int32) {
        self.level = min(max(level, ZSTD_minCLevel()), ZSTD_maxCLevel())
    }

    deinit {
        for context in compressors { ZSTD_freeCCtx(context) }
        for context in decompressors { ZSTD_freeDCtx(context) }
    }

    /// The zstd frame of `input` (made with `dictionary`, a ZSTD_CDict, when given), or nil when
    /// it would not be smaller than `input`.
    func compress(_ input: UnsafeRawBufferPointer, dictionary: OpaquePointer? = nil) -> [UInt8]? {
        guard input.count > 0, !Self.looksIncompressible(input) else { return nil }
        // Only a frame smaller than the input is kept, so the output buffer can stop there:
        // zstd reports "dstSize too small" for incompressible input without extra work.
        let capacity = input.count - 1
        guard let context = takeCompressor() else { return nil }
        defer { mutex.withLock { compressors.append(context) } }
        var output = [UInt8](repeating: 0, count: capacity)
        let size = output.withUnsafeMutableBytes { out in
            if let dictionary {
                return ZSTD_compress_usingCDict(context, out.baseAddress, capacity, input.baseAddress, input.count, dictionary)
            }
            return ZSTD_compressCCtx(context, out.baseAddress, capacity, input.baseAddress, input.count, level)
        }
        guard ZSTD_isError(size) == 0, size < input.count else { return nil }
        output.removeSubrange(size...)
        return output
    }

    /// A cheap guess that `input` is random-looking (already compressed or encrypted): 64
    /// bytes sampled across it, of which random data shows ~57 distinct values and text or
    /// structured data far fewer. Such values are stored raw without trying zstd, which would
    /// cost more than the rest of the put. Short values are always tried.
    static func looksIncompressible(_ input: UnsafeRawBufferPointer) -> Bool {
        guard input.count >= 1024 else { return false }
        var seen = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        var distinct = 0
        let stride = input.count / 64
        for i in 0..<64 {
            let byte = input[i * stride &+ (i &* 7) % stride]
            let bit = UInt64(1) << UInt64(byte & 63)
            switch byte >> 6 {
            case 0: if seen.0 & bit == 0 { seen.0 |= bit; distinct += 1 }
            case 1: if seen.1 & bit == 0 { seen.1 |= bit; distinct += 1 }
            case 2: if seen.2 & bit == 0 { seen.2 |= bit; distinct += 1 }
            default: if seen.3 & bit == 0 { seen.3 |= bit; distinct += 1 }
            }
        }
        return distinct > 48
    }

    /// The dictionary id a frame was made with (0: none).
    static func dictionaryID(of frame: UnsafeRawBufferPointer) -> UInt32 {
        ZSTD_getDictID_fromFrame(frame.baseAddress, frame.count)
    }

    /// Decompresses one frame that must expand to exactly `rawLength` bytes.
    /// - Throws: `StoreError.corrupt(what)` for a bad frame or a length other than `rawLength`.
    func decompress(_ frame: UnsafeRawBufferPointer, rawLength: Int, dictionary: OpaquePointer? = nil,
                    what: @autoclosure () -> String) throws -> [UInt8] {
        let declared = ZSTD_getFrameContentSize(frame.baseAddress, frame.count)
        // ZSTD_CONTENTSIZE_UNKNOWN and _ERROR are the top two values of UInt64.
        guard declared == UInt64(rawLength) else {
            throw StoreError.corrupt("\(what()): zstd frame declares \(declared) bytes, record says \(rawLength)")
        }
        guard let context = takeDecompressor() else { throw StoreError.io(operation: "ZSTD_createDCtx", errno: 12) }
        defer { mutex.withLock { decompressors.append(context) } }
        var output = [UInt8](repeating: 0, count: rawLength)
        let size = output.withUnsafeMutableBytes { out in
            if let dictionary {
                return ZSTD_decompress_usingDDict(context, out.baseAddress, rawLength, frame.baseAddress, frame.count, dictionary)
            }
            return ZSTD_decompressDCtx(context, out.baseAddress, rawLength, frame.baseAddress, frame.count)
        }
        guard ZSTD_isError(size) == 0 else {
            throw StoreError.corrupt("\(what()): zstd: \(String(cString: ZSTD_getErrorName(size)))")
        }
        guard size == rawLength else { throw StoreError.corrupt("\(what()): zstd frame expanded to \(size) bytes, record says \(rawLength)") }
        return output
    }

    private func takeCompressor() -> OpaquePointer? {
        if let context = mutex.withLock({ compressors.popLast() }) { return context }
        return ZSTD_createCCtx()
    }

    private func takeDecompressor() -> OpaquePointer? {
        if let context = mutex.withLock({ decompressors.popLast() }) { return context }
        return ZSTD_createDCtx()
    }
}
