import CrashTestSupport
@testable import DAO
import Foundation
import LogStore
import XCTest

/// Power loss simulated at every sync point under the SQL engine (PowerLossCampaign): DDL,
/// single-row statements, multi-row statements and transactions run once under the simulator;
/// after each simulated power loss the store and the database open, verify() reports nothing,
/// the table is exactly the state after some prefix of the statements (a statement or a
/// transaction is all or nothing), no older than the last acknowledged one in fsyncEachWrite or
/// than the last one acknowledged before the last completed sync in groupCommit, every row reads
/// back as written, and both indexes agree with the rows. An index checkpoint half way makes
/// the later statements journal their rows, so the opens replay its journal.
///
/// The default mode (`.processCrashSafe`, background syncer on with a 4 ms window, issue 21
/// item 3) runs the same workload and checks: a power loss may lose acknowledged statements, but
/// the table is still exactly the state after some prefix of them (from the empty one on), every
/// row reads back as written and both indexes agree with the rows. `verify()` must be clean
/// when the unsynced changes are all lost or all kept; with a random write-back order it may
/// report a segment created after the synced part without its header (skipped, as in
/// DefaultModePowerLossTests), which is counted.
final class DAOPowerLossTests: XCTestCase {
    /// rowid -> version; nil: the table does not exist yet.
    private typealias Table = [Int: Int]?
    /// Default-mode random outcomes whose `verify()` reported something (counted, not failed).
    private var verifyReports = 0
    /// Images showing an older state than the last acknowledged one (acknowledged statements lost).
    private var lossImages = 0
    /// Opens that loaded the index checkpoint and replayed its journal.
    private var journalReplays = 0

    private func options(_ durability: LogStore.Options.Durability) -> LogStore.Options {
        var options = LogStore.Options()
        options.segmentSize = 4 << 10    // segment rolls inside the workload
        options.durability = durability
        options.compactionTrigger = 2
        if durability == .processCrashSafe { options.maxUnsyncedInterval = 0.004 }
        return options
    }

    private func padding(_ version: Int) -> String { "w\(version)-" + String(repeating: "p", count: 60 + version % 150) }

    private func row(_ id: Int, _ version: Int) -> [DAOValue] {
        [.integer(Int64(id)), .text("k\(id)"), .integer(Int64(version)), .text(padding(version))]
    }

    private func workload(_ directory: URL, durability: LogStore.Options.Durability, journal: PowerLossJournal<Table>) throws {
        let store = try LogStore(directory: directory, options: options(durability))
        let db = try SQLDatabase.attached(to: store)
        func statement(_ note: String, _ sql: String, _ arguments: [DAOValue] = [], _ change: (inout [Int: Int]) -> Void) throws {
            journal.begin(note)
            try db.execute(sql, arguments: arguments)
            var table = journal.current ?? [:]
            change(&table)
            journal.acknowledge(table)
        }
        journal.begin("create table")
        try db.execute("CREATE TABLE f (id INTEGER PRIMARY KEY, k TEXT UNIQUE, v INTEGER, w TEXT)")
        journal.acknowledge([:])
        try statement("create index", "CREATE INDEX f_v ON f (v)") { _ in }
        for id in 0..<16 {
            try statement("insert \(id)", "INSERT INTO f VALUES (?, ?, ?, ?)", row(id, 100 + id)) { $0[id] = 100 + id }
            if id % 5 == 4 { Thread.sleep(forTimeInterval: 0.004) }
        }
        // An index checkpoint: the statements after it journal the rows they change, so the
        // opens after the cuts below load it and replay its journal (or read the rows when the
        // cut came before its record).
        try db.checkpoint()
        // A transaction: updates and deletes, one batch at COMMIT.
        journal.begin("transaction")
        try db.execute("BEGIN")
        for id in [1, 4, 7, 10] {
            try db.execute("UPDATE f SET v = ?, w = ? WHERE id = ?", arguments: [.integer(500), .text(padding(500)), .integer(Int64(id))])
        }
        for id in [2, 5] { try db.execute("DELETE FROM f WHERE id = ?", arguments: [.integer(Int64(id))]) }
        try db.execute("COMMIT")
        var table = journal.current ?? [:]
        for id in [1, 4, 7, 10] { table[id] = 500 }
        for id in [2, 5] { table[id] = nil }
        journal.acknowledge(table)
        Thread.sleep(forTimeInterval: 0.004)
        // Multi-row statements.
        try statement("delete v < 110", "DELETE FROM f WHERE v < 110") { $0 = $0.filter { $0.value >= 110 } }
        try statement("update v >= 500", "UPDATE f SET v = v + 1, w = ? WHERE v >= 500", [.text(padding(501))]) { table in
            for (id, version) in table where version >= 500 { table[id] = version + 1 }
        }
        for id in 20..<26 {
            try statement("insert or replace \(id)", "INSERT OR REPLACE INTO f VALUES (?, ?, ?, ?)", row(id, 700 + id)) { $0[id] = 700 + id }
        }
        try store.close()
    }

