@testable import DAO
import XCTest

/// Indexes serve equality, IN, ranges, prefix LIKE and ORDER BY ... LIMIT: the plan names the
/// index and few rows are visited; results still equal SQLite's.
final class IndexPlannerTests: XCTestCase {
    private func populated() throws -> Differential {
        let d = try Differential()
        d.run(["CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, score INT, tag, grp INT)",
               "CREATE INDEX t_score ON t (score)",
               "CREATE UNIQUE INDEX t_name ON t (name)",
               "CREATE INDEX t_grp_score ON t (grp, score DESC)"])
        try d.database.execute("BEGIN")
        _ = try d.oracle.execute("BEGIN")
        for i in 0..<1000 {
            let sql = "INSERT INTO t (name, score, tag, grp) VALUES (?, ?, ?, ?)"
            let args: [DAOValue] = [.text(String(format: "n%04d", i)), i % 7 == 0 ? .null : .integer(Int64(i % 100)),
                                    i % 3 == 0 ? .text("t\(i)") : .integer(Int64(i)), .integer(Int64(i % 10))]
            try d.database.execute(sql, arguments: args)
            _ = try d.oracle.execute(sql, arguments: args)
        }
        try d.database.execute("COMMIT")
        _ = try d.oracle.execute("COMMIT")
        return d
    }

    private func visits(_ d: Differential, _ sql: String, ordered: Bool = true, plan: String, atMost: Int,
                        file: StaticString = #filePath, line: UInt = #line) {
        d.database.rowsVisited = 0
        d.check(sql, ordered: ordered, file: file, line: line)
        XCTAssertTrue(d.database.lastPlan.hasPrefix(plan), "\(sql): plan \(d.database.lastPlan)", file: file, line: line)
        XCTAssertLessThanOrEqual(d.database.rowsVisited, atMost, "\(sql)", file: file, line: line)
    }

    func testIndexesServePredicates() throws {
        let d = try populated()
        visits(d, "SELECT * FROM t WHERE id = 500", plan: "ROWID LOOKUP", atMost: 1)
        visits(d, "SELECT * FROM t WHERE id IN (5, 7, 2000)", plan: "ROWID LOOKUP", atMost: 2)
        visits(d, "SELECT * FROM t WHERE id BETWEEN 10 AND 19", plan: "ROWID RANGE", atMost: 10)
        visits(d, "SELECT * FROM t WHERE rowid > 990", plan: "ROWID RANGE", atMost: 10)
        visits(d, "SELECT * FROM t WHERE name = 'n0042'", plan: "INDEX 1", atMost: 1)
        visits(d, "SELECT id FROM t WHERE score = 42", ordered: false, plan: "INDEX 0", atMost: 9)
        visits(d, "SELECT id FROM t WHERE score = '42'", ordered: false, plan: "INDEX 0", atMost: 9)
        visits(d, "SELECT id FROM t WHERE score IN (1, 2) ORDER BY id", plan: "INDEX 0", atMost: 18)
        visits(d, "SELECT id FROM t WHERE score > 97 ORDER BY id", plan: "INDEX 0", atMost: 30)
        visits(d, "SELECT id FROM t WHERE score < 2 ORDER BY id", plan: "INDEX 0", atMost: 30)
        visits(d, "SELECT id FROM t WHERE score BETWEEN 10 AND 11 ORDER BY id", plan: "INDEX 0", atMost: 20)
        visits(d, "SELECT id FROM t WHERE name LIKE 'N001%' ORDER BY id", plan: "INDEX 1", atMost: 10)
        visits(d, "SELECT id FROM t WHERE grp = 3 AND score = 43", ordered: false, plan: "INDEX 2", atMost: 10)
        visits(d, "SELECT id FROM t WHERE grp = 3 ORDER BY score DESC LIMIT 3", plan: "INDEX 2", atMost: 3)
        visits(d, "SELECT id, score FROM t ORDER BY score LIMIT 10", plan: "INDEX 0", atMost: 10)
        visits(d, "SELECT id, score FROM t ORDER BY score DESC LIMIT 5 OFFSET 2", plan: "INDEX 0", atMost: 7)
        visits(d, "SELECT id FROM t ORDER BY id DESC LIMIT 3", plan: "SCAN REVERSE", atMost: 3)
        visits(d, "SELECT id FROM t WHERE tag = 5", plan: "SCAN", atMost: 1000)
        d.check("SELECT count(*) FROM t WHERE score IS NULL")
        d.check("SELECT id FROM t WHERE score > 'a'")
        d.check("SELECT id FROM t WHERE score <= 1.5 ORDER BY id")
        d.check("SELECT id FROM t WHERE name > 'n0995' ORDER BY name DESC")
        d.check("SELECT id FROM t WHERE name LIKE 'n099_' ORDER BY id")
    }

