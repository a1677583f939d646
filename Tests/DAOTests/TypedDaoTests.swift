import Foundation
import LogStore
import XCTest
@testable import DAO

/// The User record of API.md's typed Dao example.
struct User: Codable, DAORecord, Equatable {
    static let table = TableSchema("User", primaryKey: "id", generatedID: true, unique: ["name"], indexes: [["timestamp"], ["color", "name"]])
    var id: Int64?
    var name: String
    var color: Int
    var timestamp: Int64
}

/// A record with a caller-assigned text key and columns named like SQL keywords.
struct Setting: Codable, DAORecord, Equatable {
    static let table = TableSchema("order", primaryKey: "key", indexes: [["group"]])
    var key: String
    var group: String?
    var value: Double
}

/// The typed Dao's calls (API.md "DAO" 3), each on SQLite and on SQLDatabase.
final class TypedDaoTests: XCTestCase {
    private func seed(_ users: Dao<User>) throws -> [User] {
        var created: [User] = []
        for (index, name) in ["ann", "bob", "cy", "dee", "Eve"].enumerated() {
            var user = User(id: nil, name: name, color: index % 3, timestamp: Int64(100 - index * 10))
            try users.create(&user)
            created.append(user)
        }
        return created
    }

    func testCreateFillsGeneratedIDsAndQueryForIDReadsThemBack() throws {
        try forEachBackend(User.self) { users, _ in
            let created = try seed(users)
            XCTAssertEqual(created.map(\.id), [1, 2, 3, 4, 5])
            XCTAssertEqual(try users.queryForID(Int64(3)), created[2])
            XCTAssertEqual(try users.queryForID(3), created[2])
            XCTAssertNil(try users.queryForID(99))
            XCTAssertEqual(try users.countOf(), 5)
            var explicit = User(id: 42, name: "zed", color: 1, timestamp: 1)
            try users.create(&explicit)
            XCTAssertEqual(explicit.id, 42)
            XCTAssertEqual(try users.queryForID(42)?.name, "zed")
        }
    }

    func testCreateRefusesDuplicateUniqueValueAndLeavesTableUnchanged() throws {
        try forEachBackend(User.self) { users, _ in
            _ = try seed(users)
            var duplicate = User(id: nil, name: "ann", color: 9, timestamp: 9)
            XCTAssertThrowsError(try users.create(&duplicate))
            XCTAssertNil(duplicate.id)
            XCTAssertEqual(try users.countOf(), 5)
            XCTAssertEqual(try users.queryForEq("name", "ann").map(\.color), [0])
        }
    }

    func testTableAndIndexesAreCreatedOnceWithQuotedNames() throws {
        let runner = try SQLiteStatementRunner()
        let users = try Dao<User>(runner: runner)
        XCTAssertEqual(users.creationStatements, [
            #"CREATE TABLE IF NOT EXISTS "User" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "name" TEXT UNIQUE, "color" INTEGER, "timestamp" INTEGER)"#,
            #"CREATE INDEX IF NOT EXISTS "User_timestamp_idx" ON "User" ("timestamp")"#,
            #"CREATE INDEX IF NOT EXISTS "User_color_name_idx" ON "User" ("color", "name")"#,
        ])
        let indexes = try runner.oracle.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'User%' ORDER BY name")
        XCTAssertEqual(indexes, [[.text("User_color_name_idx")], [.text("User_timestamp_idx")]])
        // A second Dao on the same database finds the table and keeps its rows.
        var user = User(id: nil, name: "ann", color: 1, timestamp: 2)
        try users.create(&user)
        XCTAssertEqual(try Dao<User>(runner: runner).countOf(), 1)
    }

    func testKeywordNamesAndTextPrimaryKey() throws {
        try forEachBackend(Setting.self) { settings, _ in
            var a = Setting(key: "a", group: "select", value: 0.5)
            try settings.create(&a)
            var b = Setting(key: "b", group: nil, value: -1)
            try settings.create(&b)
            XCTAssertEqual(try settings.queryForAll(), [a, b])
            XCTAssertEqual(try settings.queryForEq("group", nil), [b])
            XCTAssertEqual(try settings.queryForEq("group", "select"), [a])
            XCTAssertEqual(try settings.deleteByID("a"), 1)
            XCTAssertEqual(try settings.queryForAll(), [b])
        }
    }

