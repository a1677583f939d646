@testable import DAO
import Foundation
import LogStore
import XCTest

/// The index checkpoint's journal (FORMAT.md "DAO index checkpoint"): commits after a
/// checkpoint name the rows they change, so that an attach after a crash loads the checkpoint
/// and replays the journal instead of reading every row, with the same rows and index entries
/// as the rows themselves give; and a journal that does not fit is never trusted.
final class CheckpointJournalTests: XCTestCase {
    private let queries = [
        "SELECT id, k, name FROM t ORDER BY id",
        "SELECT id FROM t WHERE k BETWEEN 10 AND 30 ORDER BY k DESC, id",
        "SELECT id, name FROM t WHERE name > 'n5' ORDER BY name LIMIT 7",
        "SELECT count(*), sum(k) FROM t",
        "SELECT a, b FROM u ORDER BY b, a",
    ]

    private func create(_ db: SQLDatabase, rows: Int = 400) throws {
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, k INTEGER, name TEXT UNIQUE)")
        try db.execute("CREATE INDEX tk ON t (k DESC, name)")
        try db.execute("CREATE TABLE u (a, b)")
        try db.execute("CREATE INDEX ub ON u (b)")
        try db.execute("BEGIN")
        for i in 0..<rows {
            try db.execute("INSERT INTO t VALUES (?, ?, ?)", arguments: [.integer(Int64(i * 3)), .integer(Int64(i % 41)), .text("n\(i)")])
        }
        for i in 0..<50 { try db.execute("INSERT INTO u VALUES (?, ?)", arguments: [.integer(Int64(i)), .text("b\(i % 7)")]) }
        try db.execute("COMMIT")
    }

    private func answers(_ db: SQLDatabase) throws -> [[[DAOValue]]] {
        try queries.map { try db.execute($0).rows }
    }

    /// A copy of the store's directory taken while it is open, as a crash leaves it.
    private func crashCopy(_ temporary: TemporaryStore) throws -> URL {
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("dao-journal-crash-\(UUID())")
        try FileManager.default.copyItem(at: temporary.directory, to: copy)
        try? FileManager.default.removeItem(at: copy.appendingPathComponent("LOCK"))
        return copy
    }

    /// A store with the tables and a checkpoint, then `changes` (each its own commit): the
    /// store, its database, the answers after the changes, and a copy of the directory taken
    /// while open (the caller removes it).
    private func changedAfterCheckpoint(_ changes: [String], options: LogStore.Options = LogStore.Options())
        throws -> (temporary: TemporaryStore, db: SQLDatabase, expected: [[[DAOValue]]], crashed: URL) {
        let temporary = try TemporaryStore(options: options)
        let db = try temporary.database
        try create(db)
        try db.checkpoint()
        for change in changes { try db.execute(change) }
        return (temporary, db, try answers(db), try crashCopy(temporary))
    }

    /// Every table's rowid order and index entries equal what its rows give.
    private func assertIndexesMatchRows(_ db: SQLDatabase, _ context: String, file: StaticString = #filePath, line: UInt = #line) throws {
        for name in ["t", "u"] {
            let table = try db.table(named: name)
            let rows = try db.execute("SELECT rowid, * FROM \(name) ORDER BY rowid").rows
            XCTAssertEqual(table.allRowids, rows.map { row -> Int64 in
                if case .integer(let id) = row[0] { return id }
                return -1
            }, "\(context): rowids of \(name)", file: file, line: line)
            for index in table.indexes {
                var expected: [[UInt8]] = []
                for row in rows {
                    guard case .integer(let rowid) = row[0] else { continue }
                    let values = row.dropFirst().map(SQLValue.init)
                    expected.append(IndexKeyCodec.entry(columns: index.schema.columns, of: Array(values), rowid: rowid, descending: index.schema.descending))
                }
                expected.sort { $0.lexicographicallyPrecedes($1) }
                var found: [[UInt8]] = []
                var position = index.entries.startPosition
                while let entry = index.entries.withEntry(at: position, { Array($0) }) {
                    found.append(entry)
                    position = index.entries.next(position)
                }
                XCTAssertEqual(found, expected, "\(context): entries of \(index.schema.name)", file: file, line: line)
            }
        }
    }

    func testAttachAfterACrashReplaysTheJournalInsteadOfReadingTheRows() throws {
        let temporary = try TemporaryStore(), reference = try TemporaryStore()
        let db = try temporary.database, oracle = try reference.database
        try create(db)
        try create(oracle)
        try db.checkpoint()
        var random = SystemRandomNumberGenerator()
        var crashes: [URL] = []
        defer { for url in crashes { try? FileManager.default.removeItem(at: url) } }
        for round in 0..<6 {
            // Inserts (new rowids and rowids deleted before), updates of indexed columns (the
            // same rows again and again), deletes, a rolled-back transaction, both tables.
            var statements: [(String, [DAOValue])] = []
            for _ in 0..<30 {
                let id = Int64.random(in: 0..<1_400, using: &random)
                switch Int.random(in: 0..<5, using: &random) {
                case 0: statements.append(("INSERT OR REPLACE INTO t VALUES (?, ?, ?)", [.integer(id), .integer(id % 13), .text("r\(round)-\(id)")]))
                case 1: statements.append(("UPDATE t SET k = k + 1, name = name || 'x' WHERE id = ?", [.integer(id / 3 * 3)]))
                case 2: statements.append(("DELETE FROM t WHERE id = ?", [.integer(id / 3 * 3)]))
                case 3: statements.append(("UPDATE u SET b = ? WHERE a = ?", [.text("c\(id % 5)"), .integer(id % 60)]))
                default: statements.append(("INSERT INTO u VALUES (?, ?)", [.integer(id % 60), .text("d\(id % 3)")]))
                }
            }
            try db.execute("BEGIN")
            try db.execute("UPDATE t SET k = -1 WHERE id < 300")
            try db.execute("DELETE FROM u WHERE a < 10")
            try db.execute("ROLLBACK")
            for (sql, arguments) in statements {
                // A statement may fail (a UNIQUE clash): both engines must fail it alike,
                // which the answers below check.
                _ = try? db.execute(sql, arguments: arguments)
                _ = try? oracle.execute(sql, arguments: arguments)
            }
            XCTAssertEqual(try answers(db), try answers(oracle), "round \(round)")
            let crashed = try crashCopy(temporary)
            crashes.append(crashed)
            let store = try LogStore(directory: crashed)
            let reopened = try SQLDatabase.attached(to: store)
            XCTAssertEqual(reopened.indexReport, [], "round \(round): the journal replayed, no rows read")
            XCTAssertFalse(reopened.checkpointCurrent, "round \(round): the file alone is not the tables")
            XCTAssertEqual(try answers(reopened), try answers(oracle), "round \(round)")
            try assertIndexesMatchRows(reopened, "round \(round)")
            XCTAssertThrowsError(try reopened.execute("INSERT INTO t (k, name) SELECT k, name FROM t LIMIT 1"), "the unique index replayed")
            // The reopened copy journals on from the replayed state; a crash of it replays both.
            try reopened.execute("UPDATE t SET name = name || 'y' WHERE id IN (SELECT id FROM t ORDER BY id LIMIT 3)")
            try reopened.execute("INSERT INTO u VALUES (1000, 'late')")
            let expected = try answers(reopened)
            let second = FileManager.default.temporaryDirectory.appendingPathComponent("dao-journal-crash-\(UUID())")
            crashes.append(second)
            try FileManager.default.copyItem(at: crashed, to: second)
            try? FileManager.default.removeItem(at: second.appendingPathComponent("LOCK"))
            try store.close()
            let secondStore = try LogStore(directory: second)
            defer { try? secondStore.close() }
            let again = try SQLDatabase.attached(to: secondStore)
            XCTAssertEqual(again.indexReport, [], "round \(round), second crash")
            XCTAssertEqual(try answers(again), expected, "round \(round), second crash")
            try assertIndexesMatchRows(again, "round \(round), second crash")
        }
        // A checkpoint starts a new journal and deletes the old one's records.
        let space = try XCTUnwrap(db.checkpointSpace)
        XCTAssertGreaterThan(try temporary.store.keys(space: space, prefix: [CheckpointJournal.keyPrefix]).count, 0)
        try db.checkpoint()
        XCTAssertEqual(try temporary.store.keys(space: space, prefix: [CheckpointJournal.keyPrefix]), [])
        XCTAssertEqual(db.checkpointJournal?.namedCount, 0)
    }

    func testASchemaChangeAfterTheCheckpointDropsItsRecord() throws {
        let (_, _, expected, crashed) = try changedAfterCheckpoint(["UPDATE t SET k = 7 WHERE id = 3", "CREATE INDEX un ON u (a)",
                                                                     "INSERT INTO u VALUES (99, 'z')"])
        defer { try? FileManager.default.removeItem(at: crashed) }
        let store = try LogStore(directory: crashed)
        defer { try? store.close() }
        let reopened = try SQLDatabase.attached(to: store)
        XCTAssertTrue(reopened.indexReport.first?.contains("older") == true, "\(reopened.indexReport)")
        XCTAssertEqual(try answers(reopened), expected)
        try assertIndexesMatchRows(reopened, "after the schema change")
    }

    /// An AUTOINCREMENT table's inserts move its sequence (a catalog record): that is not a
    /// schema change, and the journal carries on; the sequence comes back with the catalog.
    func testAutoincrementInsertsAreJournaled() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        try db.execute("CREATE TABLE a (id INTEGER PRIMARY KEY AUTOINCREMENT, s TEXT)")
        try db.execute("CREATE INDEX a_s ON a (s)")
        for i in 0..<20 { try db.execute("INSERT INTO a (s) VALUES (?)", arguments: [.text("s\(i % 4)")]) }
        try db.checkpoint()
        try db.execute("INSERT INTO a (s) VALUES ('after')")
        try db.execute("DELETE FROM a WHERE id = 21")
        try db.execute("INSERT INTO a (s) VALUES ('later')")
        XCTAssertTrue(db.checkpointRecordPresent)
        XCTAssertEqual(db.checkpointJournal?.namedCount, 2)
        let crashed = try crashCopy(temporary)
        defer { try? FileManager.default.removeItem(at: crashed) }
        let store = try LogStore(directory: crashed)
        defer { try? store.close() }
        let reopened = try SQLDatabase.attached(to: store)
        XCTAssertEqual(reopened.indexReport, [])
        XCTAssertEqual(try reopened.execute("SELECT id FROM a WHERE s IN ('after', 'later')").rows, [[.integer(22)]])
        try reopened.execute("INSERT INTO a (s) VALUES ('next')")
        XCTAssertEqual(try reopened.execute("SELECT id FROM a WHERE s = 'next'").rows, [[.integer(23)]], "the sequence came back")
    }

    func testAJournalPastItsLimitDropsTheRecord() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        try create(db)
        try db.checkpoint()
        db.journalLimit = 20
        try db.execute("UPDATE t SET k = 1 WHERE id < 30")   // 10 rows: journaled
        XCTAssertEqual(db.checkpointJournal?.namedCount, 10)
        try db.execute("UPDATE t SET k = 2 WHERE id < 30")   // the same rows: nothing to journal
        XCTAssertEqual(db.checkpointJournal?.namedCount, 10)
        try db.execute("UPDATE t SET k = 3 WHERE id < 60")   // 10 more named: 20, at the limit
        XCTAssertEqual(db.checkpointJournal?.namedCount, 20)
        let atLimit = try crashCopy(temporary)
        defer { try? FileManager.default.removeItem(at: atLimit) }
        try db.execute("UPDATE t SET k = 4 WHERE id = 60")   // one more: the record goes
        XCTAssertNil(db.checkpointJournal)
        XCTAssertFalse(db.checkpointRecordPresent)
        let expected = try answers(db)
        let crashed = try crashCopy(temporary)
        defer { try? FileManager.default.removeItem(at: crashed) }
        for (directory, replayed) in [(atLimit, true), (crashed, false)] {
            let store = try LogStore(directory: directory)
            defer { try? store.close() }
            let reopened = try SQLDatabase.attached(to: store)
            if replayed {
                XCTAssertEqual(reopened.indexReport, [])
            } else {
                XCTAssertTrue(reopened.indexReport.first?.contains("older") == true, "\(reopened.indexReport)")
                XCTAssertEqual(try answers(reopened), expected)
            }
            try assertIndexesMatchRows(reopened, "replayed: \(replayed)")
        }
    }

    /// A journal that does not fit the file (a record missing, damaged, or naming what the
    /// file does not have) is refused whole: attach reads the rows and says why.
    func testAJournalThatDoesNotFitIsRefusedAndTheRowsRead() throws {
        let damages: [(String, (LogStore, LogStore.KeySpace, [[UInt8]]) throws -> Void)] = [
            ("record 0 missing", { store, space, keys in try store.delete(forKey: keys[0], space: space) }),
            ("record 1: index checkpoint journal record", { store, space, keys in try store.put([1, 1, 0, 0], forKey: keys[1], space: space) }),
            ("not in index", { store, space, keys in
                var record = try JournalRecord.decode(try XCTUnwrap(store.get(forKey: keys[0], space: space)))
                let i = try XCTUnwrap(record.tables.firstIndex { $0.rows.contains { $0.entries?.isEmpty == false } })
                let r = try XCTUnwrap(record.tables[i].rows.firstIndex { $0.entries?.isEmpty == false })
                record.tables[i].rows[r].entries?[0][0] ^= 0x01
                try store.put(record.encoded(), forKey: keys[0], space: space)
            }),
            ("names row 66 again", { store, space, keys in
                // A row named twice in one record (with no entries: nothing to take out first).
                var record = try JournalRecord.decode(try XCTUnwrap(store.get(forKey: keys[2], space: space)))
                record.tables[0].rows += [JournalRecord.Row(rowid: 66, entries: nil), JournalRecord.Row(rowid: 66, entries: nil)]
                try store.put(record.encoded(), forKey: keys[2], space: space)
            }),
            ("is not in the checkpoint as named", { store, space, keys in
                var record = try JournalRecord.decode(try XCTUnwrap(store.get(forKey: keys[1], space: space)))
                record.tables[0].rows[0].entries = nil
                try store.put(record.encoded(), forKey: keys[1], space: space)
            }),
        ]
        for (reason, damage) in damages {
            let (_, db, expected, crashed) = try changedAfterCheckpoint(["UPDATE t SET k = 99, name = 'changed' WHERE id = 30",
                                                                          "DELETE FROM t WHERE id = 33", "INSERT INTO u VALUES (7, 'new')"])
            defer { try? FileManager.default.removeItem(at: crashed) }
            do {
                let store = try LogStore(directory: crashed)
                let space = try XCTUnwrap(db.checkpointSpace)
                let keys = try store.keys(space: space, prefix: [CheckpointJournal.keyPrefix])
                XCTAssertEqual(keys.count, 3, reason)
                try damage(store, space, keys)
                try store.close()
            }
            let store = try LogStore(directory: crashed)
            let reopened = try SQLDatabase.attached(to: store)
            XCTAssertEqual(reopened.indexReport.count, 1, "\(reason): \(reopened.indexReport)")
            XCTAssertTrue(reopened.indexReport.first?.contains(reason) == true, "\(reason): \(reopened.indexReport)")
            XCTAssertEqual(try answers(reopened), expected, reason)
            try assertIndexesMatchRows(reopened, reason)
            XCTAssertFalse(reopened.checkpointRecordPresent, "\(reason): the record is gone, so no attach tries it again")
            try store.close()
        }
    }

    /// tools/read_store.py, written from FORMAT.md, applies the journal to the file and finds
    /// the tables' rowids and index entries agreeing with the rows; it refuses a journal that
    /// names an entry the file does not have.
    func testTheFormatReaderAppliesTheJournal() throws {
        try readerAppliesTheJournal(options: LogStore.Options())
        // Compressed records (a journal record of many rows is above the threshold).
        var compressed = LogStore.Options()
        compressed.compression = .init(level: 3, threshold: 16)
        try readerAppliesTheJournal(options: compressed)
    }

    private func readerAppliesTheJournal(options: LogStore.Options) throws {
        let (temporary, db, _, crashed) = try changedAfterCheckpoint(
            ["UPDATE t SET k = 99, name = 'changed' WHERE id = 30", "DELETE FROM t WHERE id IN (33, 36)",
             "INSERT INTO t VALUES (-4, 1, 'negative')", "INSERT INTO u VALUES (7, 'new')"], options: options)
        _ = temporary   // kept open while the copy is read
        defer { try? FileManager.default.removeItem(at: crashed) }
        let (status, output) = try runReader(crashed)
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains("\"journal_rows\":5"), output)
        XCTAssertFalse(output.contains("disagree"), output)
        // An entry the file does not have: the reader refuses the journal, as attach does.
        let store = try LogStore(directory: crashed, options: options)
        let space = try XCTUnwrap(db.checkpointSpace)
        let key = CheckpointJournal.key(stamp: try XCTUnwrap(db.checkpointJournal?.stamp), sequence: 0)
        var record = try JournalRecord.decode(try XCTUnwrap(store.get(forKey: key, space: space)))
        record.tables[0].rows[0].entries?[0][0] ^= 0x01
        try store.put(record.encoded(), forKey: key, space: space)
        try store.close()
        let (refused, message) = try runReader(crashed)
        XCTAssertEqual(refused, 1, message)
        XCTAssertTrue(message.contains("DISAGREE"), message)
    }

    private func runReader(_ directory: URL) throws -> (status: Int32, output: String) {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("tools/read_store.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, "--dao-indexes", directory.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        do { try process.run() } catch { throw XCTSkip("python3 is not available: \(error)") }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    /// A store whose record is version 2 (written before the journal) still loads its file;
    /// no commit journals under it (a reader that knows only version 2 would take the file
    /// alone), the first one deletes it.
    func testAVersion2RecordIsLoadedAndNeverJournaled() throws {
        let temporary = try TemporaryStore()
        var db = try temporary.database
        try create(db)
        try db.checkpoint()
        let space = try XCTUnwrap(db.checkpointSpace)
        var record = try XCTUnwrap(temporary.store.get(forKey: SQLDatabase.checkpointKey, space: space))
        XCTAssertEqual(record.first, 3)
        record[0] = 2
        try temporary.store.put(record, forKey: SQLDatabase.checkpointKey, space: space)
        let copy = try crashCopy(temporary)   // closing would write a new checkpoint
        defer { try? FileManager.default.removeItem(at: copy) }
        let store = try LogStore(directory: copy)
        defer { try? store.close() }
        db = try SQLDatabase.attached(to: store)
        XCTAssertEqual(db.indexReport, [])
        XCTAssertTrue(db.checkpointCurrent)
        XCTAssertNil(db.checkpointJournal)
        try db.execute("UPDATE t SET k = 5 WHERE id = 3")
        XCTAssertFalse(db.checkpointRecordPresent)
        XCTAssertNil(try store.get(forKey: SQLDatabase.checkpointKey, space: space))
        XCTAssertEqual(try store.keys(space: space, prefix: [CheckpointJournal.keyPrefix]), [])
    }

    func testARecordRoundTripsAndEveryCutIsMalformed() throws {
        let record = JournalRecord(tables: [
            JournalRecord.Table(space: 0x8000_0001, indexCount: 2, rows: [
                JournalRecord.Row(rowid: -5, entries: [[1, 2, 3], []]),
                JournalRecord.Row(rowid: 1 << 40, entries: nil),
            ]),
            JournalRecord.Table(space: 7, indexCount: 0, rows: [JournalRecord.Row(rowid: 0, entries: [])]),
        ])
        let bytes = record.encoded()
        XCTAssertEqual(try JournalRecord.decode(bytes), record)
        XCTAssertEqual(Array(bytes.prefix(17)), [1, 2, 0, 0, 0, 1, 0, 0, 0x80, 2, 0, 0, 0, 2, 0, 0, 0])
        for cut in 0..<bytes.count {
            XCTAssertThrowsError(try JournalRecord.decode(Array(bytes.prefix(cut))), "cut at \(cut)")
        }
        XCTAssertThrowsError(try JournalRecord.decode(bytes + [0]), "a byte after the end")
        XCTAssertThrowsError(try JournalRecord.decode([1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0x7F]), "a row count past the end")
        XCTAssertEqual(CheckpointJournal.key(stamp: 0x0102, sequence: 3), [0x6A, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 3])
    }

    /// FORMAT.md's worked journal record: the table of its checkpoint example, the row (2, 'a')
    /// changed after the checkpoint.
    func testTheWorkedRecordOfFormatMD() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
        try db.execute("CREATE INDEX tn ON t (name)")
        try db.execute("INSERT INTO t VALUES (1, 'b'), (2, 'a')")
        try db.checkpoint()
        try db.execute("UPDATE t SET name = 'c' WHERE rowid = 2")
        let stamp = try XCTUnwrap(db.checkpointJournal?.stamp)
        let value = try XCTUnwrap(temporary.store.get(forKey: CheckpointJournal.key(stamp: stamp, sequence: 0), space: try XCTUnwrap(db.checkpointSpace)))
        let documented: [UInt8] = [
            0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
            0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x0c, 0x00, 0x00, 0x00, 0x20, 0x61,
            0x00, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
        ]
        XCTAssertEqual(value, documented)
        let space = try db.table(named: "t").space
        XCTAssertEqual(space, 0x8000_0000, "the example's table space")
    }
}