    private func read(_ directory: URL, durability: LogStore.Options.Durability, context: String) throws -> Table {
        let store = try LogStore(directory: directory, options: options(durability))
        defer { try? store.close() }
        let db = try SQLDatabase.attached(to: store)
        XCTAssertFalse(db.indexReport.contains { $0.contains("journal") }, "\(context): a journal that does not fit: \(db.indexReport)")
        if db.indexReport.isEmpty, db.checkpointJournal?.namedCount ?? 0 > 0 { journalReplays += 1 }
        let problems = try store.verify().problems
        if durability == .processCrashSafe && context.contains("random outcome") {
            if !problems.isEmpty { verifyReports += 1 }
        } else {
            XCTAssertEqual(problems, [], "\(context): verify")
        }
        guard db.tableNames().contains("f") else { return nil }
        var table: [Int: Int] = [:]
        for values in try db.execute("SELECT id, k, v, w FROM f ORDER BY id").rows {
            guard case .integer(let id) = values[0], case .integer(let version) = values[2] else {
                XCTFail("\(context): malformed row \(values)")
                continue
            }
            XCTAssertEqual(values, [.integer(id), .text("k\(id)"), .integer(version), .text(padding(Int(version)))], "\(context): row reads back wrong")
            table[Int(id)] = Int(version)
            XCTAssertEqual(try db.execute("SELECT id FROM f WHERE k = ?", arguments: [.text("k\(id)")]).rows, [[.integer(id)]],
                           "\(context): unique index on k")
        }
        let indexed = try db.execute("SELECT id FROM f WHERE v >= 0 ORDER BY v, id").rows.compactMap { values -> Int? in
            if case .integer(let id) = values[0] { return Int(id) }
            return nil
        }
        XCTAssertEqual(indexed.sorted(), table.keys.sorted(), "\(context): index on v")
        return table
    }

    private func campaign(_ name: String, _ durability: LogStore.Options.Durability) {
        let journal = PowerLossJournal<Table>(initial: nil)
        let report = PowerLossCampaign.run(name, workload: { directory in
            try workload(directory, durability: durability, journal: journal)
        }, check: { cut in
            let found = try read(cut.directory, durability: durability, context: cut.context)
            // The default mode promises a prefix, no more (its window: DefaultModePowerLossTests).
            let durableBefore = durability == .fsyncEachWrite ? cut.index
                : durability == .processCrashSafe ? 0 : cut.recording.afterLastSync(ofFilesEndingWith: ".seg", before: cut.index)
            let allowed = journal.allowed(cut: cut.index, durableBefore: durableBefore)
            if let match = journal.match(found, in: allowed), match < journal.acknowledged(before: cut.index) { lossImages += 1 }
            if journal.match(found, in: allowed) == nil {
                XCTFail("\(cut.context): the table is none of states \(allowed): \(found.map { $0.sorted { $0.key < $1.key } }.map(String.init(describing:)) ?? "no table")")
            }
        })
        XCTAssertGreaterThan(report.images, 10)
        // Only fsyncEachWrite syncs at every statement, so that a cut lands between the
        // checkpoint and the close's own checkpoint for certain; the timed modes may sync
        // there or not (a CI run of groupCommit had none).
        if durability == .fsyncEachWrite {
            XCTAssertGreaterThan(journalReplays, 0, "\(name): no open replayed the checkpoint's journal")
        }
        print("\(name): \(journalReplays) opens replayed the checkpoint's journal")
        if durability == .processCrashSafe {
            print("\(name): \(lossImages) images lost acknowledged statements (a shorter prefix), "
                  + "\(verifyReports) random outcomes reported by verify (a header not written back)")
        }
    }

    func testSQLStatementsAndTransactionsSurvivePowerLossInFsyncEachWrite() {
        campaign("dao-fsyncEachWrite", .fsyncEachWrite)
    }

    func testSQLStatementsAndTransactionsSurvivePowerLossInGroupCommit() {
        campaign("dao-groupCommit", .groupCommit(interval: 0.002))
    }

    /// Issue 21 item 3: the default mode, background syncer on.
    func testSQLStatementsAndTransactionsKeepAPrefixThroughPowerLossInTheDefaultMode() {
        campaign("dao-processCrashSafe", .processCrashSafe)
    }
}
