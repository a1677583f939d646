@testable import DAO
import XCTest

/// Issue 25 item 1: text is bytes. SQLite keeps a TEXT value's bytes as they are, valid UTF-8
/// or not, and stores, compares, sorts, hashes, measures and converts those bytes. Every check
/// here runs on the engine and on SQLite and compares the exact bytes (`SQLResult.exactRows`).
final class TextBytesTests: XCTestCase {
    /// Texts of every kind of ill-formed UTF-8 SQLite reads without complaint, with valid ones.
    static let blobs = ["8e30", "c384c39631", "c3", "61ff62", "c0af", "eda080", "f09f9880", "41e282", "ff00", "6162c3a9",
                        "e282ac", "80", "f4908080", "2520ff", "00ff", "c3a9", "414243", "", "e0", "f8888080", "fe", "c2c2"]

    static var texts: [String] { blobs.map { "CAST(x'\($0)' AS TEXT)" } }

    func testTheIssueRepros() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t(e)", "INSERT INTO t VALUES (CAST(x'8e30' AS TEXT)), ('ÄÖ1')"])
        let bytes = d.check("SELECT CAST(e AS BLOB) FROM t")
        XCTAssertEqual(bytes, [[.blob([0x8E, 0x30])], [.blob([0xC3, 0x84, 0xC3, 0x96, 0x31])]], "stored as given, not replaced")
        d.check("SELECT max(e), min(e) FROM t")
        d.check("SELECT e, typeof(e), length(e), hex(e) FROM t ORDER BY e")
    }

    /// Statement texts that Swift's `String ==` calls equal (canonically equivalent) but whose
    /// bytes differ are different statements: each literal keeps its own bytes, also when the
    /// parsed-statement cache has seen the other one (the same statement run twice in a row,
    /// and with another statement between).
    func testCanonicallyEquivalentStatementTextsKeepTheirOwnBytes() throws {
        let temporary = try TemporaryStore()
        let database = try temporary.database
        let precomposed = "SELECT CAST('\u{E9}' AS BLOB)", decomposed = "SELECT CAST('e\u{301}' AS BLOB)"
        XCTAssertEqual(precomposed, decomposed, "Swift compares these equal")
        for _ in 0..<2 {
            XCTAssertEqual(try database.execute(precomposed).rows, [[.blob([0xC3, 0xA9])]])
            XCTAssertEqual(try database.execute(decomposed).rows, [[.blob([0x65, 0xCC, 0x81])]])
            _ = try database.execute("SELECT 1")
        }
    }

    func testStoredBytesSurviveAReopenAndEveryIndex() throws {
        let temporary = try TemporaryStore()
        var database = try temporary.database
        try database.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, e TEXT, b)")
        try database.execute("CREATE INDEX t_e ON t(e)")
        for (i, hex) in Self.blobs.enumerated() {
            try database.execute("INSERT INTO t(id, e, b) VALUES (\(i), CAST(x'\(hex)' AS TEXT), x'\(hex)')")
        }
        try temporary.reopen()
        database = try temporary.database
        let rows = try database.execute("SELECT id, e, CAST(e AS BLOB) = b, typeof(e) FROM t ORDER BY id")
        XCTAssertEqual(rows.rows.count, Self.blobs.count)
        for (i, hex) in Self.blobs.enumerated() {
            XCTAssertEqual(rows.rows[i][2], .integer(1), "row \(i) (x'\(hex)') kept its bytes")
            XCTAssertEqual(rows.rows[i][3], .text("text"))
            XCTAssertEqual(rows.textBytes(row: i, column: 1), Self.bytes(hex), "textBytes of x'\(hex)'")
            // Found through the index by its own bytes (an equality probe and a covering scan).
            let probe = try database.execute("SELECT id FROM t WHERE e = CAST(x'\(hex)' AS TEXT)")
            XCTAssertEqual(probe.rows, [[.integer(Int64(i))]], "index probe for x'\(hex)'")
            XCTAssertTrue(try database.queryPlan("SELECT id FROM t WHERE e = CAST(x'\(hex)' AS TEXT)").contains("t_e"))
        }
    }

    func testPublicRowsRepairAndTextBytesKeepTheBytes() throws {
        let temporary = try TemporaryStore()
        let database = try temporary.database
        let result = try database.execute("SELECT CAST(x'8e30' AS TEXT), 'é', x'00ff', 1, NULL")
        XCTAssertEqual(result.rows, [[.text("\u{FFFD}0"), .text("é"), .blob([0, 0xFF]), .integer(1), .null]])
        XCTAssertEqual(result.textBytes(row: 0, column: 0), [0x8E, 0x30])
        XCTAssertEqual(result.textBytes(row: 0, column: 1), [0xC3, 0xA9])
        XCTAssertEqual(result.textBytes(row: 0, column: 2), [0, 0xFF])
        XCTAssertNil(result.textBytes(row: 0, column: 3))
        XCTAssertNil(result.textBytes(row: 0, column: 4))
        XCTAssertNil(result.textBytes(row: 1, column: 0))
        // The bytes go back in as a blob cast to text.
        try database.execute("CREATE TABLE t(e)")
        try database.execute("INSERT INTO t VALUES (CAST(? AS TEXT))", arguments: [.blob(result.textBytes(row: 0, column: 0) ?? [])])
        XCTAssertEqual(try database.execute("SELECT hex(e), typeof(e) FROM t").rows, [[.text("8E30"), .text("text")]])
    }

    func testFunctionsReadTheBytesAsSQLiteDoes() throws {
        let d = try Differential()
        let functions = [
            "length(@)", "hex(@)", "quote(@)", "unicode(@)", "upper(@)", "lower(@)", "typeof(@)", "CAST(@ AS BLOB)",
            "CAST(@ AS INTEGER)", "CAST(@ AS REAL)", "CAST(@ AS NUMERIC)", "substr(@, 2)", "substr(@, -2, 1)",
            "substr(@, 1, 2)", "substr(@, 0)", "instr(@, x'ff')", "instr(@, 'b')", "instr(@ || 'x', 'x')",
            "replace(@, x'ff', 'Z')", "replace(@, 'a', x'80')", "trim(@)", "trim(@, x'ff')", "ltrim(@ , x'8e')",
            "rtrim(@, x'62')", "trim(' ' || @ || ' ')", "@ || 'z'", "'z' || @", "@ || @",
            "printf('%s|%.1s|%5s', @, @, @)", "printf(@)", "@ = @", "@ < 'a'", "@ > 'z'", "@ LIKE '%'", "@ LIKE '_'",
            "@ LIKE '__'", "@ LIKE 'a%'", "@ LIKE '%b'", "@ GLOB '*'", "@ GLOB '?'", "@ GLOB '??'", "@ GLOB '[a-z]*'",
            "coalesce(NULL, @)", "nullif(@, @)", "iif(1, @, 0)", "max(@, 'a')", "min(@, x'00')", "@ IN ('a', @)",
            "@ + 1", "abs(@)", "round(@)", "char(unicode(@))", "zeroblob(0) || @", "@ BETWEEN 'a' AND x'ff'",
        ]
        for text in Self.texts {
            let terms = functions.map { $0.replacingOccurrences(of: "@", with: text) }
            for chunk in stride(from: 0, to: terms.count, by: 12) {
                d.check("SELECT " + terms[chunk..<min(chunk + 12, terms.count)].joined(separator: ", "))
            }
        }
        // Patterns and escapes that are not valid UTF-8 themselves.
        for pattern in ["x'25ff25'", "x'8e25'", "x'61ff'", "x'5f5f'"] {
            d.check("SELECT 'a' || CAST(x'ff' AS TEXT) LIKE CAST(\(pattern) AS TEXT), CAST(x'8e30' AS TEXT) LIKE CAST(\(pattern) AS TEXT)")
            d.check("SELECT CAST(x'61ff62' AS TEXT) GLOB CAST(\(pattern) AS TEXT), CAST(x'2aff' AS TEXT) GLOB '*'")
        }
        d.check("SELECT 'a%' LIKE CAST(x'61ff25' AS TEXT) ESCAPE CAST(x'ff' AS TEXT)")
        d.check("SELECT 'ab' LIKE 'a%' ESCAPE CAST(x'c3a9' AS TEXT), 'ab' LIKE 'a%' ESCAPE CAST(x'e282' AS TEXT)")
    }

    func testCharAndPrintfMakeSQLitesBytesInsteadOfRefusing() throws {
        let d = try Differential()
        d.check("SELECT char(55296), char(57343, 65), hex(char(55296)), length(char(55296, 56320))")
        d.check("SELECT printf('%.1s', 'é'), hex(printf('%.1s', 'é')), printf('%.2s|', x'e282ac')")
        d.check("SELECT strftime(CAST(x'25598e' AS TEXT), '2020-01-02'), hex(strftime(CAST(x'ff' AS TEXT), 'now'))")
    }

    func testOrderGroupsDistinctAndAggregatesUseTheBytes() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t(k INTEGER PRIMARY KEY, e TEXT, g)", "CREATE INDEX t_e ON t(e)"])
        var values: [String] = []
        for (i, text) in (Self.texts + Self.texts + ["'a'", "'é'", "'b'", "''", "'Z'"]).enumerated() {
            values.append("(\(i), \(text), \(i % 3))")
        }
        d.run(["INSERT INTO t VALUES " + values.joined(separator: ", ")])
        d.check("SELECT e FROM t ORDER BY e, k")
        d.check("SELECT e FROM t ORDER BY e DESC, k")
        d.check("SELECT DISTINCT e FROM t ORDER BY e")
        d.check("SELECT e, count(*) FROM t GROUP BY e ORDER BY e")
        d.check("SELECT g, max(e), min(e), group_concat(e, CAST(x'ff' AS TEXT)), count(DISTINCT e) FROM t GROUP BY g ORDER BY g")
        d.check("SELECT k FROM t WHERE e > CAST(x'c3' AS TEXT) ORDER BY k")
        d.check("SELECT k FROM t WHERE e BETWEEN 'a' AND CAST(x'f0' AS TEXT) ORDER BY k")
        d.check("SELECT k FROM t WHERE e LIKE 'a%' ORDER BY k")
        d.check("SELECT k FROM t WHERE e LIKE CAST(x'ff25' AS TEXT) ORDER BY k")
        d.check("SELECT k FROM t WHERE e IN (CAST(x'8e30' AS TEXT), CAST(x'ff00' AS TEXT)) ORDER BY k")
        d.check("SELECT a.k, b.k FROM t a JOIN t b ON a.e = b.e AND a.k < b.k ORDER BY a.k, b.k")
        d.check("SELECT e FROM t UNION SELECT CAST(x'8e30' AS TEXT) ORDER BY 1")
        d.check("SELECT e FROM t INTERSECT SELECT CAST(x'61ff62' AS TEXT)")
        d.check("SELECT k FROM t WHERE e = (SELECT e FROM t WHERE k = 3) ORDER BY k")
        d.run(["UPDATE t SET e = e || CAST(x'80' AS TEXT) WHERE g = 1"])
        d.check("SELECT k, e, length(e) FROM t ORDER BY k")
        d.check("SELECT k FROM t WHERE e LIKE '%' || CAST(x'80' AS TEXT) ORDER BY k")
    }

    func testAPrefixLikeThroughAnIndexFindsTextsWithAnyBytesAfterThePrefix() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t(k INTEGER PRIMARY KEY, e TEXT)", "CREATE INDEX t_e ON t(e)",
               "INSERT INTO t VALUES (1, 'ab'), (2, 'ab' || CAST(x'ff' AS TEXT)), (3, 'AB' || CAST(x'f5' AS TEXT)), (4, 'ac'),"
                   + " (5, 'a' || CAST(x'f0808081' AS TEXT)), (6, 'abc'), (7, 'Ab' || char(1114111))"])
        for pattern in ["'ab%'", "'a%'", "'AB%'", "'a' || char(65533) || '%'", "'aA%'"] {
            d.check("SELECT k FROM t WHERE e LIKE \(pattern) ORDER BY k")
        }
        let temporary = try TemporaryStore()
        let database = try temporary.database
        try database.execute("CREATE TABLE t(k INTEGER PRIMARY KEY, e TEXT)")
        try database.execute("CREATE INDEX t_e ON t(e)")
        XCTAssertTrue(try database.queryPlan("SELECT k FROM t WHERE e LIKE 'ab%'").contains("t_e"), "the prefix still uses the index")
    }

    struct Note: Codable, DAORecord, Equatable {
        static let table = TableSchema("Note", primaryKey: "id", generatedID: true)
        var id: Int64?
        var title: String
    }

    struct NoteBytes: Codable, DAORecord, Equatable {
        static let table = TableSchema("Note", primaryKey: "id", generatedID: true)
        var id: Int64?
        var title: Data
    }

    func testTypedDaoReadsTheExactBytesAsDataAndARepairedString() throws {
        let temporary = try TemporaryStore()
        var note = Note(id: nil, title: "x")
        try temporary.store.dao(for: Note.self).create(&note)
        try temporary.database.execute("UPDATE Note SET title = CAST(x'61ff62' AS TEXT)")
        XCTAssertEqual(try temporary.store.dao(for: Note.self).queryForAll().map(\.title), ["a\u{FFFD}b"])
        XCTAssertEqual(try temporary.store.dao(for: NoteBytes.self).queryForAll().map(\.title), [Data([0x61, 0xFF, 0x62])])
    }

    func testXMLBinaryResultsAreTheExactBytes() throws {
        let config = """
        <module name="Bytes" initializer="createTable" tableName="bytes" version="1.0">
          <update id="createTable">create table if not exists ${T} (k integer primary key, e text)</update>
          <insert id="add" arguments="k, bytes">insert into ${T} (k, e) values (#{k}, CAST(#{bytes} AS TEXT))</insert>
          <select id="one" arguments="k" result="binary">select e from ${T} where k = #{k}</select>
          <select id="all" result="[binary]">select e from ${T} order by k</select>
          <select id="text" arguments="k" result="string">select e from ${T} where k = #{k}</select>
        </module>
        """
        let temporary = try TemporaryStore()
        let proxy = try DAOProxy(configText: config, store: temporary.store)
        _ = try proxy.call("add", ["k": 1, "bytes": Data([0x8E, 0x30])])
        _ = try proxy.call("add", ["k": 2, "bytes": Data([0xC3, 0xA9])])
        XCTAssertEqual(try proxy.call("one", ["k": 1]) as? Data, Data([0x8E, 0x30]))
        XCTAssertEqual(try proxy.call("all", [:]) as? [Data], [Data([0x8E, 0x30]), Data([0xC3, 0xA9])])
        XCTAssertEqual(try proxy.call("text", ["k": 1]) as? String, "\u{FFFD}0")
        XCTAssertEqual(try proxy.call("text", ["k": 2]) as? String, "é")
    }

    static func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16) ?? 0 }
    }
}
