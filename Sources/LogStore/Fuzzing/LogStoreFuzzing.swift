import CChecksum

/// Entry points for the fuzzers in Fuzz/ (`@_spi(Fuzzing) import LogStore`): each runs one of
/// the engine's readers of untrusted bytes over a fuzzer's input, in memory, the way opening a
/// store would. Not part of the public API.
///
/// Random bytes almost never carry a valid CRC-32C, so a fuzzer would only ever see the
/// checksum reject them. With `fixChecksums`, the entry points first make every checksum in the
/// input right (each record that parses gets its CRC recomputed; a file's trailing CRC is
/// recomputed), so the code behind the checksum is what gets fuzzed.
@_spi(Fuzzing)
public enum LogStoreFuzzing {
    /// Reads `input` as the body of a segment: the scanner (with its resync past corrupt bytes),
    /// the batch assembler, the key bytes of every record, and zstd decompression of compressed
    /// values with the length the record declares. Returns the number of records applied.
    public static func readRecords(_ input: [UInt8], fixChecksums: Bool) -> Int {
        var bytes = input
        guard !bytes.isEmpty else { return 0 }
        if fixChecksums { fixRecordChecksums(&bytes) }
        let codec = ZstdCodec(level: 1)
        return bytes.withUnsafeBytes { raw -> Int in
            guard let base = raw.baseAddress else { return 0 }
            var scanner = SegmentScanner(base: base, limit: raw.count, from: 0)
            var batches = BatchAssembler()
            var applied = 0
            var keyBytes = 0
            while let event = scanner.next() {
                switch event {
                case .record(let offset, let header):
                    for member in batches.add(offset: offset, header: header) {
                        applied += 1
                        let key = UnsafeRawBufferPointer(start: base + member.offset + member.header.keyOffset,
                                                         count: member.header.keyLength)
                        keyBytes &+= key.reduce(0) { $0 &+ Int($1) }
                        if member.header.flags.contains(.compressed), !member.header.flags.contains(.encrypted),
                           !member.header.flags.contains(.customCrypt) {
                            let value = UnsafeRawBufferPointer(start: base + member.offset + member.header.valueOffset,
                                                               count: member.header.valueLength)
                            _ = try? codec.decompress(value, rawLength: member.header.rawLength, what: "fuzz")
                        }
                    }
                case .corrupt:
                    batches.corruption()
                }
            }
            _ = batches.finish()
            return applied + (keyBytes == Int.min ? 1 : 0)
        }
    }

    /// Decodes `input` as an index snapshot file (FORMAT.md "Index snapshot"), building its
    /// keydir. Returns whether it decoded.
    public static func readSnapshot(_ input: [UInt8], fixChecksums: Bool) -> Bool {
        var bytes = input
        if fixChecksums { fixTrailingChecksum(&bytes) }
        return bytes.withUnsafeBytes { raw in
            (try? IndexSnapshot.decode(raw, path: "fuzz")) != nil
        }
    }

    /// Decodes `input` as a segment header and as a compaction commit file. Returns how many of
    /// the two decoded.
    public static func readSmallFiles(_ input: [UInt8], fixChecksums: Bool) -> Int {
        var decoded = 0
        var header = input
        if fixChecksums, header.count >= SegmentHeader.size {
            let crc = header.withUnsafeBytes { cs_crc32c_extend(0, $0.baseAddress, 28) }
            header.withUnsafeMutableBytes { LittleEndian.store32(crc, $0.baseAddress!, 28) }
        }
        if header.count >= SegmentHeader.size,
           (try? header.withUnsafeBytes({ try SegmentHeader.decode($0.baseAddress!, length: $0.count, path: "fuzz") })) != nil {
            decoded += 1
        }
        var commit = input
        if fixChecksums { fixTrailingChecksum(&commit) }
        if (try? CompactionCommit.decode(commit, path: "fuzz")) != nil { decoded += 1 }
        return decoded
    }

    /// Recomputes the CRC of every record that parses, walking the way the scanner would.
    private static func fixRecordChecksums(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            var offset = 0
            while offset < raw.count {
                if let header = RecordCodec.decodeHeader(base, at: offset, limit: raw.count) {
                    let crc = cs_crc32c_extend(0, base + offset + RecordCodec.checksumSize,
                                               header.totalLength - RecordCodec.checksumSize)
                    LittleEndian.store32(crc, base, offset)
                    offset += header.totalLength
                } else {
                    offset += 1
                }
            }
        }
    }

    /// Sets the last four bytes to the CRC-32C of everything before them.
    private static func fixTrailingChecksum(_ bytes: inout [UInt8]) {
        guard bytes.count >= 4 else { return }
        let end = bytes.count - 4
        bytes.withUnsafeMutableBytes { raw in
            let crc = cs_crc32c_extend(0, raw.baseAddress, end)
            LittleEndian.store32(crc, raw.baseAddress!, end)
        }
    }
}
