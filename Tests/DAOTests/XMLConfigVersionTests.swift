@testable import DAO
import Foundation
import LogStore
import XCTest

/// The XML configs' table versions on a LogStore live in the schema versions record with the
/// versioned open's version and the migrator's applied migrations (one truth, FORMAT.md "DAO
/// schema versions" format 0x02), and a store of an older build, whose versions are in a
/// `TableVersions` table, opens at the version it was at and has them moved into the record.
final class XMLConfigVersionTests: XCTestCase {
    struct Message: Codable, Equatable {
        var msgId: String
        var time: Int
        var content: String?
        var unread: Bool
    }

    override class func setUp() {
        DAOTypeRegistry.register(Message.self, as: "Message")
    }

    func testConfigVersionsShareTheRecordWithTheVersionedOpenAndTheMigrator() throws {
        let temporary = try TemporaryStore()
        _ = try temporary.store.openTables(version: 3, onCreate: { db in try db.execute("CREATE TABLE other (a)") },
                                       onUpgrade: { _, _, _ in XCTFail("upgrade") })
        let v1 = try DAOProxy(configText: XMLCorpus.messagesV1, store: temporary.store)
        _ = try v1.add(msgId: "old", time: 1, content: "x")
        XCTAssertEqual(try v1.storedVersion(), "1.0")
        let db = try temporary.database
        XCTAssertEqual(try db.configTableVersions(), ["messages": "1.0"])
        XCTAssertEqual(db.tableNames().sorted(), ["messages", "other"], "no TableVersions table")
        XCTAssertEqual(try db.userVersion(), 3)

        var migrator = DatabaseMigrator()
        migrator.registerMigration("m1") { db in try db.execute("INSERT INTO other VALUES (1)") }
        try migrator.migrate(db)
        XCTAssertEqual(try db.configTableVersions(), ["messages": "1.0"], "the migrator keeps the config versions")

        let v2 = try DAOProxy(configText: XMLCorpus.messages, store: temporary.store)
        let events = EventLog()
        v2.eventHandler = events.handler(answer: true)
        XCTAssertEqual(try v2.getMessage(msgId: "old") as? Message, Message(msgId: "old", time: 1, content: "x", unread: true))
        XCTAssertEqual(events.all, ["shouldUpgrade(table: \"messages\", from: \"1.0\", to: \"1.1\")"])

        try temporary.reopen()
        let reopened = try temporary.database
        XCTAssertEqual(try reopened.userVersion(), 3)
        XCTAssertEqual(try migrator.appliedMigrations(reopened), ["m1"])
        XCTAssertEqual(try reopened.configTableVersions(), ["messages": "1.1"])
        let bytes = try XCTUnwrap(try temporary.store.get(forKey: SchemaVersionRecord.key,
                                                           space: try XCTUnwrap(try reopened.existingSpace(named: "dao.catalog"))))
        // FORMAT.md's layout, format 0x02: version 3, migration "m1", table "messages" at "1.1".
        XCTAssertEqual(bytes, [0x02, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 2] + Array("m1".utf8)
                       + [0, 0, 0, 1, 0, 0, 0, 8] + Array("messages".utf8) + [0, 0, 0, 3] + Array("1.1".utf8))
        // A versioned open upgrading later keeps them too.
        try reopened.openVersion(4, onCreate: { _ in }, onUpgrade: { db, _, _ in try db.execute("DROP TABLE other") })
        XCTAssertEqual(try reopened.configTableVersions(), ["messages": "1.1"])
        XCTAssertEqual(try DAOProxy(configText: XMLCorpus.messages, store: temporary.store).storedVersion(), "1.1")
    }

    func testRecordFormatsRoundTripAndBadBytesAreRefused() throws {
        var record = SchemaVersionRecord()
        record.version = 2
        record.appliedMigrations = ["v1"]
        XCTAssertEqual(record.encoded().first, 0x01, "no config versions: written as format 1")
        XCTAssertEqual(try SchemaVersionRecord(decoding: record.encoded()), record)
        record.configVersions = ["b": "1.10", "a": "2.0", "é": "3"]
        let bytes = record.encoded()
        XCTAssertEqual(bytes.first, 0x02)
        XCTAssertEqual(try SchemaVersionRecord(decoding: bytes), record)
        // Names in byte order: "a", "b", then "é" (C3 A9).
        let text = String(decoding: bytes, as: UTF8.self)
        let a = try XCTUnwrap(text.range(of: "a\0")), b = try XCTUnwrap(text.range(of: "b\0")), e = try XCTUnwrap(text.range(of: "é"))
        XCTAssertTrue(a.lowerBound < b.lowerBound && b.lowerBound < e.lowerBound)
        for cut in [bytes.count - 1, bytes.count - 4, 14] {
            XCTAssertThrowsError(try SchemaVersionRecord(decoding: Array(bytes.prefix(cut))), "cut at \(cut)") { error in
                guard case StoreError.corrupt(let message) = error else { return XCTFail("\(error)") }
                XCTAssertTrue(message.contains("schema versions record"), message)
            }
        }
        XCTAssertThrowsError(try SchemaVersionRecord(decoding: [0x03] + bytes.dropFirst()))
        XCTAssertThrowsError(try SchemaVersionRecord(decoding: bytes + [0]))
    }

