@testable import DAO
import Foundation
import LogStore
import XCTest

/// Tables keep no copy of their rows: statements read rows from the store through its keydir
/// (FORMAT.md "DAO tables on disk"), and see their own uncommitted writes first.
final class TableOnDiskTests: XCTestCase {
    func testRowsAreReadFromTheStoreNotFromACopy() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
        try db.execute("INSERT INTO t VALUES (1, 'one'), (2, 'two')")
        // Rewrite row 2's record directly in the table's key space: the next SELECT must show it.
        let table = try db.table(named: "t")
        try temporary.store.put(RowCodec.encode([.null, .text("rewritten")], skipping: 0), forKey: RowCodec.key(rowid: 2), space: table.space)
        XCTAssertEqual(try db.execute("SELECT name FROM t ORDER BY id").rows, [[.text("one")], [.text("rewritten")]])
        XCTAssertEqual(try db.execute("SELECT name FROM t WHERE id = 2").rows, [[.text("rewritten")]])
    }

    func testATransactionSeesItsOwnWritesBeforeTheStoreHasThem() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
        try db.execute("INSERT INTO t VALUES (1, 'one'), (2, 'two')")
        try db.execute("BEGIN")
        try db.execute("UPDATE t SET name = 'uno' WHERE id = 1")
        try db.execute("DELETE FROM t WHERE id = 2")
        try db.execute("INSERT INTO t VALUES (3, 'three')")
        XCTAssertEqual(try db.execute("SELECT id, name FROM t ORDER BY id").rows,
                       [[.integer(1), .text("uno")], [.integer(3), .text("three")]])
        let table = try db.table(named: "t")
        XCTAssertEqual(try temporary.store.get(forKey: RowCodec.key(rowid: 3), space: table.space), nil, "not written before COMMIT")
        try db.execute("ROLLBACK")
        XCTAssertEqual(try db.execute("SELECT id, name FROM t ORDER BY id").rows,
                       [[.integer(1), .text("one")], [.integer(2), .text("two")]])
    }

    /// A table dropped and created again in one transaction must not see the dropped rows,
    /// which stay in the store until the COMMIT's batch deletes them.
    func testATableRecreatedInTheTransactionThatDroppedItIsEmpty() throws {
        let temporary = try TemporaryStore()
        var db = try temporary.database
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
        try db.execute("INSERT INTO t VALUES (1, 'old')")
        try db.execute("BEGIN")
        try db.execute("DROP TABLE t")
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
        XCTAssertEqual(try db.execute("SELECT * FROM t WHERE id = 1").rows, [])
        XCTAssertEqual(try db.execute("SELECT count(*) FROM t").rows, [[.integer(0)]])
        try db.execute("INSERT INTO t VALUES (1, 'new')")
        try db.execute("COMMIT")
        try temporary.reopen()
        db = try temporary.database
        XCTAssertEqual(try db.execute("SELECT * FROM t").rows, [[.integer(1), .text("new")]])
    }
}

/// A table much larger than what the database keeps of it: memory holds rowids and index
/// entries only, whatever the size of the rows, and every row still reads back.
final class LargeTableTests: XCTestCase {
    func testMemoryHoldsNoRowBytes() throws {
        let temporary = try TemporaryStore()
        var db = try temporary.database
        try db.execute("CREATE TABLE big (id INTEGER PRIMARY KEY, k INTEGER, body TEXT)")
        try db.execute("CREATE INDEX big_k ON big (k)")
        let rows = 3_000
        func body(_ i: Int) -> String { String(repeating: Character(UnicodeScalar(UInt8(97 + i % 26))), count: 1_000 + i % 50) }
        try db.execute("BEGIN")
        for i in 0..<rows { try db.execute("INSERT INTO big VALUES (?, ?, ?)", arguments: [.integer(Int64(i)), .integer(Int64(i % 97)), .text(body(i))]) }
        try db.execute("COMMIT")
        for reopened in [false, true] {
            if reopened {
                try temporary.reopen()
                db = try temporary.database
            }
            let table = try db.table(named: "big")
            let rowBytes = rows * 1_000
            XCTAssertLessThan(table.memoryFootprint, rowBytes / 20, "reopened \(reopened)")
            XCTAssertEqual(try db.execute("SELECT count(*), sum(length(body)) FROM big").rows,
                           [[.integer(Int64(rows)), .integer(Int64((0..<rows).reduce(0) { $0 + 1_000 + $1 % 50 }))]])
            for i in stride(from: 0, to: rows, by: 331) {
                XCTAssertEqual(try db.execute("SELECT body FROM big WHERE id = ?", arguments: [.integer(Int64(i))]).rows, [[.text(body(i))]])
            }
            XCTAssertEqual(try db.execute("SELECT count(*) FROM big WHERE k = 5").rows, [[.integer(Int64((0..<rows).filter { $0 % 97 == 5 }.count))]])
        }
    }
}
