import Foundation
import XCTest

@testable import DAO

/// The PRAGMAs SQLiteOpenHelper, Room, FMDB and GRDB send, against SQLite 3.40 where the
/// answers do not depend on how SQLite stores things.
final class PragmaTests: XCTestCase {
    private let schema = [
        "CREATE TABLE users (id INTEGER PRIMARY KEY AUTOINCREMENT, email TEXT NOT NULL UNIQUE, name text DEFAULT 'anon', "
            + "created DATETIME DEFAULT CURRENT_TIMESTAMP, score REAL DEFAULT -1.5)",
        "CREATE TABLE memberships (user INTEGER NOT NULL, team TEXT, role, PRIMARY KEY (team, user))",
        "CREATE INDEX index_users_name ON users (name)",
        "CREATE UNIQUE INDEX index_memberships_role ON memberships (role DESC, user)",
    ]

    func testSchemaPragmasAnswerAsSQLite() throws {
        let d = try Differential()
        for sql in schema { d.check(sql) }
        d.check("PRAGMA table_info(users)")
        d.check("PRAGMA table_info('memberships')")
        d.check("PRAGMA table_xinfo(memberships)")
        d.check("PRAGMA index_info(index_users_name)")
        d.check("PRAGMA index_xinfo(index_memberships_role)")
        d.check("PRAGMA index_info(no_such_index)")
        d.check("PRAGMA foreign_key_list(users)")
        d.check("PRAGMA foreign_key_check")
        d.check("PRAGMA foreign_keys")
        d.check("PRAGMA foreign_keys = ON")
        d.check("PRAGMA foreign_keys")
        d.check("PRAGMA main.user_version")
        // index_list: the CREATE INDEX rows as SQLite's; the constraints' indexes are named
        // after this engine's scheme, so only their count, uniqueness and origin are compared.
        for table in ["users", "memberships"] {
            let ours = try d.database.execute("PRAGMA index_list(\(table))").rows
            let theirs = try d.oracle.execute("PRAGMA index_list(\(table))")
            XCTAssertEqual(ours.count, theirs.count, table)
            XCTAssertEqual(ours.filter { $0[3] == .text("c") }.map { Array($0[1...]) }, theirs.filter { $0[3] == .text("c") }.map { Array($0[1...]) }, table)
            XCTAssertEqual(ours.map { [$0[2], $0[3]] }.sorted { "\($0)" < "\($1)" }, theirs.map { [$0[2], $0[3]] }.sorted { "\($0)" < "\($1)" }, table)
        }
        XCTAssertThrowsError(try d.database.execute("PRAGMA table_info(missing)"))
        XCTAssertEqual(try d.database.execute("PRAGMA journal_mode = WAL").rows, [[.text("wal")]])
        XCTAssertEqual(try d.database.execute("PRAGMA busy_timeout = 2500").rows, [[.integer(2500)]])
        XCTAssertThrowsError(try d.database.execute("PRAGMA synchronous = OFF")) { error in
            guard case DAOError.unsupported = error else { return XCTFail("\(error)") }
        }
    }

    /// `PRAGMA user_version` is the version `openVersion` keeps: set with its statement or
    /// transaction, undone by ROLLBACK, kept across a reopen.
    func testUserVersionIsTheSchemaVersion() throws {
        let temporary = try TemporaryStore()
        var db = try temporary.database
        XCTAssertEqual(try db.execute("PRAGMA user_version").rows, [[.integer(0)]])
        try db.execute("PRAGMA user_version = 3")
        XCTAssertEqual(try db.execute("PRAGMA user_version").rows, [[.integer(3)]])
        XCTAssertEqual(try db.userVersion(), 3)
        try db.execute("BEGIN")
        try db.execute("PRAGMA user_version = 4")
        XCTAssertEqual(try db.execute("PRAGMA user_version").rows, [[.integer(4)]])
        try db.execute("ROLLBACK")
        XCTAssertEqual(try db.execute("PRAGMA user_version").rows, [[.integer(3)]])
        XCTAssertThrowsError(try db.execute("PRAGMA user_version = 99999999999"))
        try temporary.reopen()
        db = try temporary.database
        XCTAssertEqual(try db.execute("PRAGMA user_version").rows, [[.integer(3)]])
        // openVersion sees it as the stored version: nothing to do at 3, an upgrade to 4.
        var upgraded: (Int, Int)?
        try db.openVersion(4, onCreate: { _ in XCTFail("created") }, onUpgrade: { _, from, to in upgraded = (from, to) })
        XCTAssertEqual(upgraded?.0, 3)
        XCTAssertEqual(try db.execute("PRAGMA user_version").rows, [[.integer(4)]])
    }
}