    func testFailingUpgradeBlockLeavesTheRecordAsItWas() throws {
        let temporary = try TemporaryStore()
        let config = { (version: String, step: String) in """
            <module name="U" tableName="u" initializer="create" version="\(version)">
              <update id="create">create table if not exists ${T} (a integer)</update>
              <upgrade toVersion="2.0"><step>insert into ${T} values (20)</step><step>\(step)</step></upgrade>
              <select id="all" result="[int]">select a from ${T} order by rowid</select>
            </module>
            """ }
        _ = try DAOProxy(configText: config("1.0", ""), store: temporary.store).all()
        let before = try temporary.database.readVersionRecord()
        XCTAssertThrowsError(try DAOProxy(configText: config("2.0", "insert into ${T} values (nosuchcolumn)"), store: temporary.store).all())
        XCTAssertEqual(try temporary.database.readVersionRecord(), before)
        XCTAssertEqual(try temporary.database.configTableVersions(), ["u": "1.0"])
        XCTAssertEqual(try DAOProxy(configText: config("2.0", "insert into ${T} values (21)"), store: temporary.store).all() as? [Int], [20, 21])
        XCTAssertEqual(try temporary.database.configTableVersions(), ["u": "2.0"])
    }

    /// What an older build left: the `TableVersions` table (FORMAT.md "XML DAO configs") beside
    /// the config's table.
    private func olderStore(_ temporary: TemporaryStore) throws {
        let db = try temporary.database
        try db.execute("CREATE TABLE IF NOT EXISTS TableVersions (name TEXT PRIMARY KEY, version TEXT NOT NULL)")
        try db.execute("CREATE TABLE IF NOT EXISTS messages (msgId text primary key, time integer, content text, unread integer)")
        try db.execute("INSERT INTO messages VALUES ('old', 1, 'x', 1)")
        try db.execute("INSERT INTO TableVersions VALUES ('messages', '1.0'), ('elsewhere', '7.2')")
        try temporary.reopen()
    }

    func testAnOlderStoreKeepsItsVersionAndMovesItIntoTheRecord() throws {
        let temporary = try TemporaryStore()
        try olderStore(temporary)
        XCTAssertEqual(try temporary.database.configTableVersions(), ["messages": "1.0", "elsewhere": "7.2"])
        // The same config version: no upgrade, no create; the versions move into the record.
        let v1 = try DAOProxy(configText: XMLCorpus.messagesV1, store: temporary.store)
        let events = EventLog()
        v1.eventHandler = events.handler(answer: true)
        _ = try v1.add(msgId: "new", time: 2, content: "y")
        XCTAssertEqual(events.all, [])
        XCTAssertEqual(try v1.storedVersion(), "1.0")
        try temporary.reopen()
        let db = try temporary.database
        XCTAssertEqual(db.tableNames().sorted(), ["messages"], "TableVersions dropped")
        XCTAssertEqual(try db.readVersionRecord().configVersions, ["messages": "1.0", "elsewhere": "7.2"])
        XCTAssertEqual(try db.execute("SELECT msgId FROM messages ORDER BY time").rows, [[.text("old")], [.text("new")]])
    }

    func testAnOlderStoreUpgradesFromTheVersionItsTableRecorded() throws {
        let temporary = try TemporaryStore()
        try olderStore(temporary)
        let v2 = try DAOProxy(configText: XMLCorpus.messages, store: temporary.store)
        let events = EventLog()
        v2.eventHandler = events.handler(answer: true)
        XCTAssertEqual(try v2.countMessages() as? Int, 1)
        XCTAssertEqual(events.all, ["shouldUpgrade(table: \"messages\", from: \"1.0\", to: \"1.1\")"])
        XCTAssertEqual(try v2.executeQuery(sql: "SELECT msgId, extra FROM messages"), [["msgId": .text("old"), "extra": .null]])
        try temporary.reopen()
        let db = try temporary.database
        XCTAssertEqual(try db.configTableVersions(), ["messages": "1.1", "elsewhere": "7.2"])
        XCTAssertFalse(db.tableNames().contains("TableVersions"))
        XCTAssertEqual(try db.userVersion(), 0, "no versioned open happened")
    }
}
