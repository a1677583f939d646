@testable import DAO
import XCTest

/// CREATE TRIGGER / DROP TRIGGER (issue 15 item 5), compared with SQLite: each statement must
/// succeed or fail on both sides (with RAISE's message), and the tables must agree afterwards.
final class TriggerTests: XCTestCase {
    private func same(_ d: Differential, _ sql: String, tables: [String], file: StaticString = #filePath, line: UInt = #line) {
        let expected = Result { try d.oracle.execute(sql) }
        let actual = Result { try d.database.execute(sql).rows }
        switch (expected, actual) {
        case (.success(let e), .success(let a)): XCTAssertEqual(a, e, sql, file: file, line: line)
        case (.failure(let e), .failure(let a)):
            if sql.contains("RAISE") || sql.lowercased().contains("insert") {
                XCTAssertEqual(message(a), message(e), sql, file: file, line: line)
            }
        case (.success, .failure(let error)): XCTFail("\(sql): ours failed with \(error)", file: file, line: line)
        case (.failure(let error), .success): XCTFail("\(sql): SQLite failed with \(error)", file: file, line: line)
        }
        for table in tables { d.check("SELECT rowid, * FROM \(table) ORDER BY rowid", file: file, line: line) }
    }

    /// An error's message: the text inside `case("...")`, or the whole description.
    private func message(_ error: Error) -> String {
        if case DAOError.noSuchColumn(let name) = error { return "no such column: \(name)" }
        let text = "\(error)"
        guard let open = text.range(of: "(\""), let close = text.range(of: "\")", options: .backwards), open.upperBound <= close.lowerBound else { return text }
        return String(text[open.upperBound..<close.lowerBound])
    }

    func testRowTriggersAgreeWithSQLite() throws {
        let d = try Differential()
        let tables = ["t", "log", "total"]
        d.run(["CREATE TABLE t(id INTEGER PRIMARY KEY, k TEXT UNIQUE, v INTEGER)",
               "CREATE TABLE log(what TEXT, a, b)",
               "CREATE TABLE total(n INTEGER)",
               "INSERT INTO total VALUES (0)"])
        for sql in ["CREATE TRIGGER ti AFTER INSERT ON t BEGIN INSERT INTO log VALUES ('ins', new.id, new.v); UPDATE total SET n = n + new.v; END",
                    "CREATE TRIGGER IF NOT EXISTS ti AFTER INSERT ON t BEGIN SELECT 1; END",
                    "CREATE TRIGGER ti AFTER INSERT ON t BEGIN SELECT 1; END",
                    "CREATE TRIGGER tb BEFORE INSERT ON t WHEN new.v < 0 BEGIN SELECT RAISE(ABORT, 'negative v'); END",
                    "CREATE TRIGGER tz BEFORE INSERT ON t FOR EACH ROW WHEN new.v = 0 BEGIN SELECT RAISE(IGNORE); END",
                    "CREATE TRIGGER tu AFTER UPDATE OF v ON t BEGIN INSERT INTO log VALUES ('upd', old.v, new.v); END",
                    "CREATE TRIGGER td BEFORE DELETE ON t BEGIN INSERT INTO log VALUES ('del', old.k, old.rowid); END",
                    "CREATE TRIGGER tl AFTER INSERT ON log WHEN new.what = 'del' BEGIN UPDATE total SET n = n - 1; END",
                    "CREATE TRIGGER bad AFTER DELETE ON nosuch BEGIN SELECT 1; END",
                    "INSERT INTO t(k, v) VALUES ('a', 1), ('b', 2), ('c', 3)",
                    "INSERT INTO t(k, v) VALUES ('d', 4), ('e', -1)",
                    "INSERT INTO t(k, v) VALUES ('f', 0), ('g', 7)",
                    "INSERT INTO t(k, v) VALUES ('a', 9)",
                    "UPDATE t SET v = v * 10 WHERE v > 2",
                    "UPDATE t SET k = k || '!' WHERE v = 1",
                    "DELETE FROM t WHERE v > 50",
                    "DROP TRIGGER tb",
                    "DROP TRIGGER tb",
                    "DROP TRIGGER IF EXISTS tb",
                    "INSERT INTO t(k, v) VALUES ('h', -5)",
                    "SELECT RAISE(ABORT, 'x')",
                    "DROP TABLE t",
                    "CREATE TABLE t(id INTEGER PRIMARY KEY, k TEXT UNIQUE, v INTEGER)",
                    "CREATE TRIGGER ti AFTER INSERT ON t BEGIN SELECT 1; END",
                    "INSERT INTO t(k, v) VALUES ('z', 1)"] {
            same(d, sql, tables: tables)
        }
    }

