@testable import DAO
import Foundation
import LogStore
import XCTest

/// Named migrations (`DatabaseMigrator`), sharing the versions record with `openVersion`.
final class DatabaseMigratorTests: XCTestCase {
    private func migrator(log: @escaping (String) -> Void = { _ in }) -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            log("v1")
            try db.execute("CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
            try db.execute("INSERT INTO player (name) VALUES ('ann')")
        }
        migrator.registerMigration("v2") { db in
            log("v2")
            try db.execute("ALTER TABLE player ADD COLUMN score INTEGER NOT NULL DEFAULT 0")
            try db.execute("CREATE INDEX player_score ON player (score)")
            try db.execute("UPDATE player SET score = 10")
        }
        return migrator
    }

    func testRunsInOrderOnceAndSurvivesReopen() throws {
        let temporary = try TemporaryStore()
        var log: [String] = []
        let first = migrator { log.append($0) }
        XCTAssertEqual(try first.appliedMigrations(temporary.database), [])
        XCTAssertFalse(try first.hasCompletedMigrations(temporary.database))
        try first.migrate(temporary.database, upTo: "v1")
        XCTAssertEqual(try first.appliedMigrations(temporary.database), ["v1"])
        try first.migrate(temporary.database)
        try first.migrate(temporary.database)
        XCTAssertEqual(log, ["v1", "v2"])
        XCTAssertTrue(try first.hasCompletedMigrations(temporary.database))

        try temporary.reopen()
        let second = migrator { log.append($0) }
        try second.migrate(temporary.database)
        XCTAssertEqual(log, ["v1", "v2"])
        XCTAssertEqual(try second.appliedMigrations(temporary.database), ["v1", "v2"])
        XCTAssertEqual(try temporary.database.execute("SELECT name, score FROM player").rows, [[.text("ann"), .integer(10)]])
        XCTAssertThrowsError(try second.migrate(temporary.database, upTo: "v9")) {
            XCTAssertEqual($0 as? SchemaVersionError, .noSuchMigration("v9"))
        }
    }

    func testFailingMigrationRollsBackOnlyItself() throws {
        let temporary = try TemporaryStore()
        var migrator = migrator()
        struct Boom: Error {}
        migrator.registerMigration("v3") { db in
            try db.execute("DROP TABLE player")
            try db.execute("CREATE TABLE other (a)")
            throw Boom()
        }
        XCTAssertThrowsError(try migrator.migrate(temporary.database)) { XCTAssertTrue($0 is Boom, "\($0)") }
        XCTAssertEqual(try migrator.appliedMigrations(temporary.database), ["v1", "v2"])
        XCTAssertEqual(try temporary.database.tableNames(), ["player"])
        try temporary.reopen()
        XCTAssertEqual(try migrator.appliedMigrations(temporary.database), ["v1", "v2"])
        XCTAssertEqual(try temporary.database.schema(ofTable: "player")?.count, 2)
        XCTAssertEqual(try temporary.database.execute("SELECT score FROM player").rows, [[.integer(10)]])
    }

    func testDuplicateNameIsRefusedBeforeAnythingRuns() throws {
        let temporary = try TemporaryStore()
        var migrator = migrator()
        migrator.registerMigration("v1") { _ in }
        XCTAssertThrowsError(try migrator.migrate(temporary.database)) {
            XCTAssertEqual($0 as? SchemaVersionError, .duplicateMigration("v1"))
        }
        XCTAssertEqual(try temporary.database.tableNames(), [])
    }

    func testSharesTheRecordWithTheVersionedOpen() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        try db.openVersion(7, onCreate: { db in try db.execute("CREATE TABLE legacy (a)") }, onUpgrade: { _, _, _ in })
        try migrator().migrate(db)
        XCTAssertEqual(try db.userVersion(), 7)
        try db.openVersion(8, onCreate: { _ in }, onUpgrade: { db, _, _ in try db.execute("DROP TABLE legacy") })
        try temporary.reopen()
        XCTAssertEqual(try temporary.database.userVersion(), 8)
        XCTAssertEqual(try migrator().appliedMigrations(temporary.database), ["v1", "v2"])
        XCTAssertEqual(try temporary.database.tableNames(), ["player"])
    }

    func testEraseOnSchemaChangeDropsTablesWhenAnAppliedMigrationIsGone() throws {
        let temporary = try TemporaryStore()
        try migrator().migrate(temporary.database)
        var renamed = DatabaseMigrator()
        renamed.registerMigration("v1-new") { db in try db.execute("CREATE TABLE player2 (a)") }
        // Without the option the unknown applied migrations are left as they are.
        try renamed.migrate(temporary.database)
        XCTAssertEqual(try temporary.database.tableNames(), ["player", "player2"])

        var erasing = DatabaseMigrator()
        erasing.eraseDatabaseOnSchemaChange = true
        erasing.registerMigration("v1-newer") { db in try db.execute("CREATE TABLE player3 (a)") }
        try erasing.migrate(temporary.database)
        XCTAssertEqual(try temporary.database.tableNames(), ["player3"])
        XCTAssertEqual(try temporary.database.readVersionRecord().appliedMigrations, ["v1-newer"])
        try erasing.migrate(temporary.database)   // nothing unknown now: nothing erased
        XCTAssertEqual(try temporary.database.tableNames(), ["player3"])
    }
}

