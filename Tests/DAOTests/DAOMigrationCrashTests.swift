import CrashTestSupport
import DAO
import Foundation
import LogStore
import XCTest

/// kill -9 of a process stepping its tables from one schema version to the next
/// (Tests/CrashWriter/MigrationChild.swift): each step drops the previous version's table and
/// creates and fills the next one inside `openVersion`'s transaction. After each kill the store
/// must be wholly at the acknowledged version (or wholly at the one in flight): the version
/// record, exactly that version's table, all its rows, and an index agreeing with them. Old
/// version and old schema, or new and new; never a mix.
///
/// 6 kill cycles by default; `DAO_MIGRATION_CRASH_CYCLES=N` for more, `DAO_MIGRATION_CRASH_SEED`
/// to replay.
final class DAOMigrationCrashTests: XCTestCase {
    /// Must match `migrationRowCount` and `daoPadding` of Tests/CrashWriter.
    private let rowCount = 150
    private func padding(_ version: Int) -> String {
        "w\(version)-" + String(repeating: Character(UnicodeScalar(UInt8(97 + version % 26))), count: 40 + version % 300)
    }

    /// The version a reopen finds, after checking the tables are exactly that version's.
    private func readVersion(_ directory: URL, context: String) throws -> Int {
        let store = try LogStore(directory: directory)
        defer { try? store.close() }
        let db = try SQLDatabase.attached(to: store)
        let version = try db.userVersion()
        XCTAssertEqual(db.tableNames(), version == 0 ? [] : ["t\(version)"], "\(context): tables at version \(version)")
        guard version > 0 else { return version }
        let rows = try db.execute("SELECT id, v, w FROM t\(version) ORDER BY id").rows
        let expected: [[DAOValue]] = (0..<rowCount).map { id in
            [.integer(Int64(id)), .integer(Int64(version)), .text(padding(version * 1000 + id))]
        }
        XCTAssertEqual(rows, expected, "\(context): rows of t\(version)")
        XCTAssertEqual(try db.execute("SELECT count(*) FROM t\(version) WHERE v = ?", arguments: [.integer(Int64(version))]).rows,
                       [[.integer(Int64(rowCount))]], "\(context): index on v")
        XCTAssertEqual(try store.verify().problems, [], context)
        return version
    }

    func testKillDuringVersionedOpenLeavesOldOrNewSchemaWhole() throws {
        let environment = ProcessInfo.processInfo.environment
        let cycles = environment["DAO_MIGRATION_CRASH_CYCLES"].flatMap(Int.init) ?? 6
        let seed = environment["DAO_MIGRATION_CRASH_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        let binary = try CrashWriterProcess.binary(nextTo: DAOMigrationCrashTests.self)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dao-migration-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let campaign = KillCampaign<Int>(
            cycles: cycles, seed: seed, binary: binary,
            arguments: { _, _ in ["migrate", directory.path] },
            killAfter: { random in UInt32(30_000 + Int(random >> 33) % 300_000) },
            parse: { line in
                let parts = line.split(separator: " ")
                guard parts.count == 3, parts[2] == "V", let version = Int(parts[1]) else { return nil }
                return (version, { state in state = version })
            },
            read: { context in try self.readVersion(directory, context: context) },
            difference: { expected, found in "expected version \(expected), found \(found)" })
        let summary = try campaign.run(from: 0)
        print("dao migration crash test: seed \(seed), \(cycles) cycles, \(summary.acknowledged) acknowledged versions, "
              + "\(summary.inFlightApplied) in-flight found applied, at version \(summary.state)")
    }
}