    func testIndexesFollowWritesAndRollback() throws {
        let d = try populated()
        d.run(["UPDATE t SET score = 1000 WHERE id % 100 = 0", "DELETE FROM t WHERE score = 50"])
        d.check("SELECT id FROM t WHERE score = 1000 ORDER BY id")
        d.check("SELECT id FROM t WHERE score = 50")
        try d.database.execute("BEGIN")
        try d.database.execute("UPDATE t SET score = 2000 WHERE score = 1000")
        XCTAssertEqual(try d.database.execute("SELECT count(*) FROM t WHERE score = 2000").rows, [[.integer(10)]])
        try d.database.execute("ROLLBACK")
        d.check("SELECT id FROM t WHERE score = 1000 ORDER BY id")
        d.check("SELECT count(*) FROM t WHERE score = 2000")
        d.run(["DROP INDEX t_score"])
        d.check("SELECT id FROM t WHERE score = 1000 ORDER BY id")
        XCTAssertThrowsError(try d.database.execute("CREATE UNIQUE INDEX u ON t (score)"))
        XCTAssertThrowsError(try d.database.execute("DROP INDEX sqlite_autoindex_t_pk"))
    }
}

/// Index keys as memcomparable bytes (FORMAT.md "DAO index keys"): memcmp of encodings gives
/// SQLite's order of the values, DESC inverted, and the builder's sort agrees with it.
final class IndexKeyCodecTests: XCTestCase {
    let values: [SQLValue] = {
        var v: [SQLValue] = [.null, .text(""), .text("a"), .text("a\u{0}"), .text("ab"), .text("é"), .text("\u{0}"), .text("B"),
                             .blob([]), .blob([0]), .blob([0, 0]), .blob([1]), .blob([0xFF])]
        for i: Int64 in [0, 1, -1, 7, Int64.min, Int64.max, Int64.max - 1, Int64.min + 1, 1 << 53, (1 << 53) + 1, -(1 << 53) - 1,
                         (1 << 62) + 3, Int64.max - 511, Int64.max - 512, Int64.max - 513] {
            v.append(.integer(i))
        }
        for r: Double in [0.0, -0.0, 0.5, -0.5, 1.0, 7.0, 9007199254740992.0, 9223372036854775808.0, -9223372036854775808.0,
                          9223372036854774784.0, .infinity, -.infinity, 1e300, -1e-300, 4611686018427387904.0] {
            v.append(.real(r))
        }
        return v
    }()

    func testFormatDocumentExamples() {
        XCTAssertEqual(IndexKeyCodec.entry([.text("ab")], rowid: 7, descending: [true]),
                       [0xDF, 0x9E, 0x9D, 0xFF, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 7])
        XCTAssertEqual(IndexKeyCodec.probe([.integer(5)], descending: [false]), [0x10, 0xC0, 0x14, 0, 0, 0, 0, 0, 0, 0x80, 0])
        XCTAssertEqual(IndexKeyCodec.probe([.integer(1)], descending: [false]), IndexKeyCodec.probe([.real(1.0)], descending: [false]))
    }

    func testEncodingOrderIsSQLiteOrder() {
        for descending in [false, true] {
            for a in values {
                for b in values {
                    let ea = IndexKeyCodec.probe([a], descending: [descending]), eb = IndexKeyCodec.probe([b], descending: [descending])
                    let bytes = ea.withUnsafeBytes { x in eb.withUnsafeBytes { y in IndexKeyCodec.compare(x, y) } }
                    let byteOrder = ea.lexicographicallyPrecedes(eb) ? -1 : (ea == eb ? 0 : 1)
                    let expected = SQLValues.compare(a, b).signum() * (descending ? -1 : 1)
                    XCTAssertEqual(byteOrder, expected, "\(a) vs \(b) descending \(descending)")
                    XCTAssertEqual(bytes.signum(), expected, "\(a) vs \(b) descending \(descending)")
                }
            }
        }
    }

