import Foundation
import LogStore
import XCTest

@testable import DAO

/// A store that encrypts keeps no index checkpoint file: its entries are indexed values as they
/// are, and nothing of an encrypting store may reach the disk in plaintext outside its records
/// (FORMAT.md "DAO index checkpoint"). Its tables open by reading their rows.
final class EncryptedCheckpointTests: XCTestCase {
    private let marker = "plaintext-marker-"
    private var directory: URL!

    override func setUp() {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("dao-enc-checkpoint-\(UUID())")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
    }

    private var encrypting: LogStore.Options {
        var options = LogStore.Options()
        options.encryption = LogStore.Options.Encryption(key: Array(repeating: 9, count: 32), keyID: 1)
        return options
    }

    private var checkpointPath: String { directory.appendingPathComponent(IndexCheckpointFile.name).path }

    private func fill(_ db: SQLDatabase) throws {
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE, k INTEGER)")
        try db.execute("CREATE INDEX tk ON t (k, name)")
        try db.execute("BEGIN")
        for i in 0..<300 { try db.execute("INSERT INTO t VALUES (?, ?, ?)", arguments: [.integer(Int64(i)), .text("\(marker)\(i)"), .integer(Int64(i % 13))]) }
        try db.execute("COMMIT")
    }

    private func answers(_ db: SQLDatabase) throws -> [[[DAOValue]]] {
        try ["SELECT id, name, k FROM t ORDER BY id", "SELECT id FROM t WHERE k = 5 ORDER BY name",
             "SELECT id FROM t WHERE name = '\(marker)77'"].map { try db.execute($0).rows }
    }

    /// Whether any file of the store holds `bytes` (the directory is small).
    private func someFileHolds(_ bytes: String) throws -> Bool {
        let needle = Data(bytes.utf8)
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let data = try Data(contentsOf: directory.appendingPathComponent(name))
            if data.range(of: needle) != nil { return true }
        }
        return false
    }

    func testAStoreThatEncryptsWritesNoCheckpointAndReopensFromItsRows() throws {
        var store = try LogStore(directory: directory, options: encrypting)
        var db = try SQLDatabase.attached(to: store)
        try fill(db)
        let expected = try answers(db)
        try db.checkpoint()
        try store.close()
        XCTAssertFalse(FileManager.default.fileExists(atPath: checkpointPath), "no checkpoint file in a store that encrypts")
        XCTAssertFalse(try someFileHolds("\(marker)77"), "no indexed value in plaintext in any file")
        store = try LogStore(directory: directory, options: encrypting)
        db = try SQLDatabase.attached(to: store)
        XCTAssertEqual(try answers(db), expected)
        try db.execute("UPDATE t SET k = k + 1 WHERE id < 50")
        try store.close()
        XCTAssertFalse(try someFileHolds("\(marker)77"))
    }

    /// A plain store's checkpoint goes at the attach of the store opened with a key (its new
    /// records are encrypted; its plaintext checkpoint must not stay beside them).
    func testAPlaintextCheckpointGoesWhenTheStoreIsOpenedWithAKey() throws {
        var store = try LogStore(directory: directory)
        var db = try SQLDatabase.attached(to: store)
        try fill(db)
        let expected = try answers(db)
        try store.close()
        XCTAssertTrue(FileManager.default.fileExists(atPath: checkpointPath), "a plain store keeps its checkpoint")

        store = try LogStore(directory: directory, options: encrypting)
        db = try SQLDatabase.attached(to: store)
        XCTAssertTrue(db.indexReport.contains { $0.contains("not kept in a store that encrypts") }, "\(db.indexReport)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: checkpointPath))
        XCTAssertEqual(try answers(db), expected)
        try store.close()
        try assertNoCheckpointLeft(expected)
    }

    /// A checkpoint in use (with its journal) goes at the close after a rekey gave the store a
    /// key while the database was attached.
    func testAPlaintextCheckpointGoesAtTheCloseAfterARekey() throws {
        var store = try LogStore(directory: directory)
        var db = try SQLDatabase.attached(to: store)
        try fill(db)
        try store.close()
        store = try LogStore(directory: directory)
        db = try SQLDatabase.attached(to: store)
        XCTAssertEqual(db.indexReport, [], "the checkpoint is used")
        try db.execute("UPDATE t SET k = k + 1 WHERE id < 20")
        let expected = try answers(db)
        try store.rekey(to: encrypting.encryption!)
        try db.execute("UPDATE t SET k = k WHERE id = 1")
        try store.close()
        XCTAssertFalse(FileManager.default.fileExists(atPath: checkpointPath), "the close after a rekey removes the plaintext checkpoint")
        try assertNoCheckpointLeft(expected)
    }

    /// Reopens with the key: the same answers, and neither a checkpoint record nor a journal
    /// record left in the store.
    private func assertNoCheckpointLeft(_ expected: [[[DAOValue]]], file: StaticString = #filePath, line: UInt = #line) throws {
        let store = try LogStore(directory: directory, options: encrypting)
        defer { try? store.close() }
        let db = try SQLDatabase.attached(to: store)
        XCTAssertEqual(try answers(db), expected, file: file, line: line)
        XCTAssertEqual(db.indexReport, [], "nothing left to remove", file: file, line: line)
        let space = try store.space(named: SQLDatabase.checkpointSpaceName)
        XCTAssertEqual(try store.keys(space: space), [], "no checkpoint or journal record left", file: file, line: line)
    }
}
