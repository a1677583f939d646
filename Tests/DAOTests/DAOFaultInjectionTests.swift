import CrashTestSupport
import DAO
import Foundation
import LogStore
import XCTest

/// I/O error injection under the SQL engine: a workload of DDL, single-row statements, a
/// transaction and a multi-row DELETE runs once to count its I/O calls, then once per call with
/// that call failing. A statement is one atomic batch, so after each fault, once reopened:
/// every acknowledged statement's rows are there, a statement that threw is wholly applied or not
/// at all, and both indexes agree with the rows. Tables live in memory too, so the engine must
/// also keep memory and disk in step after a failure (a rolled-back statement whose batch may
/// still reach the disk). Index checkpoints are written in the middle and at the end, so faults
/// also hit their file and record, and reopens load indexes from a checkpoint that held.
final class DAOFaultInjectionTests: XCTestCase {
    private typealias Table = [Int: Int]   // rowid -> version

    /// What each row may hold after the workload: one version (or absence) when every statement
    /// touching it was acknowledged, several when one threw (its batch may or may not be on disk).
    private struct Model {
        var possible: [Int: Set<Int?>] = [:]
        /// Failed statements over rows that were certain before: all of them applied or none.
        var uncertainBatches: [[(id: Int, version: Int?)]] = []
        var tableMayBeMissing = true
        var failures: [String] = []

        func states(_ id: Int) -> Set<Int?> { possible[id] ?? [nil] }

        /// An acknowledged statement: `change` maps each row's old state to its new one.
        mutating func apply(_ ids: [Int], _ change: (Int?) -> Int?) {
            for id in ids { possible[id] = Set(states(id).map(change)) }
            uncertainBatches = uncertainBatches.map { $0.filter { !ids.contains($0.id) } }.filter { !$0.isEmpty }
        }

        /// A statement that threw: each row may show its old or its new state.
        mutating func uncertain(_ ids: [Int], _ change: (Int?) -> Int?, error: Error) {
            if ids.allSatisfy({ states($0).count == 1 }) {
                uncertainBatches.append(ids.map { (id: $0, version: change(states($0).first!)) })
            }
            for id in ids { possible[id] = states(id).union(states(id).map(change)) }
            record(error)
        }

        /// A statement's error must be the store's (typed), or the missing table when its
        /// CREATE TABLE itself failed.
        mutating func record(_ error: Error) {
            if error is StoreError { return }
            if case DAOError.noSuchTable = error, tableMayBeMissing { return }
            failures.append("not a StoreError: \(error)")
        }
    }

    private var folders: [URL] = []

    override func tearDown() {
        for folder in folders { try? FileManager.default.removeItem(at: folder) }
        folders = []
    }