    func testCreateIfNotExistsMatchesByPrimaryKey() throws {
        try forEachBackend(User.self) { users, _ in
            let created = try seed(users)
            var changed = created[1]
            changed.color = 77
            XCTAssertEqual(try users.createIfNotExists(changed), created[1], "existing row returned, not overwritten")
            XCTAssertEqual(try users.queryForID(2)?.color, created[1].color)
            let fresh = try users.createIfNotExists(User(id: nil, name: "new", color: 3, timestamp: 3))
            XCTAssertEqual(fresh.id, 6)
            let chosen = try users.createIfNotExists(User(id: 50, name: "fifty", color: 3, timestamp: 3))
            XCTAssertEqual(chosen.id, 50)
            XCTAssertEqual(try users.countOf(), 7)
        }
    }

    func testCreateOrUpdateInsertsOrUpdates() throws {
        try forEachBackend(User.self) { users, _ in
            let created = try seed(users)
            var changed = created[0]
            changed.color = 9
            let update = try users.createOrUpdate(changed)
            XCTAssertFalse(update.created)
            XCTAssertEqual(update.changed, 1)
            XCTAssertEqual(try users.queryForID(1), changed)
            let insert = try users.createOrUpdate(User(id: nil, name: "fresh", color: 1, timestamp: 1))
            XCTAssertTrue(insert.created)
            XCTAssertEqual(insert.changed, 1)
            let insertWithID = try users.createOrUpdate(User(id: 20, name: "twenty", color: 1, timestamp: 1))
            XCTAssertTrue(insertWithID.created)
            XCTAssertEqual(try users.countOf(), 7)
        }
    }

    func testUpdateDeleteAndDeleteByID() throws {
        try forEachBackend(User.self) { users, _ in
            var created = try seed(users)
            created[3].name = "dora"
            XCTAssertEqual(try users.update(created[3]), 1)
            XCTAssertEqual(try users.queryForID(4), created[3])
            XCTAssertEqual(try users.update(User(id: 99, name: "ghost", color: 0, timestamp: 0)), 0)
            XCTAssertThrowsError(try users.update(User(id: nil, name: "x", color: 0, timestamp: 0)))
            var clash = created[3]
            clash.name = "ann"
            XCTAssertThrowsError(try users.update(clash), "unique name")
            XCTAssertEqual(try users.queryForID(4)?.name, "dora")
            XCTAssertEqual(try users.delete(created[0]), 1)
            XCTAssertEqual(try users.delete(created[0]), 0)
            XCTAssertEqual(try users.delete(User(id: nil, name: "x", color: 0, timestamp: 0)), 0)
            XCTAssertEqual(try users.deleteByID(Int64(2)), 1)
            XCTAssertEqual(try users.deleteByID(2), 0)
            XCTAssertEqual(try users.queryForAll().map(\.id), [3, 4, 5])
        }
    }

    func testQueryForAllAndQueryForEq() throws {
        try forEachBackend(User.self) { users, _ in
            let created = try seed(users)
            XCTAssertEqual(try users.queryForAll(), created)
            XCTAssertEqual(Set(try users.queryForEq("color", 1).map(\.name)), ["bob", "Eve"], "no order promised")
            XCTAssertEqual(try users.queryForEq("name", "nobody"), [])
            XCTAssertEqual(try users.queryForEq("id", nil), [])
            XCTAssertThrowsError(try users.queryForEq("nme", "ann")) { error in
                guard case DAOError.noSuchColumn("nme") = error else { return XCTFail("\(error)") }
            }
        }
    }

