import CrashTestSupport
import Foundation
import LogStore
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
        XCTAssertThrowsError(try d.database.execute("PRAGMA locking_mode = EXCLUSIVE")) { error in
            guard case DAOError.unsupported = error else { return XCTFail("\(error)") }
        }
    }

    /// What Android's SQLiteConnection, Room and GRDB read and set when they open a database,
    /// answered as SQLite answers them (an in-memory SQLite: these do not depend on the file).
    func testOpenSequencePragmasAnswerAsSQLite() throws {
        let d = try Differential()
        for sql in schema { d.check(sql) }
        for sql in ["PRAGMA page_size", "PRAGMA page_size = 4096", "PRAGMA page_size", "PRAGMA encoding",
                    "PRAGMA wal_autocheckpoint", "PRAGMA wal_autocheckpoint = 500", "PRAGMA wal_autocheckpoint",
                    "PRAGMA wal_autocheckpoint(200)", "PRAGMA journal_size_limit", "PRAGMA journal_size_limit = 524288",
                    "PRAGMA journal_size_limit", "PRAGMA temp_store", "PRAGMA temp_store = MEMORY", "PRAGMA temp_store",
                    "PRAGMA temp_store = 1", "PRAGMA temp_store", "PRAGMA temp_store = DEFAULT", "PRAGMA temp_store",
                    "PRAGMA defer_foreign_keys", "PRAGMA defer_foreign_keys = ON", "PRAGMA defer_foreign_keys",
                    "PRAGMA recursive_triggers", "PRAGMA recursive_triggers = OFF", "PRAGMA recursive_triggers",
                    "PRAGMA optimize"] {
            d.check(sql)
        }
        XCTAssertThrowsError(try d.database.execute("PRAGMA recursive_triggers = ON")) { error in
            guard case DAOError.unsupported = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try d.database.execute("PRAGMA temp_store = somewhere"))
        XCTAssertThrowsError(try d.database.execute("PRAGMA wal_autocheckpoint = many"))
    }

    /// `synchronous` reads the level the store gives, takes a lower one, and honours a higher
    /// one by syncing each commit.
    func testSynchronousReadsTheStoresLevel() throws {
        func level(_ options: LogStore.Options, after set: String? = nil) throws -> [[DAOValue]] {
            let temporary = try TemporaryStore(options: options)
            let db = try temporary.database
            if let set { XCTAssertEqual(try db.execute("PRAGMA synchronous = \(set)").rows, []) }
            return try db.execute("PRAGMA synchronous").rows
        }
        var options = LogStore.Options()
        XCTAssertEqual(try level(options), [[.integer(1)]], "the default mode's syncer bounds the loss")
        XCTAssertEqual(try level(options, after: "OFF"), [[.integer(1)]])
        XCTAssertEqual(try level(options, after: "full"), [[.integer(2)]])
        XCTAssertEqual(try level(options, after: "3"), [[.integer(3)]])
        options.durability = .fsyncEachWrite
        XCTAssertEqual(try level(options), [[.integer(2)]])
        XCTAssertEqual(try level(options, after: "NORMAL"), [[.integer(2)]])
        options.durability = .groupCommit(interval: 0.05)
        XCTAssertEqual(try level(options), [[.integer(1)]])
        options.durability = .processCrashSafe
        options.maxUnsyncedInterval = nil
        options.maxUnsyncedBytes = nil
        XCTAssertEqual(try level(options), [[.integer(0)]], "no syncer")
        let temporary = try TemporaryStore()
        XCTAssertThrowsError(try temporary.database.execute("PRAGMA synchronous = sometimes"))
    }

    /// `PRAGMA synchronous = FULL` on a store that syncs nothing by itself: a committed row
    /// survives a power cut right after the statement returned; without it, it is lost.
    func testSynchronousFullSyncsEachCommitAgainstAPowerCut() throws {
        var options = LogStore.Options()
        options.maxUnsyncedInterval = nil   // no syncer: nothing is synced unless asked
        options.maxUnsyncedBytes = nil
        for full in [false, true] {
            let base = FileManager.default.temporaryDirectory.appendingPathComponent("pragma-sync-\(UUID().uuidString)")
            let root = base.appendingPathComponent("work", isDirectory: true)
            defer { try? FileManager.default.removeItem(at: base) }
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            PowerLossSimulator.start(root: root.path)
            var recording: PowerLossSimulator.Recording?
            do {
                let store = try LogStore(directory: root.appendingPathComponent("store"), options: options)
                let db = try SQLDatabase.attached(to: store)
                try db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
                try store.sync()
                if full { try db.execute("PRAGMA synchronous = FULL") }
                try db.execute("INSERT INTO notes (body) VALUES ('kept?')")
                try db.execute("BEGIN")
                try db.execute("INSERT INTO notes (body) VALUES ('in a transaction')")
                try db.execute("COMMIT")
                recording = PowerLossSimulator.stop()   // the power goes before the close
                try store.close()
            } catch {
                _ = PowerLossSimulator.stop()
                throw error
            }
            let image = base.appendingPathComponent("image", isDirectory: true)
            guard let recording else { return XCTFail("no recording") }
            _ = try PowerLossImage.build(recording, cut: recording.operations.count, outcome: .dropUnsynced, into: image)
            let store = try LogStore(directory: image.appendingPathComponent("store"), options: options)
            defer { try? store.close() }
            let rows = try SQLDatabase.attached(to: store).execute("SELECT body FROM notes ORDER BY id").rows
            XCTAssertEqual(rows, full ? [[.text("kept?")], [.text("in a transaction")]] : [], "synchronous = FULL: \(full)")
        }
    }

    func testIntegrityCheckAndWalCheckpoint() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        // Android's isDatabaseIntegrityOk: every schema of database_list, then its integrity_check(1).
        let schemas = try db.execute("PRAGMA database_list").rows
        XCTAssertEqual(schemas.map { Array($0.prefix(2)) }, [[.integer(0), .text("main")]])
        XCTAssertEqual(schemas.first?.last, .text(temporary.directory.path))
        XCTAssertEqual(try db.execute("PRAGMA main.integrity_check(1)").rows, [[.text("ok")]])
        for sql in schema { try db.execute(sql) }
        try db.execute("INSERT INTO users (email) VALUES ('a@example.com'), ('b@example.com')")
        XCTAssertEqual(try db.execute("PRAGMA integrity_check").rows, [[.text("ok")]])
        XCTAssertEqual(try db.execute("PRAGMA quick_check").rows, [[.text("ok")]])
        XCTAssertEqual(try db.execute("PRAGMA integrity_check(10)").rows, [[.text("ok")]])
        XCTAssertEqual(try db.execute("PRAGMA integrity_check(users)").rows, [[.text("ok")]])
        XCTAssertEqual(try db.execute("PRAGMA integrity_check").columns, ["integrity_check"])
        XCTAssertThrowsError(try db.execute("PRAGMA integrity_check(missing)"))
        XCTAssertEqual(try db.execute("PRAGMA wal_checkpoint").rows, [[.integer(0), .integer(0), .integer(0)]])
        XCTAssertEqual(try db.execute("PRAGMA wal_checkpoint(TRUNCATE)").columns, ["busy", "log", "checkpointed"])
        try db.execute("BEGIN")
        XCTAssertEqual(try db.execute("PRAGMA wal_checkpoint(PASSIVE)").rows, [[.integer(1), .integer(-1), .integer(-1)]])
        try db.execute("COMMIT")
        XCTAssertThrowsError(try db.execute("PRAGMA wal_checkpoint(SOMETIMES)"))
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
