import Foundation

/// A statement's SQL as the key of the parsed-statement cache: equal when the UTF-8 bytes are
/// equal. `String`'s own `==` and hash use canonical equivalence, so "é" written precomposed
/// and decomposed would share one cache entry, and the second statement would run with the
/// first one's literals: other text bytes than SQLite stores (text is bytes, issue 25).
struct StatementText: Hashable {
    let sql: String

    init(_ sql: String) { self.sql = sql }

    static func == (left: StatementText, right: StatementText) -> Bool {
        var left = left.sql, right = right.sql
        // Native strings hand out their UTF-8 in place; the two buffers are then compared
        // with one memcmp (bridged strings are made native first, once).
        return left.withUTF8 { a in right.withUTF8 { b in a.count == b.count && (a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0) } }
    }

    func hash(into hasher: inout Hasher) {
        var sql = sql
        sql.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