/// A typed Dao inside migrations, and a record type that gained properties reading rows written
/// before the migration that added their columns.
final class TypedMigrationTests: XCTestCase {
    struct ContactV1: Codable, DAORecord, Equatable {
        static let table = TableSchema("Contact", primaryKey: "id", generatedID: true)
        var id: Int64?
        var name: String
    }

    struct ContactV2: Codable, DAORecord, Equatable {
        static let table = TableSchema("Contact", primaryKey: "id", generatedID: true)
        var id: Int64?
        var name: String
        var email: String?
        var score: Int
    }

    func testRecordTypeWithNewPropertiesReadsRowsWrittenBeforeTheChange() throws {
        let temporary = try TemporaryStore()
        let store = temporary.store
        var migrator = DatabaseMigrator()
        migrator.registerMigration("contacts") { _ in
            var ann = ContactV1(id: nil, name: "ann")
            try store.dao(for: ContactV1.self).create(&ann)   // the Dao runs in the migration's transaction
        }
        try migrator.migrate(temporary.database)
        XCTAssertEqual(try store.dao(for: ContactV1.self).queryForAll(), [ContactV1(id: 1, name: "ann")])

        migrator.registerMigration("contact email and score") { db in
            try db.execute("ALTER TABLE Contact ADD COLUMN email TEXT")
            try db.execute("ALTER TABLE Contact ADD COLUMN score INTEGER NOT NULL DEFAULT 7")
        }
        try migrator.migrate(temporary.database)
        try temporary.reopen()
        let contacts = try temporary.store.dao(for: ContactV2.self)
        XCTAssertEqual(try contacts.queryForAll(), [ContactV2(id: 1, name: "ann", email: nil, score: 7)])
        var bob = ContactV2(id: nil, name: "bob", email: "b@x", score: 3)
        try contacts.create(&bob)
        XCTAssertEqual(try contacts.queryForID(2), bob)
    }
}

/// The SQL migrations run (DDL and data statements in one transaction) gives SQLite's results.
final class MigrationSQLiteDifferentialTests: XCTestCase {
    func testMigrationStatementsMatchSQLite() throws {
        let steps: [(name: String, statements: [String])] = [
            ("v1", ["CREATE TABLE User (id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER)",
                    "INSERT INTO User (name, age) VALUES ('ann', 31), ('bob', 17), ('cy', NULL)"]),
            ("v2", ["CREATE TABLE User2 (id INTEGER PRIMARY KEY, name TEXT NOT NULL, adult INTEGER NOT NULL DEFAULT 0)",
                    "INSERT INTO User2 (id, name, adult) SELECT id, upper(name), coalesce(age, 0) >= 18 FROM User",
                    "DROP TABLE User",
                    "ALTER TABLE User2 RENAME TO User",
                    "CREATE INDEX user_adult ON User (adult)"]),
            ("v3", ["ALTER TABLE User ADD COLUMN note TEXT DEFAULT 'none'",
                    "UPDATE User SET note = 'minor' WHERE adult = 0",
                    "DROP INDEX user_adult"]),
        ]
        let differential = try Differential()
        var migrator = DatabaseMigrator()
        for step in steps {
            migrator.registerMigration(step.name) { db in
                for sql in step.statements { try db.execute(sql) }
            }
            for sql in step.statements { _ = try differential.oracle.execute(sql) }
        }
        try migrator.migrate(differential.database)
        XCTAssertEqual(try migrator.appliedMigrations(differential.database), ["v1", "v2", "v3"])
        let rows = differential.check("SELECT id, name, adult, note FROM User ORDER BY id")
        XCTAssertEqual(rows?.count, 3)
        differential.check("SELECT count(*) FROM User WHERE adult = 1")
        XCTAssertEqual(differential.database.tableNames(), ["User"])
    }
}
