import LogStore

/// The changes since the index checkpoint, as commits record them (FORMAT.md "DAO index
/// checkpoint", the journal): each commit that changes a row for the first time since the
/// checkpoint adds, in its own write batch, a record naming that row and, when the row existed
/// at the checkpoint, its index entries as the checkpoint holds them. An attach after a crash
/// loads the checkpoint file, takes those entries out, and puts in the entries of the named
/// rows as they are now: O(rows changed since the checkpoint), not O(rows).
///
/// A row is named once (its first change); later changes of it need no record, since the
/// attach reads its current version anyway. Value type: the database owns one per live
/// checkpoint and replaces it after each commit that wrote a record.
struct CheckpointJournal {
    /// The stamp of the checkpoint file the records belong to (their keys start with it).
    let stamp: UInt64
    /// The sequence number of the next record.
    var nextSequence: UInt64 = 0
    /// Per table key space: the rows named so far (a `RowSlots` used as a set, so that the
    /// ascending rowids of inserts cost no hashing).
    private var named: [LogStore.KeySpace: RowSlots] = [:]
    /// How many rows are named, over all tables.
    private(set) var namedCount = 0

    init(stamp: UInt64) { self.stamp = stamp }

    /// The rows of `space` named so far (nil: none).
    func namedRows(in space: LogStore.KeySpace) -> RowSlots? { named[space] }

    /// Records that `rows` are now named (after the commit that named them was written).
    mutating func add(_ rows: JournalRecord) {
        for table in rows.tables {
            Self.name(table.rows.lazy.map { $0.rowid }, in: &named[table.space, default: RowSlots()], count: &namedCount)
        }
        nextSequence += 1
    }

    /// Records that the rows of `writer`'s record are now named (after the commit that wrote
    /// it).
    mutating func add(_ writer: JournalRecordWriter) {
        // The writer's rows come table by table: one dictionary access a table.
        var start = 0
        let rows = writer.rows
        while start < rows.count {
            let space = rows[start].space
            var end = start
            while end < rows.count, rows[end].space == space { end += 1 }
            Self.name(rows[start..<end].lazy.map { $0.rowid }, in: &named[space, default: RowSlots()], count: &namedCount)
            start = end
        }
        nextSequence += 1
    }

    private static func name<Rowids: Sequence<Int64>>(_ rowids: Rowids, in set: inout RowSlots, count: inout Int) {
        for rowid in rowids where set[rowid] == nil {
            set[rowid] = 0
            count += 1
        }
    }

    /// Rows named at most before a commit drops the journal instead (the checkpoint record
    /// goes, and the next attach reads the rows): bounds the memory of `named` and the work
    /// of a replay.
    static let defaultLimit = 1 << 17

    /// Bytes a journal record holds at most (rows with long indexed values): past it the commit
    /// drops the journal instead. Far below a record value's 1 GiB limit.
    static let recordByteLimit = 16 << 20

    /// The key of record `sequence`: `j`, the stamp, the sequence, both big-endian, so the
    /// records of one checkpoint sort in the order they were written.
    static func key(stamp: UInt64, sequence: UInt64) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 17) { buffer, count in
            buffer[0] = keyPrefix
            for i in 0..<8 {
                buffer[1 + i] = UInt8(truncatingIfNeeded: stamp >> UInt64(56 - 8 * i))
                buffer[9 + i] = UInt8(truncatingIfNeeded: sequence >> UInt64(56 - 8 * i))
            }
            count = 17
        }
    }

    /// The first byte of every journal record's key.
    static let keyPrefix = UInt8(ascii: "j")

    /// The prefix of the keys of the records of the checkpoint `stamp`.
    static func keyPrefix(stamp: UInt64) -> [UInt8] {
        var key: [UInt8] = [keyPrefix]
        appendBigEndian(stamp, to: &key)
        return key
    }

    private static func appendBigEndian(_ value: UInt64, to out: inout [UInt8]) {
        for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}

/// One journal record: the rows a commit changed for the first time since the checkpoint, and
/// each one's index entries at the checkpoint (none when the row did not exist then).
struct JournalRecord: Equatable {
    struct Row: Equatable {
        var rowid: Int64
        /// The row's entries in each of the table's indexes (catalog order) as the checkpoint
        /// has them; nil when the checkpoint has no such row.
        var entries: [[UInt8]]?
    }

    struct Table: Equatable {
        var space: LogStore.KeySpace
        var indexCount: Int
        var rows: [Row] = []
    }

    var tables: [Table] = []

    static let formatVersion: UInt8 = 1

    /// The record's value (`JournalRecordWriter`).
    func encoded() -> [UInt8] {
        var writer = JournalRecordWriter()
        for table in tables {
            writer.beginTable(space: table.space, indexCount: table.indexCount)
            for row in table.rows { writer.addRow(row.rowid, entries: row.entries) }
            writer.endTable()
        }
        return writer.bytes
    }

