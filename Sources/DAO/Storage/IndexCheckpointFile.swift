import CChecksum
import Foundation
import LogStore

/// The index checkpoint file `dao-indexes` in the store's directory (FORMAT.md "DAO index
/// checkpoint"): every table's rowid order and index entries as of one checkpoint, so attach
/// can skip reading the rows. Derived data: whatever is wrong with it, attach rebuilds from
/// the rows.
enum IndexCheckpointFile {
    static let name = "dao-indexes"
    static let magic = Array("USDAOIDX".utf8)
    /// The version written; version 2 files (one checksum over the whole file) are still read.
    static let formatVersion: UInt32 = 3
    /// Rowids per block and index entries per block (version 3; version 2 files are served in
    /// chunks of the same sizes). Each block is one chunk of `SortedChunks`/`KeyChunks`.
    static let rowidsPerBlock = 384
    static let entriesPerBlock = 192

    /// One table's part of a mapped file: where its rowids and index entries are (byte offsets
    /// in the file), checked by `decode` so they can be served in place, and the number of its
    /// first block (rowids, then each index's entries: FORMAT.md's block order).
    struct Table {
        var space: UInt32
        /// The table's catalog key (its lower-cased name).
        var name: String
        /// Offset of the rowids (8 bytes each, little-endian, ascending) and their count.
        var rowidsOffset: Int
        var rowidCount: Int
        var firstBlock: Int
        var indexes: [Index]
    }

    /// One index's part: its name, the offset of its entries' end offsets (4 bytes each), of
    /// its entries' bytes and their length, the entry count, and the number of its first block.
    struct Index {
        var name: String
        var endsOffset: Int
        var arenaOffset: Int
        var arenaLength: Int
        var count: Int
        var firstBlock: Int
    }

    static func blocks(_ count: Int, _ perBlock: Int) -> Int { (count + perBlock - 1) / perBlock }

