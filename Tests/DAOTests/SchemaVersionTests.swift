@testable import DAO
import Foundation
import LogStore
import XCTest

/// Versioned open (`openVersion` / `LogStore.openTables`) and its catalog record.
final class SchemaVersionTests: XCTestCase {
    /// The source component's demo helper: DB_VERSION 1 creates `User`; DB_VERSION 2 drops and
    /// recreates it on upgrade (OrmLite's `TableUtils.dropTable` + `onCreate`).
    func testDemoHelperCreatesThenDropsAndRecreatesOnUpgrade() throws {
        let temporary = try TemporaryStore()
        var calls: [String] = []
        func createUser(_ db: SQLDatabase, withAge: Bool) throws {
            try db.execute("CREATE TABLE IF NOT EXISTS User (id INTEGER PRIMARY KEY, name TEXT\(withAge ? ", age INTEGER" : ""))")
        }
        let v1 = try temporary.store.openTables(version: 1,
            onCreate: { db in calls.append("create"); try createUser(db, withAge: false) },
            onUpgrade: { _, from, to in calls.append("upgrade \(from) \(to)") })
        try v1.execute("INSERT INTO User (name) VALUES ('alice')")
        XCTAssertEqual(calls, ["create"])
        XCTAssertEqual(try v1.userVersion(), 1)

        // Same version again: nothing runs, the row stays.
        try temporary.reopen()
        _ = try temporary.store.openTables(version: 1,
            onCreate: { _ in calls.append("create") },
            onUpgrade: { _, from, to in calls.append("upgrade \(from) \(to)") })
        XCTAssertEqual(calls, ["create"])
        XCTAssertEqual(try temporary.store.sql("SELECT name FROM User"), [[.text("alice")]])

        try temporary.reopen()
        let v2 = try temporary.store.openTables(version: 2,
            onCreate: { db in calls.append("create"); try createUser(db, withAge: true) },
            onUpgrade: { db, from, to in
                calls.append("upgrade \(from) \(to)")
                try db.execute("DROP TABLE IF EXISTS User")
                try createUser(db, withAge: true)
            })
        XCTAssertEqual(calls, ["create", "upgrade 1 2"])
        XCTAssertEqual(try v2.execute("SELECT count(*) FROM User").rows, [[.integer(0)]])
        try v2.execute("INSERT INTO User (name, age) VALUES ('bob', 30)")

        // The version and the new schema survive a reopen.
        try temporary.reopen()
        let again = try temporary.database
        XCTAssertEqual(try again.userVersion(), 2)
        XCTAssertEqual(try again.execute("SELECT name, age FROM User").rows, [[.text("bob"), .integer(30)]])
    }

    func testFailingUpgradeRollsBackSchemaDataAndVersion() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        try db.openVersion(1, onCreate: { db in
            try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
            try db.execute("INSERT INTO t (v) VALUES ('one')")
        }, onUpgrade: { _, _, _ in XCTFail("no upgrade at create") })
        struct Boom: Error {}
        XCTAssertThrowsError(try db.openVersion(2, onCreate: { _ in XCTFail("no create") }, onUpgrade: { db, _, _ in
            try db.execute("DROP TABLE t")
            try db.execute("CREATE TABLE u (x INTEGER)")
            try db.execute("INSERT INTO u VALUES (1)")
            throw Boom()
        })) { XCTAssertTrue($0 is Boom, "\($0)") }
        XCTAssertFalse(db.inTransaction)
        XCTAssertEqual(try db.userVersion(), 1)
        XCTAssertEqual(db.tableNames(), ["t"])
        XCTAssertEqual(try db.execute("SELECT v FROM t").rows, [[.text("one")]])