    /// Decodes a record's value.
    /// - Throws: `JournalRecord.Malformed` saying where the bytes stop making sense.
    static func decode(_ bytes: [UInt8]) throws -> JournalRecord {
        var reader = Reader(bytes: bytes)
        guard try reader.byte() == formatVersion else { throw Malformed(reason: "version \(bytes[0]) not understood") }
        var record = JournalRecord()
        for _ in 0..<(try reader.u32()) {
            var table = Table(space: try reader.u32(), indexCount: Int(try reader.u32()))
            let rows = Int(try reader.u32())
            // Each row takes at least 9 bytes: a count beyond what is left is damage, not a
            // reason to reserve memory.
            guard rows <= (bytes.count - reader.position) / 9 else { throw Malformed(reason: "row count \(rows) at byte \(reader.position - 4)") }
            table.rows.reserveCapacity(rows)
            for _ in 0..<rows {
                let rowid = Int64(bitPattern: try reader.u64())
                switch try reader.byte() {
                case 0:
                    table.rows.append(Row(rowid: rowid, entries: nil))
                case 1:
                    var entries: [[UInt8]] = []
                    for _ in 0..<table.indexCount { entries.append(try reader.take(Int(try reader.u32()))) }
                    table.rows.append(Row(rowid: rowid, entries: entries))
                case let flag:
                    throw Malformed(reason: "row flag \(flag) at byte \(reader.position - 1)")
                }
            }
            record.tables.append(table)
        }
        guard reader.position == bytes.count else { throw Malformed(reason: "\(bytes.count - reader.position) bytes after the last table") }
        return record
    }

    /// A record whose bytes do not decode.
    struct Malformed: Error, CustomStringConvertible {
        let reason: String
        var description: String { "index checkpoint journal record: \(reason)" }
    }

    private struct Reader {
        let bytes: [UInt8]
        var position = 0

        mutating func byte() throws -> UInt8 {
            guard position < bytes.count else { throw Malformed(reason: "ends at byte \(position)") }
            defer { position += 1 }
            return bytes[position]
        }

        mutating func take(_ count: Int) throws -> [UInt8] {
            guard count <= bytes.count - position else { throw Malformed(reason: "an entry of \(count) bytes at byte \(position) passes the end") }
            defer { position += count }
            return Array(bytes[position..<position + count])
        }

        mutating func u32() throws -> UInt32 {
            var value: UInt32 = 0
            for shift in stride(from: 0, to: 32, by: 8) { value |= UInt32(try byte()) << UInt32(shift) }
            return value
        }

        mutating func u64() throws -> UInt64 {
            var value: UInt64 = 0
            for shift in stride(from: 0, to: 64, by: 8) { value |= UInt64(try byte()) << UInt64(shift) }
            return value
        }
    }
}

/// Writes a journal record's value (FORMAT.md): version byte 1; u32 table count; per table u32
/// key space, u32 index count x, u32 row count; per row i64 rowid, u8 1 when it existed at the
/// checkpoint (then x times u32 length and the entry's bytes) or 0. Little-endian. A commit
/// reuses one writer (`reset`), so journaling a row allocates nothing once it has grown.
struct JournalRecordWriter {
    private(set) var bytes: [UInt8] = [JournalRecord.formatVersion, 0, 0, 0, 0]
    /// The rows written, with their tables' key spaces.
    private(set) var rows: [(space: LogStore.KeySpace, rowid: Int64)] = []
    private var tables: UInt32 = 0
    /// Where the table under way keeps its row count, and the count.
    private var rowCountAt = 0
    private var tableRows: UInt32 = 0
    private var space: LogStore.KeySpace = 0

    var isEmpty: Bool { rows.isEmpty }

    /// Back to an empty record, keeping the buffers.
    mutating func reset() {
        // A big commit's buffer is not kept for the database's life.
        bytes.removeAll(keepingCapacity: bytes.capacity <= 1 << 20)
        bytes.append(JournalRecord.formatVersion)
        append(UInt32(0))
        rows.removeAll(keepingCapacity: rows.capacity <= 1 << 16)
        tables = 0
        tableRows = 0
    }

    /// Starts a table (`endTable` ends it).
    mutating func beginTable(space: LogStore.KeySpace, indexCount: Int) {
        self.space = space
        tables += 1
        put(UInt32(tables), at: 1)
        append(space)
        append(UInt32(indexCount))
        rowCountAt = bytes.count
        tableRows = 0
        append(UInt32(0))
    }

    /// Ends the table under way; one given no rows leaves no trace.
    mutating func endTable() {
        guard tableRows == 0 else { return }
        bytes.removeLast(12)
        tables -= 1
        put(tables, at: 1)
    }

    /// Adds a row of the table under way: its entries at the checkpoint, nil when it had none.
    mutating func addRow(_ rowid: Int64, entries: [[UInt8]]?) {
        append(UInt64(bitPattern: rowid))
        if let entries {
            bytes.append(1)
            for entry in entries {
                append(UInt32(entry.count))
                bytes.append(contentsOf: entry)
            }
        } else {
            bytes.append(0)
        }
        tableRows += 1
        put(tableRows, at: rowCountAt)
        rows.append((space, rowid))
    }

    private mutating func append<T: FixedWidthInteger>(_ value: T) {
        // Byte by byte: a generic append(contentsOf:) of the value's bytes costs ~100
        // instructions a call, on the path of every one-row commit after a checkpoint.
        for i in 0..<(T.bitWidth / 8) { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * i))) }
    }

    private mutating func put(_ value: UInt32, at offset: Int) {
        for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> UInt32(8 * i)) }
    }
}