    /// Writes a version 3 file for `tables`, stamped with `stamp`, to `file` from offset 0:
    /// the metadata (its size is known from the tables) is written last, at offset 0, once the
    /// data's block checksums are known; the data goes through a buffer of about 1 MiB (the file
    /// is never built whole in memory: memory stays flat whatever the table sizes). False,
    /// writing nothing, when an index's entries exceed the u32 offsets (4 GiB): that store then
    /// stays without a checkpoint.
    /// - Throws: `StoreError` from writing the file.
    static func write(stamp: UInt64, tables: [TableState], to file: SystemFile) throws -> Bool {
        var arenaLengths: [[UInt64]] = []
        for table in tables {
            arenaLengths.append(table.indexes.map { index in
                index.entries.chunks.reduce(UInt64(0)) { $0 + UInt64($1.withAllBytes { $0.count }) }
            })
            for total in arenaLengths[arenaLengths.count - 1] where total > UInt64(UInt32.max) { return false }
        }
        // The metadata, with zeros where the block checksums go.
        var meta: [UInt8] = []
        func put32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { meta.append(contentsOf: $0) } }
        func put64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { meta.append(contentsOf: $0) } }
        meta.append(contentsOf: magic)
        put32(formatVersion)
        put64(stamp)
        put32(0)   // the metadata length, set below
        put32(UInt32(rowidsPerBlock))
        put32(UInt32(entriesPerBlock))
        put32(UInt32(tables.count))
        var blockCount = 0
        for (t, table) in tables.enumerated() {
            put32(table.space)
            let catalogKey = Array(table.name.lowercased().utf8)
            put32(UInt32(catalogKey.count))
            meta.append(contentsOf: catalogKey)
            put64(UInt64(table.rowids.count))
            blockCount += blocks(table.rowids.count, rowidsPerBlock)
            put32(UInt32(table.indexes.count))
            for (i, index) in table.indexes.enumerated() {
                let name = Array(index.schema.name.utf8)
                put32(UInt32(name.count))
                meta.append(contentsOf: name)
                put64(UInt64(index.entries.count))
                put64(arenaLengths[t][i])
                blockCount += blocks(index.entries.count, entriesPerBlock)
            }
        }
        let checksumsAt = meta.count
        meta.append(contentsOf: [UInt8](repeating: 0, count: 4 * blockCount + 4))
        let metadataLength = meta.count
        var checksums: [UInt32] = []
        checksums.reserveCapacity(blockCount)

        var out = BufferedWriter(file: file, offset: metadataLength)
        for table in tables {
            // Rowids: a block's bytes are gathered, checksummed and appended at once.
            var block: [UInt64] = []
            block.reserveCapacity(rowidsPerBlock)
            func flushRowids() {
                block.withUnsafeBytes { bytes in
                    checksums.append(cs_crc32c_extend(0, bytes.baseAddress, bytes.count))
                    out.append(bytes)
                }
                block.removeAll(keepingCapacity: true)
            }
            for chunk in table.rowids.chunks {
                for rowid in chunk {
                    block.append(UInt64(bitPattern: rowid).littleEndian)
                    if block.count == rowidsPerBlock { flushRowids() }
                }
                try out.flushIfFull()
            }
            if !block.isEmpty { flushRowids() }
            for index in table.indexes {
                // A block's checksum covers its end offsets, then its entries' bytes: the first
                // pass writes the offsets, the second continues each block's CRC over its bytes,
                // a run of entries (inside one chunk, inside one block) at a time.
                var endsCRCs: [UInt32] = []
                var ends: [UInt32] = []
                ends.reserveCapacity(entriesPerBlock)
                func flushEnds() {
                    ends.withUnsafeBytes { bytes in
                        endsCRCs.append(cs_crc32c_extend(0, bytes.baseAddress, bytes.count))
                        out.append(bytes)
                    }
                    ends.removeAll(keepingCapacity: true)
                }
                var base: UInt32 = 0
                for chunk in index.entries.chunks {
                    for i in 0..<chunk.entryCount {
                        ends.append((base + UInt32(chunk.end(i))).littleEndian)
                        if ends.count == entriesPerBlock { flushEnds() }
                    }
                    base += UInt32(chunk.withAllBytes { $0.count })
                    try out.flushIfFull()
                }
                if !ends.isEmpty { flushEnds() }
                var blockNumber = 0, inBlock = 0
                var crc = endsCRCs.first ?? 0
                for chunk in index.entries.chunks {
                    var i = 0
                    while i < chunk.entryCount {
                        let run = min(chunk.entryCount - i, entriesPerBlock - inBlock)
                        let from = chunk.start(i), to = chunk.end(i + run - 1)
                        chunk.withAllBytes { bytes in
                            let slice = UnsafeRawBufferPointer(rebasing: bytes[from..<to])
                            crc = cs_crc32c_extend(crc, slice.baseAddress, slice.count)
                            out.append(slice)
                        }
                        i += run
                        inBlock += run
                        if inBlock == entriesPerBlock {
                            checksums.append(crc)
                            blockNumber += 1
                            crc = blockNumber < endsCRCs.count ? endsCRCs[blockNumber] : 0
                            inBlock = 0
                        }
                    }
                    try out.flushIfFull()
                }
                if inBlock > 0 { checksums.append(crc) }
            }
        }
        try out.flush()
        guard checksums.count == blockCount else {
            throw StoreError.corrupt("\(name): \(checksums.count) blocks written, \(blockCount) counted")
        }
        withUnsafeBytes(of: UInt32(metadataLength).littleEndian) { meta.replaceSubrange(20..<24, with: $0) }
        for (j, crc) in checksums.enumerated() {
            withUnsafeBytes(of: crc.littleEndian) { meta.replaceSubrange((checksumsAt + 4 * j)..<(checksumsAt + 4 * j + 4), with: $0) }
        }
        let crc = meta.withUnsafeBytes { cs_crc32c_extend(0, $0.baseAddress, metadataLength - 4) }
        withUnsafeBytes(of: crc.littleEndian) { meta.replaceSubrange((metadataLength - 4)..<metadataLength, with: $0) }
        try file.write(meta, at: 0)
        return true
    }

    /// Appends to a file from an offset through a buffer.
    private struct BufferedWriter {
        let file: SystemFile
        var buffer: [UInt8] = []
        var offset: Int
        static let limit = 1 << 20

        init(file: SystemFile, offset: Int) {
            self.file = file
            self.offset = offset
            buffer.reserveCapacity(Self.limit + 4096)
        }

        mutating func append(_ bytes: UnsafeRawBufferPointer) { buffer.append(contentsOf: bytes) }

        mutating func flushIfFull() throws {
            if buffer.count >= Self.limit { try flush() }
        }

        mutating func flush() throws {
            guard !buffer.isEmpty else { return }
            try file.write(buffer, at: offset)
            offset += buffer.count
            buffer.removeAll(keepingCapacity: true)
        }
    }

    /// Checks a mapped file's layout and says where its parts are; throws `corrupt` saying
    /// what is wrong. Version 3: reads the metadata only (O(tables + blocks)); each block is
    /// checked when a statement first touches it (`CheckpointBlocks`). Version 2: reads every
    /// byte once (the checksum, the rowid order and every entry offset). Copies nothing: the
    /// parts are served in place afterwards.
    static func decode(_ file: MappedFile) throws -> MappedCheckpoint {
        let raw = file.bytes
        guard raw.count >= 12 else { throw StoreError.corrupt("\(name): \(raw.count) bytes, too short") }
        var reader = Reader(raw: raw, position: 0)
        guard Array(try reader.bytes(8)) == magic else { throw StoreError.corrupt("\(name): bad magic") }
        let version = try reader.u32()
        switch version {
        case 2: return try decodeVersion2(file)
        case 3: return try decodeVersion3(file)
        default: throw StoreError.corrupt("\(name): format version \(version), expected 2 or 3")
        }
    }

    private static func decodeVersion3(_ file: MappedFile) throws -> MappedCheckpoint {
        let raw = file.bytes
        guard raw.count >= 40 else { throw StoreError.corrupt("\(name): \(raw.count) bytes, too short") }
        var reader = Reader(raw: raw, position: 12)
        let stamp = try reader.u64()
        let metadataLength = Int(try reader.u32())
        guard metadataLength >= 40, metadataLength <= raw.count else { throw StoreError.corrupt("\(name): metadata length \(metadataLength) outside the file") }
        let crc = cs_crc32c_extend(0, raw.baseAddress, metadataLength - 4)
        guard MappedInts.u32(file.base + metadataLength - 4, 0) == crc else {
            throw StoreError.corrupt("\(name): metadata checksum mismatch")
        }
        reader = Reader(raw: UnsafeRawBufferPointer(rebasing: raw[0..<(metadataLength - 4)]), position: 24)
        let perRowBlock = Int(try reader.u32()), perEntryBlock = Int(try reader.u32())
        guard perRowBlock == rowidsPerBlock, perEntryBlock == entriesPerBlock else {
            throw StoreError.corrupt("\(name): blocks of \(perRowBlock) rowids and \(perEntryBlock) entries, expected \(rowidsPerBlock) and \(entriesPerBlock)")
        }
        var tables: [Table] = []
        var data = metadataLength
        var blockCount = 0
        /// Claims `count` items of `unit` bytes of the data: their offset.
        func claim(_ count: Int, _ unit: Int) throws -> Int {
            guard count <= (raw.count - data) / unit else { throw StoreError.corrupt("\(name): data past the end of the file") }
            defer { data += count * unit }
            return data
        }
        for _ in 0..<(try reader.u32()) {
            let space = try reader.u32()
            let tableName = String(decoding: try reader.bytes(try reader.count(1)), as: UTF8.self)
            let count = try reader.count(0)
            let rowidsOffset = try claim(count, 8)
            let firstBlock = blockCount
            blockCount += blocks(count, rowidsPerBlock)
            var indexes: [Index] = []
            for _ in 0..<(try reader.u32()) {
                let indexName = String(decoding: try reader.bytes(try reader.count(1)), as: UTF8.self)
                let entries = try reader.count(0)
                let total = try reader.count(0)
                guard entries == count, total >= entries * 8, total <= Int(UInt32.max) else {
                    throw StoreError.corrupt("\(name): index \(indexName) of space \(space): \(entries) entries of \(total) bytes for \(count) rows")
                }
                let endsOffset = try claim(entries, 4)
                let arenaOffset = try claim(total, 1)
                indexes.append(Index(name: indexName, endsOffset: endsOffset, arenaOffset: arenaOffset, arenaLength: total,
                                     count: entries, firstBlock: blockCount))
                blockCount += blocks(entries, entriesPerBlock)
            }
            tables.append(Table(space: space, name: tableName, rowidsOffset: rowidsOffset, rowidCount: count, firstBlock: firstBlock, indexes: indexes))
        }
        guard blockCount <= (metadataLength - 4 - reader.position) / 4, reader.position + 4 * blockCount == metadataLength - 4 else {
            throw StoreError.corrupt("\(name): \(blockCount) block checksums do not fill the metadata")
        }
        guard data == raw.count else { throw StoreError.corrupt("\(name): \(raw.count - data) bytes after the last table") }
        let blocks = CheckpointBlocks(file: file, count: blockCount, checksums: file.base + reader.position)
        return MappedCheckpoint(file: file, stamp: stamp, tables: tables, blocks: blocks)
    }

    private static func decodeVersion2(_ file: MappedFile) throws -> MappedCheckpoint {
        let raw = file.bytes
        guard raw.count >= 28 else { throw StoreError.corrupt("\(name): \(raw.count) bytes, too short") }
        let body = raw.count - 4
        let crc = cs_crc32c_extend(0, raw.baseAddress, body)
        var reader = Reader(raw: raw, position: body)
        guard try reader.u32() == crc else { throw StoreError.corrupt("\(name): checksum mismatch") }
        reader = Reader(raw: UnsafeRawBufferPointer(rebasing: raw[0..<body]), position: 12)
        let stamp = try reader.u64()
        var tables: [Table] = []
        var blockCount = 0
        for _ in 0..<(try reader.u32()) {
            let space = try reader.u32()
            let tableName = String(decoding: try reader.bytes(try reader.count(1)), as: UTF8.self)
            let count = try reader.count(8)
            let rowidsOffset = reader.position
            let rowids = try reader.bytes(count * 8)
            if let base = rowids.baseAddress, count > 1 {
                var previous = Int64(bitPattern: MappedInts.u64(base, 0))
                for i in 1..<count {
                    let rowid = Int64(bitPattern: MappedInts.u64(base, i))
                    if previous >= rowid { throw StoreError.corrupt("\(name): rowids of space \(space) out of order") }
                    previous = rowid
                }
            }
            let firstBlock = blockCount
            blockCount += blocks(count, rowidsPerBlock)
            var indexes: [Index] = []
            for _ in 0..<(try reader.u32()) {
                let nameBytes = try reader.bytes(try reader.count(1))
                let entries = try reader.count(4)
                let total = try reader.u64()
                let endsOffset = reader.position
                let ends = try reader.bytes(entries * 4)
                var last: UInt64 = 0
                if let base = ends.baseAddress {
                    for i in 0..<entries {
                        let end = UInt64(MappedInts.u32(base, i))
                        // Every entry ends with its 8-byte row key.
                        guard end >= last + 8, end <= total else { throw StoreError.corrupt("\(name): bad entry offsets in space \(space)") }
                        last = end
                    }
                }
                guard last == total, entries == count else { throw StoreError.corrupt("\(name): bad entry offsets in space \(space)") }
                let arenaOffset = reader.position
                _ = try reader.bytes(Int(total))
                indexes.append(Index(name: String(decoding: nameBytes, as: UTF8.self), endsOffset: endsOffset, arenaOffset: arenaOffset,
                                     arenaLength: Int(total), count: entries, firstBlock: blockCount))
                blockCount += blocks(entries, entriesPerBlock)
            }
            tables.append(Table(space: space, name: tableName, rowidsOffset: rowidsOffset, rowidCount: count, firstBlock: firstBlock, indexes: indexes))
        }
        guard reader.position == body else { throw StoreError.corrupt("\(name): \(body - reader.position) bytes after the last table") }
        // Checked whole above: every block starts out sound.
        return MappedCheckpoint(file: file, stamp: stamp, tables: tables, blocks: CheckpointBlocks(file: file, count: blockCount, checksums: nil))
    }

    private struct Reader {
        let raw: UnsafeRawBufferPointer
        var position: Int

        mutating func bytes(_ n: Int) throws -> UnsafeRawBufferPointer {
            guard n >= 0, n <= raw.count - position else { throw StoreError.corrupt("\(IndexCheckpointFile.name): truncated at byte \(position)") }
            defer { position += n }
            return UnsafeRawBufferPointer(rebasing: raw[position..<(position + n)])
        }

        mutating func u32() throws -> UInt32 {
            let b = try bytes(4)
            return UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16 | UInt32(b[3]) << 24
        }

        mutating func u64() throws -> UInt64 {
            let low = UInt64(try u32())
            return low | UInt64(try u32()) << 32
        }

        /// A u64 (or u32 when `unit` is 1: a name length) count of items of `unit` bytes that
        /// must fit in what is left.
        /// With `unit` 0: a u64 bounded only by Int (a count of items stored elsewhere).
        mutating func count(_ unit: Int) throws -> Int {
            let value = unit == 1 ? UInt64(try u32()) : try u64()
            if unit == 0 {
                guard value <= UInt64(Int.max / 8) else { throw StoreError.corrupt("\(IndexCheckpointFile.name): count \(value) at byte \(position) too large") }
                return Int(value)
            }
            guard value <= UInt64(raw.count - position) / UInt64(unit) else {
                throw StoreError.corrupt("\(IndexCheckpointFile.name): count \(value) at byte \(position) exceeds the file")
            }
            return Int(value)
        }
    }
}
