import LogStore

/// The catalog record of a table (FORMAT.md "DAO tables"), in key space `dao.catalog` under
/// the table's lower-cased name (UTF-8):
/// format byte 0x01; u32 big-endian key space of the rows; i64 big-endian AUTOINCREMENT
/// sequence; u32 big-endian count n; n times (u32 big-endian length, UTF-8 SQL text): the
/// CREATE TABLE statement, then one CREATE INDEX statement per explicit index.
/// Format byte 0x02 (a table with triggers, Engine/Triggers.swift): the same layout, the texts
/// then go on with one CREATE TRIGGER statement per trigger, in creation order. A table without
/// triggers is still written as 0x01, so stores without triggers stay readable by older builds.
enum CatalogCodec {
    static let formatVersion: UInt8 = 1
    static let formatWithTriggers: UInt8 = 2

    static func encode(_ table: TableState) -> [UInt8] {
        // TEMP triggers live in memory only.
        let triggers = table.triggers.filter { !$0.temporary }
        var out: [UInt8] = [triggers.isEmpty ? formatVersion : formatWithTriggers]
        appendBigEndian(UInt64(table.space), bytes: 4, to: &out)
        appendBigEndian(UInt64(bitPattern: table.sequence), bytes: 8, to: &out)
        let definition = table.definition
        var texts = [definition.createSQL]
        for index in definition.indexes where !index.isConstraint { texts.append(definition.createIndexSQL(index)) }
        texts.append(contentsOf: triggers.map(\.sql))
        appendBigEndian(UInt64(texts.count), bytes: 4, to: &out)
        for text in texts {
            appendBigEndian(UInt64(text.utf8.count), bytes: 4, to: &out)
            out.append(contentsOf: text.utf8)
        }
        return out
    }

    struct Record {
        var space: LogStore.KeySpace
        var sequence: Int64
        var statements: [String]
    }

    static func decode(_ bytes: [UInt8], name: String) throws -> Record {
        func corrupt(_ why: String) -> StoreError { .corrupt("DAO catalog record of table \(name): \(why)") }
        guard bytes.first == formatVersion || bytes.first == formatWithTriggers else { throw corrupt("unknown format \(bytes.first.map(String.init) ?? "none")") }
        var position = 1
        func read(_ count: Int) throws -> UInt64 {
            guard position + count <= bytes.count else { throw corrupt("truncated at byte \(position)") }
            var value: UInt64 = 0
            for i in 0..<count { value = value << 8 | UInt64(bytes[position + i]) }
            position += count
            return value
        }
        let space = LogStore.KeySpace(try read(4))
        let sequence = Int64(bitPattern: try read(8))
        let count = try read(4)
        var statements: [String] = []
        for _ in 0..<count {
            let length = Int(try read(4))
            guard position + length <= bytes.count else { throw corrupt("truncated at byte \(position)") }
            statements.append(String(decoding: bytes[position..<position + length], as: UTF8.self))
            position += length
        }
        return Record(space: space, sequence: sequence, statements: statements)
    }

    static func appendBigEndian(_ value: UInt64, bytes: Int, to out: inout [UInt8]) {
        for i in stride(from: bytes - 1, through: 0, by: -1) { out.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) }
    }
}
