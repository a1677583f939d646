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
    static let formatVersion: UInt32 = 2

    /// One table's part of a mapped file: where its rowids and index entries are (byte offsets
    /// in the file), checked by `decode` so they can be served in place.
    struct Table {
        var space: UInt32
        /// The table's catalog key (its lower-cased name).
        var name: String
        /// Offset of the rowids (8 bytes each, little-endian, ascending) and their count.
        var rowidsOffset: Int
        var rowidCount: Int
        /// Per index: its name, the offset of its entries' end offsets (4 bytes each), of its
        /// entries' bytes, and the entry count.
        var indexes: [(name: String, endsOffset: Int, arenaOffset: Int, count: Int)]
    }

    /// Writes the file for `tables`, stamped with `stamp`, to `file` from offset 0, through a
    /// buffer of about 1 MiB (the file is never built whole in memory: memory stays flat
    /// whatever the table sizes). False, writing nothing, when an index's entries exceed the u32
    /// offsets (4 GiB): that store then stays without a checkpoint.
    /// - Throws: `StoreError` from writing the file.
    static func write(stamp: UInt64, tables: [TableState], to file: SystemFile) throws -> Bool {
        for table in tables {
            for index in table.indexes {
                let total = index.entries.chunks.reduce(UInt64(0)) { $0 + UInt64($1.withAllBytes { $0.count }) }
                guard total <= UInt64(UInt32.max) else { return false }
            }
        }
        var out = BufferedWriter(file: file)
        out.append(magic)
        out.append32(formatVersion)
        out.append64(stamp)
        out.append32(UInt32(tables.count))
        for table in tables {
            out.append32(table.space)
            let catalogKey = Array(table.name.lowercased().utf8)
            out.append32(UInt32(catalogKey.count))
            out.append(catalogKey)
            out.append64(UInt64(table.rowids.count))
            for chunk in table.rowids.chunks {
                for rowid in chunk { out.append64(UInt64(bitPattern: rowid)) }
                try out.flushIfFull()
            }
            out.append32(UInt32(table.indexes.count))
            for index in table.indexes {
                let name = Array(index.schema.name.utf8)
                out.append32(UInt32(name.count))
                out.append(name)
                let total = index.entries.chunks.reduce(UInt64(0)) { $0 + UInt64($1.withAllBytes { $0.count }) }
                out.append64(UInt64(index.entries.count))
                out.append64(total)
                var base: UInt32 = 0
                for chunk in index.entries.chunks {
                    for i in 0..<chunk.entryCount { out.append32(base + UInt32(chunk.end(i))) }
                    base += UInt32(chunk.withAllBytes { $0.count })
                    try out.flushIfFull()
                }
                for chunk in index.entries.chunks {
                    chunk.withAllBytes { out.append($0) }
                    try out.flushIfFull()
                }
            }
        }
        try out.finish()
        return true
    }

    /// Appends to a file through a buffer, keeping the CRC-32C of everything written; `finish`
    /// writes the CRC last.
    private struct BufferedWriter {
        let file: SystemFile
        var buffer: [UInt8] = []
        var offset = 0
        var crc: UInt32 = 0
        static let limit = 1 << 20

        init(file: SystemFile) {
            self.file = file
            buffer.reserveCapacity(Self.limit + 4096)
        }

        mutating func append(_ bytes: [UInt8]) { buffer.append(contentsOf: bytes) }
        mutating func append(_ bytes: UnsafeRawBufferPointer) { buffer.append(contentsOf: bytes) }

        mutating func append32(_ value: UInt32) {
            withUnsafeBytes(of: value.littleEndian) { buffer.append(contentsOf: $0) }
        }

        mutating func append64(_ value: UInt64) {
            withUnsafeBytes(of: value.littleEndian) { buffer.append(contentsOf: $0) }
        }

        mutating func flushIfFull() throws {
            if buffer.count >= Self.limit { try flush() }
        }

        mutating func flush() throws {
            guard !buffer.isEmpty else { return }
            crc = buffer.withUnsafeBytes { cs_crc32c_extend(crc, $0.baseAddress, $0.count) }
            try file.write(buffer, at: offset)
            offset += buffer.count
            buffer.removeAll(keepingCapacity: true)
        }

        mutating func finish() throws {
            try flush()
            append32(crc)
            try file.write(buffer, at: offset)
            buffer = []
        }
    }

    /// Checks a mapped file and says where its parts are; throws `corrupt` saying what is
    /// wrong. Reads every byte once (the checksum, the rowid order and every entry offset),
    /// copies none: the parts are served in place afterwards. O(file size).
    static func decode(_ raw: UnsafeRawBufferPointer) throws -> (stamp: UInt64, tables: [Table]) {
        guard raw.count >= 28 else { throw StoreError.corrupt("\(name): \(raw.count) bytes, too short") }
        let body = raw.count - 4
        let crc = cs_crc32c_extend(0, raw.baseAddress, body)
        var reader = Reader(raw: raw, position: body)
        guard try reader.u32() == crc else { throw StoreError.corrupt("\(name): checksum mismatch") }
        reader = Reader(raw: UnsafeRawBufferPointer(rebasing: raw[0..<body]), position: 0)
        guard Array(try reader.bytes(8)) == magic else { throw StoreError.corrupt("\(name): bad magic") }
        let version = try reader.u32()
        guard version == formatVersion else { throw StoreError.corrupt("\(name): format version \(version), expected \(formatVersion)") }
        let stamp = try reader.u64()
        var tables: [Table] = []
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
            var indexes: [(String, Int, Int, Int)] = []
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
                indexes.append((String(decoding: nameBytes, as: UTF8.self), endsOffset, arenaOffset, entries))
            }
            tables.append(Table(space: space, name: tableName, rowidsOffset: rowidsOffset, rowidCount: count, indexes: indexes))
        }
        guard reader.position == body else { throw StoreError.corrupt("\(name): \(body - reader.position) bytes after the last table") }
        return (stamp, tables)
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
        mutating func count(_ unit: Int) throws -> Int {
            let value = unit == 1 ? UInt64(try u32()) : try u64()
            guard value <= UInt64(raw.count - position) / UInt64(unit) else {
                throw StoreError.corrupt("\(IndexCheckpointFile.name): count \(value) at byte \(position) exceeds the file")
            }
            return Int(value)
        }
    }
}
