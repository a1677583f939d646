import LogStore

/// The catalog record of the views (FORMAT.md "DAO views"): key `sqlite_views` in key space
/// `dao.catalog`; format byte 0x01, u32 big-endian count n, n times (u32 big-endian length,
/// UTF-8 SQL text of the `CREATE VIEW` statement), views in name order.
enum ViewCatalog {
    static let key = Array("sqlite_views".utf8)
    static let formatVersion: UInt8 = 1

    static func encode(_ texts: [String]) -> [UInt8] {
        var out: [UInt8] = [formatVersion]
        CatalogCodec.appendBigEndian(UInt64(texts.count), bytes: 4, to: &out)
        for text in texts {
            CatalogCodec.appendBigEndian(UInt64(text.utf8.count), bytes: 4, to: &out)
            out.append(contentsOf: text.utf8)
        }
        return out
    }

    /// - Throws: `StoreError.corrupt` naming the record and the byte where it goes wrong.
    static func decode(_ bytes: [UInt8]) throws -> [String] {
        func corrupt(_ why: String) -> StoreError { .corrupt("DAO views record: \(why)") }
        guard bytes.first == formatVersion else { throw corrupt("unknown format \(bytes.first.map(String.init) ?? "none")") }
        var position = 1
        func read(_ count: Int) throws -> Int {
            guard position + count <= bytes.count else { throw corrupt("truncated at byte \(position)") }
            var value = 0
            for i in 0..<count { value = value << 8 | Int(bytes[position + i]) }
            position += count
            return value
        }
        var texts: [String] = []
        for _ in 0..<(try read(4)) {
            let length = try read(4)
            guard position + length <= bytes.count else { throw corrupt("truncated at byte \(position)") }
            texts.append(String(decoding: bytes[position..<position + length], as: UTF8.self))
            position += length
        }
        guard position == bytes.count else { throw corrupt("\(bytes.count - position) bytes after the last view") }
        return texts
    }
}