    func testNewAndOldOnlyWhereTheEventHasThem() throws {
        let d = try Differential()
        let tables = ["t", "log"]
        d.run(["CREATE TABLE t(a, b)", "CREATE TABLE log(x)", "INSERT INTO t VALUES (1, 2)"])
        for sql in ["CREATE TRIGGER d1 AFTER DELETE ON t BEGIN INSERT INTO log VALUES (new.a); END",
                    "DELETE FROM t",
                    "CREATE TRIGGER i1 AFTER INSERT ON t BEGIN INSERT INTO log VALUES (old.a); END",
                    "INSERT INTO t VALUES (3, 4)",
                    "DROP TRIGGER i1",
                    "CREATE TRIGGER i2 AFTER INSERT ON t BEGIN INSERT INTO log VALUES (new.nosuch); END",
                    "INSERT INTO t VALUES (5, 6)",
                    "DROP TRIGGER i2",
                    "INSERT INTO t VALUES (5, 6)"] {
            same(d, sql, tables: tables)
        }
    }

    func testCascadingTriggersDoNotRecurseAndFailingOnesRollBack() throws {
        let d = try Differential()
        let tables = ["a", "b"]
        d.run(["CREATE TABLE a(x)", "CREATE TABLE b(y UNIQUE)",
               // a -> b -> a: the second firing of ta is suppressed (recursive_triggers OFF).
               "CREATE TRIGGER ta AFTER INSERT ON a BEGIN INSERT INTO b VALUES (new.x * 10); END",
               "CREATE TRIGGER tb AFTER INSERT ON b BEGIN INSERT INTO a VALUES (new.y + 1); END"])
        for sql in ["INSERT INTO a VALUES (1)",
                    "INSERT INTO a VALUES (2), (1)",      // b's UNIQUE fails inside the trigger: all undone
                    "BEGIN",
                    "INSERT INTO a VALUES (3)",
                    "CREATE TRIGGER tr BEFORE DELETE ON b WHEN old.y = 30 BEGIN SELECT RAISE(ROLLBACK, 'no way'); END",
                    "DELETE FROM b WHERE y = 10",
                    "DELETE FROM b WHERE y = 30",
                    "COMMIT",
                    "SELECT count(*) FROM a",
                    // FAIL keeps the rows before the failing one; ABORT keeps none.
                    "CREATE TRIGGER tf BEFORE INSERT ON a WHEN new.x = 7 BEGIN SELECT RAISE(FAIL, 'seven'); END",
                    "INSERT INTO a VALUES (5), (6), (7), (8)",
                    "BEGIN",
                    "INSERT INTO a VALUES (50), (7)",
                    "INSERT INTO a VALUES (60)",
                    "COMMIT"] {
            same(d, sql, tables: tables)
        }
    }