        // On disk too: the next open sees version 1 and runs the upgrade again.
        try temporary.reopen()
        var ran = false
        let change = try temporary.database.openVersion(2, onCreate: { _ in XCTFail("no create") }, onUpgrade: { db, from, to in
            XCTAssertEqual(from, 1); XCTAssertEqual(to, 2)
            ran = true
            try db.execute("ALTER TABLE t ADD COLUMN w INTEGER DEFAULT 5")
        })
        XCTAssertTrue(ran)
        XCTAssertEqual(change, .upgraded(from: 1, to: 2))
        XCTAssertEqual(try temporary.database.execute("SELECT v, w FROM t").rows, [[.text("one"), .integer(5)]])
    }

    func testDowngradeRefusedByDefaultAndRunsWithCallback() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        XCTAssertEqual(try db.userVersion(), 0)
        XCTAssertEqual(try db.openVersion(3, onCreate: { db in try db.execute("CREATE TABLE t (a)") }, onUpgrade: { _, _, _ in }),
                       .created(version: 3))
        XCTAssertThrowsError(try db.openVersion(2, onCreate: { _ in }, onUpgrade: { _, _, _ in })) {
            XCTAssertEqual($0 as? SchemaVersionError, .downgradeRefused(stored: 3, requested: 2))
        }
        XCTAssertEqual(try db.userVersion(), 3)
        let change = try db.openVersion(2, onCreate: { _ in }, onUpgrade: { _, _, _ in },
                                        onDowngrade: { db, _, _ in try db.execute("DROP TABLE t") })
        XCTAssertEqual(change, .downgraded(from: 3, to: 2))
        XCTAssertEqual(db.tableNames(), [])
        XCTAssertEqual(try db.userVersion(), 2)
        XCTAssertThrowsError(try db.openVersion(0, onCreate: { _ in }, onUpgrade: { _, _, _ in })) {
            XCTAssertEqual($0 as? SchemaVersionError, .invalidVersion(0))
        }
    }

    func testCallbackThatEndsTheTransactionIsRefused() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        XCTAssertThrowsError(try db.openVersion(1, onCreate: { db in
            try db.execute("CREATE TABLE t (a)")
            try db.execute("ROLLBACK")
        }, onUpgrade: { _, _, _ in })) {
            guard case .transactionEnded = $0 as? SchemaVersionError else { return XCTFail("\($0)") }
        }
        XCTAssertEqual(try db.userVersion(), 0)
        XCTAssertFalse(db.inTransaction)
    }

    /// The record's bytes as FORMAT.md "DAO schema versions" gives them, and the record does not
    /// show up as a table (with or without the index checkpoint).
    func testRecordBytesAndItIsNoTable() throws {
        var record = SchemaVersionRecord()
        record.version = 2
        record.appliedMigrations = ["v1"]
        XCTAssertEqual(record.encoded(), [0x01, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2, 0x76, 0x31])
        XCTAssertEqual(try SchemaVersionRecord(decoding: record.encoded()), record)
        XCTAssertThrowsError(try SchemaVersionRecord(decoding: Array(record.encoded().dropLast())))

        let temporary = try TemporaryStore()
        try temporary.database.openVersion(4, onCreate: { db in try db.execute("CREATE TABLE t (a)") }, onUpgrade: { _, _, _ in })
        let space = try XCTUnwrap(try temporary.database.existingSpace(named: "dao.catalog"))
        let stored = try XCTUnwrap(try temporary.store.get(forKey: Array("sqlite_versions".utf8), space: space))
        XCTAssertEqual(try SchemaVersionRecord(decoding: stored).version, 4)
        try temporary.reopen()   // clean close: attach uses the index checkpoint
        XCTAssertEqual(try temporary.database.tableNames(), ["t"])
        try temporary.database.execute("INSERT INTO t VALUES (1)")   // checkpoint now stale
        try temporary.reopen()
        XCTAssertEqual(try temporary.database.tableNames(), ["t"])
        XCTAssertEqual(try temporary.database.userVersion(), 4)
        XCTAssertThrowsError(try temporary.database.execute("CREATE TABLE sqlite_versions (a)"))
        XCTAssertThrowsError(try temporary.database.execute("ALTER TABLE t RENAME TO sqlite_versions"))
        XCTAssertEqual(try temporary.database.userVersion(), 4)
    }
}