    private func folder() -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("dao-fault-\(UUID().uuidString)")
        folders.append(url)
        return url
    }

    private func options(_ durability: LogStore.Options.Durability) -> LogStore.Options {
        var options = LogStore.Options()
        options.segmentSize = 4 << 10    // segment rolls inside the workload
        options.durability = durability
        options.compactionTrigger = 2    // no background compaction: the call sequence is fixed
        return options
    }

    private func padding(_ version: Int) -> String { "w\(version)-" + String(repeating: "p", count: 100 + version % 200) }

    private func row(_ id: Int, _ version: Int) -> [DAOValue] {
        [.integer(Int64(id)), .text("k\(id)"), .integer(Int64(version)), .text(padding(version))]
    }

    private func runWorkload(at directory: URL, durability: LogStore.Options.Durability, model: inout Model) {
        let store: LogStore
        let db: SQLDatabase
        do {
            store = try LogStore(directory: directory, options: options(durability))
            db = try SQLDatabase.attached(to: store)
        } catch {
            model.record(error)
            return
        }
        defer { try? store.close() }
        do {
            try db.execute("CREATE TABLE f (id INTEGER PRIMARY KEY, k TEXT UNIQUE, v INTEGER, w TEXT)")
            model.tableMayBeMissing = false
        } catch {
            model.record(error)
        }
        do { try db.execute("CREATE INDEX f_v ON f (v)") } catch { model.record(error) }
        for id in 0..<30 {
            let version = 100 + id
            do {
                try db.execute("INSERT INTO f VALUES (?, ?, ?, ?)", arguments: row(id, version))
                model.apply([id]) { _ in version }
            } catch {
                model.uncertain([id], { _ in version }, error: error)
            }
        }
        // One transaction: five updates and two deletes, one batch at COMMIT.
        let updated = [1, 4, 7, 10, 13], deleted = [2, 5]
        let transaction: (Int) -> (Int?) -> Int? = { id in { old in deleted.contains(id) ? nil : old.map { _ in 500 } } }
        do {
            try db.execute("BEGIN")
            for id in updated {
                try db.execute("UPDATE f SET v = ?, w = ? WHERE id = ?", arguments: [.integer(500), .text(padding(500)), .integer(Int64(id))])
            }
            for id in deleted { try db.execute("DELETE FROM f WHERE id = ?", arguments: [.integer(Int64(id))]) }
            try db.execute("COMMIT")
            for id in updated + deleted { model.apply([id], transaction(id)) }
        } catch {
            if db.inTransaction { _ = try? db.execute("ROLLBACK") }
            if (updated + deleted).allSatisfy({ model.states($0).count == 1 }) {
                model.uncertainBatches.append((updated + deleted).map { (id: $0, version: transaction($0)(model.states($0).first!)) })
            }
            for id in updated + deleted {
                model.possible[id] = model.states(id).union(model.states(id).map(transaction(id)))
            }
            model.record(error)
        }
        // An index checkpoint (its file and record), made stale by the statements below.
        do { try db.checkpoint() } catch { model.record(error) }
        // Single-row deletes, some of rows whose insert may have failed above.
        for id in stride(from: 3, to: 30, by: 4) {
            do {
                try db.execute("DELETE FROM f WHERE id = ?", arguments: [.integer(Int64(id))])
                model.apply([id]) { _ in nil }
            } catch {
                model.uncertain([id], { _ in nil }, error: error)
            }
        }
        let low: (Int?) -> Int? = { old in old.flatMap { $0 < 110 ? nil : $0 } }
        do {
            try db.execute("DELETE FROM f WHERE v < 110")
            model.apply(Array(0..<30), low)
        } catch {
            model.uncertain(Array(0..<30), low, error: error)
        }
        for id in 40..<44 {
            do {
                try db.execute("INSERT OR REPLACE INTO f VALUES (?, ?, ?, ?)", arguments: row(id, 700 + id))
                model.apply([id]) { _ in 700 + id }
            } catch {
                model.uncertain([id], { _ in 700 + id }, error: error)
            }
        }
        // A last checkpoint, which the reopen loads instead of reading the rows when it held.
        do { try db.checkpoint() } catch { model.record(error) }
    }

    /// Reopens with no faults; the table must be one of the model's states, indexes included.
    private func check(_ directory: URL, durability: LogStore.Options.Durability, model: Model, context: String) {
        for failure in model.failures { XCTFail("\(context): \(failure)") }
        do {
            let store = try LogStore(directory: directory, options: options(durability))
            defer { try? store.close() }
            let db = try SQLDatabase.attached(to: store)
            guard db.tableNames().contains("f") else {
                XCTAssertTrue(model.tableMayBeMissing, "\(context): the acknowledged table is gone")
                return
            }
            var table: Table = [:]
            for values in try db.execute("SELECT id, k, v, w FROM f ORDER BY id").rows {
                guard case .integer(let id) = values[0], case .integer(let version) = values[2] else {
                    XCTFail("\(context): malformed row \(values)")
                    continue
                }
                XCTAssertEqual(values, row(Int(id), Int(version)), context)
                table[Int(id)] = Int(version)
                XCTAssertEqual(try db.execute("SELECT id FROM f WHERE k = ?", arguments: [.text("k\(id)")]).rows, [[.integer(id)]], "\(context): unique index")
            }
            for id in Set(table.keys).union(model.possible.keys) {
                XCTAssertTrue(model.states(id).contains(table[id]),
                              "\(context): row \(id) holds \(table[id].map(String.init) ?? "nothing"), none of \(model.states(id))")
            }
            for batch in model.uncertainBatches {
                let applied = batch.map { table[$0.id] == $0.version }
                XCTAssertTrue(applied.allSatisfy { $0 } || !applied.contains(true), "\(context): a failed statement is half applied: \(batch) \(applied)")
            }
            // The index on v lists exactly the rows.
            let indexed = try db.execute("SELECT id FROM f WHERE v >= 0 ORDER BY v, id").rows.compactMap { values -> Int? in
                if case .integer(let id) = values[0] { return Int(id) }
                return nil
            }
            XCTAssertEqual(Set(indexed), Set(table.keys), "\(context): index on v")
            XCTAssertEqual(indexed.count, table.count, "\(context): index on v has duplicates")
            XCTAssertEqual(try store.verify().problems, [], context)
        } catch {
            XCTFail("\(context): reopening or reading throws: \(error)")
        }
    }

    private func campaign(durability: LogStore.Options.Durability, faults: [InjectedFault], label: String) {
        let report = FaultCampaign.run(faults: faults, directory: folder) { directory in
            var model = Model()
            runWorkload(at: directory, durability: durability, model: &model)
            return { [model] context in
                if context == "dry run" {
                    XCTAssertTrue(model.possible.values.allSatisfy { $0.count == 1 }, "\(label): the dry run left uncertainty")
                }
                self.check(directory, durability: durability, model: model, context: "\(label) \(context)")
            }
        }
        print("DAO fault injection, \(label): \(report.calls) I/O calls, \(report.injected) runs with a fault injected")
    }

    func testEveryIOCallUnderSQLStatementsFailingInProcessCrashSafeMode() {
        campaign(durability: .processCrashSafe, faults: [.error(EIO), .error(ENOSPC), .shortWrite], label: "processCrashSafe")
    }

    func testEveryIOCallUnderSQLStatementsFailingInFsyncMode() {
        campaign(durability: .fsyncEachWrite, faults: [.error(EIO)], label: "fsyncEachWrite")
    }
}