    func testNewAndOldHaveNoAffinityAndUpsertFiresUpdateTriggers() throws {
        let d = try Differential()
        let tables = ["t", "log"]
        d.run(["CREATE TABLE t(i INTEGER UNIQUE, r REAL, x TEXT, n NUMERIC, b)", "CREATE TABLE log(what, a, b, c, e)",
               "CREATE TRIGGER c AFTER INSERT ON t BEGIN INSERT INTO log VALUES ('ins', new.i = '5', new.x = 5, new.r < '10', new.b = '5'); END",
               "CREATE TRIGGER u BEFORE UPDATE OF r ON t BEGIN INSERT INTO log VALUES ('upd', old.i, old.r, new.r, new.n = '2.5'); END"])
        for sql in ["INSERT INTO t VALUES (5, 5, '5', '2.5', '5')",
                    "INSERT INTO t VALUES ('abc', 'x', 5, NULL, 5)",
                    "INSERT INTO t VALUES (5, 1, 1, 1, 1) ON CONFLICT(i) DO UPDATE SET r = r + 1",
                    "INSERT INTO t VALUES (5, 1, 1, 1, 1) ON CONFLICT(i) DO UPDATE SET x = 'y'",
                    "INSERT INTO t VALUES (5, 1, 1, 1, 1) ON CONFLICT(i) DO NOTHING"] {
            same(d, sql, tables: tables)
        }
    }