    func testAProbeOfLeadingColumnsMatchesEveryEntryWithThoseColumns() {
        let descending = [true, false]
        for a in values {
            let probe = IndexKeyCodec.probe([a], descending: descending)
            for b in values {
                for c in values.prefix(5) {
                    let entry = IndexKeyCodec.entry([b, c], rowid: 3, descending: descending)
                    let got = entry.withUnsafeBytes { e in probe.withUnsafeBytes { IndexKeyCodec.compare(e, $0) } }
                    XCTAssertEqual(got.signum(), -SQLValues.compare(b, a).signum(), "\(b),\(c) against probe \(a)")
                }
            }
        }
    }

    func testBuilderSortsLikeTheValuesThenRowids() {
        for descending in [false, true] {
            var builder = IndexBuilder(descending: [descending])
            let keys = values + values.reversed()
            for (i, key) in keys.enumerated() { builder.add([key], rowid: Int64(keys.count - i)) }
            let chunks = builder.chunks(builder.sortedOrder())
            var got: [Int64] = []
            var position = chunks.startPosition
            while let rowid = chunks.rowid(at: position) { got.append(rowid); position = chunks.next(position) }
            let expected = keys.enumerated().map { (key: $0.element, rowid: Int64(keys.count - $0.offset)) }.sorted { x, y in
                let c = SQLValues.compare(x.key, y.key) * (descending ? -1 : 1)
                return c != 0 ? c < 0 : x.rowid < y.rowid
            }.map(\.rowid)
            XCTAssertEqual(got, expected, "descending \(descending)")
            XCTAssertTrue(builder.hasDuplicateKey(builder.sortedOrder()), "1 and 1.0 are the same key")
        }
    }

    func testInsertAndRemoveKeepTheOrderAcrossChunkSplits() {
        var chunks = KeyChunks()
        var model: [[UInt8]] = []
        var random = SystemRandomNumberGenerator()
        for step in 0..<3_000 {
            let entry = IndexKeyCodec.entry([.integer(Int64.random(in: 0...200, using: &random))], rowid: Int64(step % 700), descending: [false])
            if step % 3 == 2, let victim = model.randomElement(using: &random) {
                chunks.remove(victim)
                model.removeAll { $0 == victim }
            } else if !model.contains(entry) {
                chunks.insert(entry)
                model.append(entry)
            }
        }
        assertEntries(chunks, model)
    }

    /// Ascending keys (an id, a timestamp) fill each chunk before the next starts; inserts in
    /// the middle afterwards still split in halves and keep the order.
    func testAscendingInsertsFillTheirChunks() {
        var chunks = KeyChunks()
        var model: [[UInt8]] = []
        for i in 0..<10_000 {
            let entry = IndexKeyCodec.entry([.integer(Int64(i * 2))], rowid: Int64(i), descending: [false])
            chunks.insert(entry)
            model.append(entry)
        }
        XCTAssertEqual(chunks.chunks.count, (10_000 + KeyChunks.chunkLimit - 1) / KeyChunks.chunkLimit)
        XCTAssertTrue(chunks.chunks.dropLast().allSatisfy { $0.ends.count == KeyChunks.chunkLimit }, "full chunks")
        for i in stride(from: 1, to: 3_000, by: 3) {
            let entry = IndexKeyCodec.entry([.integer(Int64(i))], rowid: Int64(20_000 + i), descending: [false])
            chunks.insert(entry)
            model.append(entry)
        }
        assertEntries(chunks, model)
    }

    /// `chunks` holds exactly `model`'s entries, in order.
    private func assertEntries(_ chunks: KeyChunks, _ model: [[UInt8]], file: StaticString = #filePath, line: UInt = #line) {
        var got: [[UInt8]] = []
        var position = chunks.startPosition
        while let entry = chunks.withEntry(at: position, { [UInt8]($0) }) { got.append(entry); position = chunks.next(position) }
        XCTAssertEqual(got, model.sorted { $0.lexicographicallyPrecedes($1) }, file: file, line: line)
        XCTAssertEqual(chunks.count, model.count, file: file, line: line)
    }
}
