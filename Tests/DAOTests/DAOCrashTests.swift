import CrashTestSupport
@testable import DAO
import Foundation
import LogStore
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// kill -9 of a process running SQL statements (Tests/CrashWriter/DAOChild.swift): INSERT OR
/// REPLACE, UPDATE, DELETE in autocommit, and multi-statement transactions, on a table with a
/// UNIQUE column and a secondary index, in a store with small segments (rolls and background
/// compactions). After each kill the store is reopened and the table must hold exactly the
/// acknowledged operations, plus possibly the one in flight, wholly or not at all (a
/// transaction is one batch); its indexes must agree with its rows. The child writes index
/// checkpoints as it goes, so kills also land while one is written, and reopens load from it.
///
/// 10 kill cycles by default; `DAO_CRASH_CYCLES=N` for more, `DAO_CRASH_SEED` to replay.
final class DAOCrashTests: XCTestCase {
    private typealias Table = [Int: Int]   // rowid -> version
    /// Reopens that loaded the index checkpoint and replayed its journal (the others loaded
    /// it as it was, or read the rows).
    private var journalReplays = 0

    private enum Operation {
        case insert(Int), update(Int), delete(Int)

        init?(_ code: Substring, _ rowid: Int) {
            switch code {
            case "I": self = .insert(rowid)
            case "U": self = .update(rowid)
            case "D": self = .delete(rowid)
            default: return nil
            }
        }

        func apply(to table: inout Table, version: Int) {
            switch self {
            case .insert(let rowid): table[rowid] = version
            case .update(let rowid): if table[rowid] != nil { table[rowid] = version }
            case .delete(let rowid): table[rowid] = nil
            }
        }
    }

    /// The operations of one `B` line (one, or a transaction's).
    private func operations(_ line: Substring) -> (id: Int, ops: [Operation])? {
        let parts = line.split(separator: " ")
        guard parts.count >= 4, parts[0] == "B", let id = Int(parts[1]) else { return nil }
        if parts[2] == "T" {
            let ops = parts.dropFirst(4).compactMap { part -> Operation? in
                let pieces = part.split(separator: ":")
                guard pieces.count == 2, let rowid = Int(pieces[1]) else { return nil }
                return Operation(pieces[0], rowid)
            }
            return (id, ops)
        }
        guard let rowid = Int(parts[3]), let op = Operation(parts[2], rowid) else { return nil }
        return (id, [op])
    }

    /// The table as the store holds it after a reopen, checked against its indexes.
    private func readTable(_ directory: URL, context: String) throws -> Table {
        let store = try LogStore(directory: directory)
        defer { try? store.close() }
        let db = try SQLDatabase.attached(to: store)
        // A kill never leaves a checkpoint journal that does not fit its file (that would be
        // refused, and the rows read, by design; here it would be a bug).
        XCTAssertFalse(db.indexReport.contains { $0.contains("journal") }, "\(context): \(db.indexReport)")
        if db.indexReport.isEmpty, db.checkpointJournal?.namedCount ?? 0 > 0 { journalReplays += 1 }
        var table: Table = [:]
        // Killed before its CREATE TABLE committed (a slow start on a loaded machine): no rows.
        guard db.tableNames().contains("c") else { return table }
        let rows = try db.execute("SELECT id, k, v, w FROM c ORDER BY id").rows
        for row in rows {
            guard case .integer(let id) = row[0], case .integer(let version) = row[2] else {
                XCTFail("\(context): malformed row \(row)")
                continue
            }
            XCTAssertEqual(row[1], .text("k\(id)"), context)
            XCTAssertEqual(row[3], .text(daoPadding(Int(version))), context)
            table[Int(id)] = Int(version)
            // The UNIQUE index on k finds the row.
            XCTAssertEqual(try db.execute("SELECT id FROM c WHERE k = ?", arguments: [.text("k\(id)")]).rows, [[.integer(id)]], "\(context): unique index on k")
        }
        // The index on v finds exactly the rows of each version (a transaction's rows share one).
        for (version, ids) in Dictionary(grouping: table.keys, by: { table[$0]! }) {
            let found = try db.execute("SELECT id FROM c WHERE v = ? ORDER BY id", arguments: [.integer(Int64(version))]).rows
            XCTAssertEqual(found, ids.sorted().map { [.integer(Int64($0))] }, "\(context): index on v, version \(version)")
        }
        XCTAssertEqual(try db.execute("SELECT count(*) FROM c WHERE v >= 0").rows, [[.integer(Int64(rows.count))]], "\(context): index range count")
        XCTAssertEqual(try store.verify().problems, [], context)
        return table
    }

    /// Must match `daoPadding` in Tests/CrashWriter/DAOChild.swift.
    private func daoPadding(_ version: Int) -> String {
        "w\(version)-" + String(repeating: Character(UnicodeScalar(UInt8(97 + version % 26))), count: 40 + version % 300)
    }

    func testKillDuringSQLStatementsLosesNothing() throws {
        let environment = ProcessInfo.processInfo.environment
        let cycles = environment["DAO_CRASH_CYCLES"].flatMap(Int.init) ?? 10
        let seed = environment["DAO_CRASH_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        let binary = try CrashWriterProcess.binary(nextTo: DAOCrashTests.self)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dao-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let campaign = KillCampaign<Table>(
            cycles: cycles, seed: seed, binary: binary,
            arguments: { cycle, random in ["dao", directory.path, "\(random)", "\(cycle * 1_000_000)"] },
            killAfter: { random in UInt32(20_000 + Int(random >> 33) % 250_000) },
            parse: { line in
                self.operations(line).map { started in (started.id, { table in for op in started.ops { op.apply(to: &table, version: started.id) } }) }
            },
            read: { context in try self.readTable(directory, context: context) },
            difference: { expected, found in
                "expected \(expected.filter { found[$0.key] != $0.value }.prefix(5)), found \(found.filter { expected[$0.key] != $0.value }.prefix(5))"
            })
        let summary = try campaign.run(from: [:])
        print("dao crash test: seed \(seed), \(cycles) cycles, \(summary.acknowledged) acknowledged operations, "
              + "\(summary.inFlightApplied) in-flight found applied, \(summary.state.count) rows, \(journalReplays) reopens replayed a checkpoint journal")
    }
}