    /// A commit whose trigger writes another table notifies that table's observers too.
    func testObserversOfATableATriggerWritesAreNotified() async throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        try db.execute("CREATE TABLE t(a)")
        try db.execute("CREATE TABLE log(x)")
        try db.execute("CREATE TRIGGER tl AFTER INSERT ON t BEGIN INSERT INTO log VALUES (new.a); END")
        var iterator = db.observe("SELECT x FROM log").makeAsyncIterator()
        let first = try await iterator.next()
        XCTAssertEqual(first?.rows ?? [[-1]], [])
        let signal = try XCTUnwrap(iterator.registration.signal)
        XCTAssertFalse(signal.isPending)
        try db.execute("INSERT INTO t VALUES (4)")
        XCTAssertTrue(signal.isPending, "the trigger's insert into log was committed")
        let second = try await iterator.next()
        XCTAssertEqual(second?.rows, [[4]])
    }

    func testRowidInBeforeInsertIsMinusOneUntilChosen() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t(id INTEGER PRIMARY KEY, v)", "CREATE TABLE u(v)", "CREATE TABLE log(a, b, c)",
               "CREATE TRIGGER x BEFORE INSERT ON t BEGIN INSERT INTO log VALUES (new.id, new.rowid, new.v); END",
               "CREATE TRIGGER y BEFORE INSERT ON u BEGIN INSERT INTO log VALUES (new.rowid, new.v, 0); END",
               "CREATE TRIGGER z AFTER INSERT ON u BEGIN INSERT INTO log VALUES (new.rowid, new.v, 1); END"])
        for sql in ["INSERT INTO t VALUES (NULL, 1)", "INSERT INTO t(v) VALUES (2)", "INSERT INTO t VALUES (7, 3)",
                    "INSERT INTO u VALUES (5)", "INSERT INTO u(rowid, v) VALUES (9, 6)"] {
            same(d, sql, tables: ["t", "u", "log"])
        }
    }

    func testOrderOfSeveralTriggersAndRaiseInsideExpressions() throws {
        let d = try Differential()
        let tables = ["t", "log"]
        d.run(["CREATE TABLE t(a, b)", "CREATE TABLE log(x)",
               "CREATE TRIGGER first AFTER INSERT ON t BEGIN INSERT INTO log VALUES ('first ' || new.a); END",
               "CREATE TRIGGER second AFTER INSERT ON t BEGIN INSERT INTO log VALUES ('second ' || new.a); END",
               "CREATE TRIGGER check_b BEFORE INSERT ON t BEGIN SELECT CASE WHEN new.b < 0 THEN RAISE(ABORT, 'b < 0') END; END",
               "CREATE TRIGGER touch BEFORE UPDATE ON t BEGIN UPDATE t SET b = b + 100 WHERE rowid = old.rowid; END",
               "CREATE TRIGGER gone BEFORE UPDATE OF a ON t WHEN new.a = 'drop' BEGIN DELETE FROM t WHERE rowid = old.rowid; END"])
        for sql in ["INSERT INTO t VALUES (1, 1), (2, 2)",
                    "INSERT INTO t VALUES (3, -1)",
                    "INSERT OR REPLACE INTO t(rowid, a, b) VALUES (1, 'one', 5)",
                    "UPDATE t SET a = a || '!' WHERE rowid = 2",
                    "UPDATE t SET a = 'drop' WHERE rowid = 1",
                    "UPDATE t SET rowid = rowid + 10",
                    "DELETE FROM t"] {
            same(d, sql, tables: tables)
        }
    }

    func testTriggersPersistAcrossReopen() throws {
        let temporary = try TemporaryStore()
        var db = try temporary.database
        try db.execute("CREATE TABLE t(a INTEGER)")
        try db.execute("CREATE TABLE log(x)")
        try db.execute("CREATE TRIGGER keep AFTER INSERT ON t WHEN new.a > 1 BEGIN INSERT INTO log VALUES (new.a * 2); END")
        try db.execute("CREATE TRIGGER gone AFTER INSERT ON t BEGIN INSERT INTO log VALUES (-1); END")
        try db.execute("DROP TRIGGER gone")
        // FORMAT.md "DAO tables", triggers: format 0x02, the trigger's text after the CREATE TABLE.
        let catalog = try temporary.store.space(named: "dao.catalog")
        let record = try XCTUnwrap(try temporary.store.get(forKey: Array("t".utf8), space: catalog))
        XCTAssertEqual(record.first, 0x02)
        let text = "CREATE TRIGGER keep AFTER INSERT ON t WHEN new.a > 1 BEGIN INSERT INTO log VALUES (new.a * 2); END"
        XCTAssertEqual(Array(record.suffix(text.utf8.count + 4)), [0, 0, 0, UInt8(text.utf8.count)] + Array(text.utf8))
        XCTAssertEqual(try temporary.store.get(forKey: Array("log".utf8), space: catalog)?.first, 0x01)
        try temporary.reopen()
        db = try temporary.database
        try db.execute("INSERT INTO t VALUES (1), (5)")
        XCTAssertEqual(try db.execute("SELECT x FROM log").rows, [[10]])
        XCTAssertThrowsError(try db.execute("CREATE TRIGGER keep AFTER DELETE ON t BEGIN SELECT 1; END"))
        // A TEMP trigger (TempTriggerTests) is taken; one on a TEMP table is not.
        try db.execute("CREATE TEMP TABLE scratch (k)")
        XCTAssertThrowsError(try db.execute("CREATE TEMP TRIGGER x AFTER DELETE ON scratch BEGIN SELECT 1; END")) { error in
            guard case DAOError.unsupported = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try db.execute("CREATE TRIGGER v INSTEAD OF DELETE ON t BEGIN SELECT 1; END")) { error in
            guard case DAOError.unsupported = error else { return XCTFail("\(error)") }
        }
        try db.execute("DROP TABLE t")
        try temporary.reopen()
        db = try temporary.database
        try db.execute("CREATE TABLE t(a INTEGER)")
        try db.execute("INSERT INTO t VALUES (7)")
        XCTAssertEqual(try db.execute("SELECT x FROM log").rows, [[10]])
    }
    /// Subqueries, joins and views inside trigger bodies and WHEN, and subqueries in upsert and
    /// RETURNING (found when the join/subquery and trigger work met: their contexts had no
    /// database to run a subquery against, so each was refused as "subquery").
    func testSubqueriesInsideTriggersUpsertAndReturning() throws {
        let d = try Differential()
        let tables = ["a", "log"]
        d.run(["CREATE TABLE a(id INTEGER PRIMARY KEY, name TEXT, parent INT)",
               "CREATE TABLE log(msg TEXT)",
               "CREATE VIEW kids AS SELECT p.name AS pn, c.name AS cn FROM a p JOIN a c ON c.parent = p.id"])
        for sql in ["INSERT INTO a VALUES (1, 'root', NULL), (2, 'x', 1)",
                    "CREATE TRIGGER tw AFTER INSERT ON a WHEN new.parent IN (SELECT id FROM a WHERE name = 'root') BEGIN INSERT INTO log VALUES ('child ' || new.name || ' ' || (SELECT count(*) FROM a AS b WHERE b.parent = new.parent)); END",
                    "CREATE TRIGGER te AFTER INSERT ON a BEGIN INSERT INTO log SELECT 'kid of ' || pn FROM kids WHERE cn = new.name AND EXISTS (SELECT 1 FROM a WHERE id = new.parent); END",
                    "CREATE TRIGGER td BEFORE DELETE ON a WHEN (SELECT count(*) FROM a WHERE parent = old.id) > 0 BEGIN SELECT RAISE(ABORT, 'has children'); END",
                    "INSERT INTO a VALUES (3, 'y', 1), (4, 'z', 2)",
                    "DELETE FROM a WHERE id = 1",
                    "DELETE FROM a WHERE id = 4",
                    "INSERT INTO a VALUES (3, 'w', 2) ON CONFLICT(id) DO UPDATE SET name = (SELECT max(name) FROM a) || '+'",
                    "INSERT INTO a VALUES (5, 'v', 3) RETURNING id, (SELECT count(*) FROM a), name"] {
            same(d, sql, tables: tables)
        }
    }
}