    func testCallBatchTasksCommitsOrRollsBack() throws {
        try forEachBackend(User.self) { users, backend in
            _ = try seed(users)
            let total = try users.callBatchTasks { () -> Int in
                for index in 0..<10 {
                    var user = User(id: nil, name: "batch\(index)", color: 0, timestamp: 0)
                    try users.create(&user)
                }
                XCTAssertTrue(backend.runner.inTransaction)
                return try users.countOf()
            }
            XCTAssertEqual(total, 15)
            XCTAssertFalse(backend.runner.inTransaction)
            struct Stop: Error {}
            XCTAssertThrowsError(try users.callBatchTasks {
                var user = User(id: nil, name: "lost", color: 0, timestamp: 0)
                try users.create(&user)
                XCTAssertEqual(try users.countOf(), 16)
                throw Stop()
            }) { XCTAssertTrue($0 is Stop) }
            XCTAssertFalse(backend.runner.inTransaction)
            XCTAssertEqual(try users.countOf(), 15)
            XCTAssertEqual(try users.queryForEq("name", "lost"), [])
            // Nested batches join the outer transaction.
            try users.callBatchTasks {
                try users.callBatchTasks { _ = try users.deleteByID(1) }
                XCTAssertTrue(backend.runner.inTransaction)
            }
            XCTAssertEqual(try users.countOf(), 14)
        }
    }

    func testStoreDaoCreatesTheTableAndKeepsRecordsAcrossReopen() throws {
        let directory = try temporaryDirectory()
        var store = try LogStore(directory: directory)
        var user = User(id: nil, name: "ann", color: 2, timestamp: 7)
        try store.dao(for: User.self).create(&user)
        XCTAssertEqual(user.id, 1)
        XCTAssertEqual(try store.sql("SELECT name FROM \"User\""), [[.text("ann")]])
        try store.close()
        store = try LogStore(directory: directory)
        defer { try? store.close() }
        let users = try store.dao(for: User.self)
        XCTAssertEqual(try users.queryForAll(), [user])
        var duplicate = User(id: nil, name: "ann", color: 0, timestamp: 0)
        XCTAssertThrowsError(try users.create(&duplicate), "the UNIQUE column survived the reopen")
    }

    /// A record of every mapped kind: its values survive the table (on both engines) and the
    /// query builder compares them as the mapping stores them.
    struct Note: Codable, DAORecord, Equatable {
        struct Meta: Codable, Equatable { var tags: [String]; var pinned: Bool }
        static let table = TableSchema("Note", primaryKey: "id", generatedID: true, indexes: [["created"]])
        var id: Int?
        var created: Date
        var done: Bool
        var body: Data
        var bytes: [UInt8]
        var meta: Meta
        var score: Double?
        var small: Int32
    }

    func testEveryMappedKindRoundTripsAndFilters() throws {
        try forEachBackend(Note.self) { notes, _ in
            var first = Note(id: nil, created: Date(timeIntervalSince1970: 1_700_000_000.5), done: true, body: Data([0, 1, 255]),
                             bytes: [9], meta: .init(tags: ["a", "b"], pinned: false), score: nil, small: -3)
            var second = Note(id: nil, created: Date(timeIntervalSince1970: 5), done: false, body: Data(), bytes: [],
                              meta: .init(tags: [], pinned: true), score: 0.25, small: Int32.max)
            try notes.create(&first)
            try notes.create(&second)
            XCTAssertEqual(try notes.queryForAll(), [first, second])
            XCTAssertEqual(try notes.queryForEq("done", true), [first])
            XCTAssertEqual(try notes.queryForEq("score", nil), [first])
            XCTAssertEqual(try notes.queryForEq("body", Data([0, 1, 255])), [first])
            XCTAssertEqual(try notes.queryBuilder().where { $0.lt("created", Date(timeIntervalSince1970: 100)) }.query(), [second])
            XCTAssertEqual(try notes.queryBuilder().where { $0.like("meta", "%pinned\":true%") }.query(), [second])
            XCTAssertEqual(try notes.queryBuilder().where { $0.eq("small", Int32.max) }.countOf(), 1)
            second.score = nil
            second.meta.tags = ["x"]
            XCTAssertEqual(try notes.update(second), 1)
            XCTAssertEqual(try notes.queryForID(second.id ?? 0), second, "an optional set to nil is written as NULL")
        }
    }
}