/// CREATE TEMP TRIGGER, the way Room's InvalidationTracker uses it: a trigger on a main table
/// that marks a TEMP table, answered as SQLite does, listed in `sqlite_temp_master` only, and
/// gone after a reopen without having touched the catalog.
final class TempTriggerTests: XCTestCase {
    func testRoomsInvalidationTrackerTriggers() throws {
        let d = try Differential()
        let statements = [
            "CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT)",
            "CREATE TEMP TABLE room_table_modification_log (table_id INTEGER PRIMARY KEY, invalidated INTEGER NOT NULL DEFAULT 0)",
            "INSERT OR IGNORE INTO room_table_modification_log VALUES (0, 0)",
            "CREATE TEMP TRIGGER IF NOT EXISTS `room_table_modification_trigger_item_INSERT` AFTER INSERT ON `item` BEGIN "
                + "UPDATE room_table_modification_log SET invalidated = 1 WHERE table_id = 0 AND invalidated = 0; END",
            "CREATE TEMP TRIGGER IF NOT EXISTS `room_table_modification_trigger_item_DELETE` AFTER DELETE ON `item` BEGIN "
                + "UPDATE room_table_modification_log SET invalidated = 1 WHERE table_id = 0 AND invalidated = 0; END",
            "SELECT * FROM room_table_modification_log",
            "INSERT INTO item (name) VALUES ('a'), ('b')",
            "SELECT * FROM room_table_modification_log WHERE invalidated = 1",
            "UPDATE room_table_modification_log SET invalidated = 0 WHERE invalidated = 1",
            "UPDATE item SET name = 'c' WHERE id = 1",
            "SELECT * FROM room_table_modification_log WHERE invalidated = 1",
            "DELETE FROM item WHERE id = 2",
            "SELECT * FROM room_table_modification_log WHERE invalidated = 1",
            "SELECT type, name, tbl_name FROM sqlite_temp_master WHERE type = 'trigger' ORDER BY name",
            "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'",
            "DROP TRIGGER IF EXISTS room_table_modification_trigger_item_DELETE",
            "SELECT name FROM sqlite_temp_master WHERE type = 'trigger'",
        ]
        for sql in statements { d.check(sql) }
        try d.temporary.reopen()
        let db = try d.temporary.database
        XCTAssertEqual(try db.execute("SELECT count(*) FROM sqlite_temp_master").rows, [[.integer(0)]])
        try db.execute("INSERT INTO item (name) VALUES ('after')")   // no trigger, no temp table
        XCTAssertEqual(try db.execute("SELECT name FROM item ORDER BY id").rows, [[.text("c")], [.text("after")]])
    }
}
