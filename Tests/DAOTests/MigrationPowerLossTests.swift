import CrashTestSupport
@testable import DAO
import Foundation
import LogStore
import XCTest

/// A versioned open's upgrade (rename, drop and add columns, index changes, a data update, a new
/// table filled by INSERT ... SELECT), then an XML config's setup and `<upgrade>` block on the
/// same store and versions record, cut at every write and sync they make: power loss simulated
/// before each recorded operation of the workload (PowerLossSimulator), with the unsynced
/// changes dropped, all kept, or decided at random; and an I/O error injected at each I/O call
/// (FaultInjection). After each, the store opens, verifies, and its tables are wholly at the
/// old version with the old schema and rows, or wholly at the new one: never a mix.
final class MigrationPowerLossTests: XCTestCase {
    /// What a store shows: its schema version, tables' CREATE texts and rows.
    struct Snapshot: Equatable, CustomStringConvertible {
        var version: Int
        var configVersions: [String: String]
        var schema: [String]
        var rows: [String: [[DAOValue]]]
        var description: String { "version \(version), configs \(configVersions), \(schema), \(rows.mapValues(\.count))" }
    }

    private static let empty = Snapshot(version: 0, configVersions: [:], schema: [], rows: [:])

    /// An XML config's table at 1.0, then at 2.0 with an `<upgrade>` block.
    private static func notesConfig(_ version: String) -> String {
        let upgraded = version != "1.0"
        return """
        <module name="N" initializer="create" tableName="notes" version="\(version)">
          <update id="create">create table if not exists ${T} (id integer primary key, \(upgraded ? "text text, tag text" : "body text"))</update>
          <upgrade toVersion="2.0">
            <step>alter table ${T} add column tag text</step>
            <step>update ${T} set tag = 'old-' || id</step>
            <step>alter table ${T} rename column body to text</step>
          </upgrade>
          <select id="count" result="int">select count(*) from ${T}</select>
        </module>
        """
    }

    private func options() -> LogStore.Options {
        var options = LogStore.Options()
        options.segmentSize = 4 << 10   // the upgrade's batch does not fit in the first segment
        options.durability = .fsyncEachWrite
        options.compactionTrigger = 2
        return options
    }

    static func snapshot(_ db: SQLDatabase) throws -> Snapshot {
        let definitions = try db.tableDefinitions()
        var rows: [String: [[DAOValue]]] = [:]
        for (name, _) in definitions { rows[name] = try db.execute("SELECT * FROM \"\(name)\" ORDER BY rowid").rows }
        return Snapshot(version: try db.userVersion(), configVersions: try db.configTableVersions(),
                        schema: definitions.map(\.sql), rows: rows)
    }

    private static func createVersion1(_ db: SQLDatabase) throws {
        try db.execute("CREATE TABLE User (id INTEGER PRIMARY KEY, name TEXT NOT NULL, nick TEXT, age INTEGER)")
        try db.execute("CREATE INDEX user_age ON User (age)")
        for id in 1...24 {
            try db.execute("INSERT INTO User (name, nick, age) VALUES (?, ?, ?)",
                           arguments: [.text("user\(id)-" + String(repeating: "n", count: 90)), id % 3 == 0 ? .null : .text("n\(id)"), .integer(Int64(15 + id))])
        }
    }

    private static func upgradeTo2(_ db: SQLDatabase) throws {
        try db.execute("DROP INDEX user_age")
        try db.execute("ALTER TABLE User RENAME COLUMN nick TO nickname")
        try db.execute("CREATE TABLE Adult (user INTEGER PRIMARY KEY, age INTEGER NOT NULL)")
        try db.execute("INSERT INTO Adult (user, age) SELECT id, age FROM User WHERE age >= 18")
        try db.execute("ALTER TABLE User DROP COLUMN age")
        try db.execute("ALTER TABLE User ADD COLUMN score INTEGER NOT NULL DEFAULT 0")
        try db.execute("UPDATE User SET score = id * 10 WHERE nickname IS NOT NULL")
        try db.execute("CREATE UNIQUE INDEX user_name ON User (name)")
    }

    /// Opens at version 1, upgrades to version 2, sets an XML config's table up at 1.0, adds rows,
    /// upgrades the config to 2.0; marks each step in `journal` (when given) and tells
    /// `acknowledged` how many steps are done.
    private func workload(_ directory: URL, journal: PowerLossJournal<Snapshot>?, acknowledged: (Int) -> Void = { _ in }) throws {
        let store = try LogStore(directory: directory, options: options())
        defer { try? store.close() }
        let db = try SQLDatabase.attached(to: store)
        var done = 0
        func step(_ note: String, _ body: () throws -> Void) throws {
            journal?.begin(note)
            try body()
            journal?.acknowledge(try Self.snapshot(db))
            done += 1
            acknowledged(done)
        }
        let unexpected: (SQLDatabase, Int, Int) throws -> Void = { _, from, to in XCTFail("upgrade \(from) -> \(to)") }
        try step("open version 1") { try db.openVersion(1, onCreate: Self.createVersion1, onUpgrade: unexpected) }
        try step("upgrade to version 2") {
            try db.openVersion(2, onCreate: { _ in XCTFail("create at 2") }, onUpgrade: { db, _, _ in try Self.upgradeTo2(db) })
        }
        try step("XML config 1.0 setup") { _ = try DAOProxy(configText: Self.notesConfig("1.0"), store: store).call("count") }
        try step("notes rows") { try db.execute("INSERT INTO notes (body) VALUES ('a'), ('b'), ('c')") }
        try step("XML config 2.0 upgrade") { _ = try DAOProxy(configText: Self.notesConfig("2.0"), store: store).call("count") }
        try store.close()
    }

    private func read(_ directory: URL, context: String) throws -> Snapshot {
        let store = try LogStore(directory: directory, options: options())
        defer { try? store.close() }
        XCTAssertEqual(try store.verify().problems, [], "\(context): verify")
        let db = try SQLDatabase.attached(to: store)
        let found = try Self.snapshot(db)
        // The indexes agree with the rows (rebuilt from them or loaded from a checkpoint).
        if found.version == 2 {
            let byName = try db.execute("SELECT id FROM User WHERE name = ?", arguments: [.text("user7-" + String(repeating: "n", count: 90))]).rows
            XCTAssertEqual(byName, [[.integer(7)]], "\(context): unique index user_name")
        }
        return found
    }

    func testUpgradeCutAtEveryWriteAndSyncIsWhollyOldOrNew() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("migration-powerloss-\(UUID().uuidString)")
        let root = base.appendingPathComponent("work", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: base) }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let journal = PowerLossJournal<Snapshot>(initial: Self.empty)
        PowerLossSimulator.start(root: root.path)
        var workloadError: Error?
        do { try workload(root, journal: journal) } catch { workloadError = error }
        let recording = PowerLossSimulator.stop()
        if let workloadError { return XCTFail("the workload failed: \(workloadError)") }
        XCTAssertEqual(journal.states.map(\.version), [0, 1, 2, 2, 2, 2])
        XCTAssertEqual(journal.states.map { $0.configVersions["notes"] }, [nil, nil, nil, "1.0", "1.0", "2.0"])
        XCTAssertEqual(journal.states.last?.rows["notes"]?.last, [.integer(3), .text("c"), .text("old-3")])

        let seed = ProcessInfo.processInfo.environment["POWERLOSS_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        var seen = Set<Int>()
        var images = 0, writes = 0, syncs = 0
        // Every operation of the recording: each write and sync of the version 1 batch, of the
        // upgrade's batch, and of the close's checkpoint.
        for cut in 0...recording.operations.count {
            if cut < recording.operations.count {
                switch recording.operations[cut] {
                case .write: writes += 1
                case .syncFile, .syncDirectory: syncs += 1
                default: break
                }
            }
            for outcome in [PowerLossImage.Outcome.dropUnsynced, .keepAll, .random(seed: seed &+ UInt64(cut))] {
                let image = base.appendingPathComponent("image-\(images)", isDirectory: true)
                images += 1
                let context = "power loss before operation \(cut) of \(recording.operations.count), \(outcome), seed \(seed)"
                do {
                    _ = try PowerLossImage.build(recording, cut: cut, outcome: outcome, into: image)
                    let found = try read(image, context: context)
                    let allowed = journal.allowed(cut: cut, durableBefore: cut)
                    if let state = journal.match(found, in: allowed) {
                        seen.insert(state)
                    } else {
                        XCTFail("\(context): the store is none of states \(allowed): \(found)")
                    }
                } catch {
                    XCTFail("\(context): \(error)")
                }
                try? FileManager.default.removeItem(at: image)
            }
        }
        XCTAssertGreaterThan(writes, 3, "the workload's writes are recorded")
        XCTAssertGreaterThan(syncs, 2)
        XCTAssertEqual(seen, Set(0..<journal.states.count), "cuts left the store at every state")
        print("migration power-loss campaign: seed \(seed), \(recording.operations.count) operations (\(writes) writes, \(syncs) syncs), \(images) simulated power losses")
    }

    func testUpgradeWithAnIOErrorAtEveryCallIsWhollyOldOrNew() throws {
        // What a clean run leaves after each step (the empty store first).
        let clean = FileManager.default.temporaryDirectory.appendingPathComponent("migration-clean-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: clean) }
        let journal = PowerLossJournal<Snapshot>(initial: Self.empty)
        try workload(clean, journal: journal)
        let states = journal.states
        XCTAssertEqual(states.count, 6)

        var folders: [URL] = []
        defer { for folder in folders { try? FileManager.default.removeItem(at: folder) } }
        var outcomes = Set<Int>()
        let report = FaultCampaign.run(faults: [.error(EIO)], directory: {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("migration-fault-\(UUID().uuidString)")
            folders.append(url)
            return url
        }, workload: { directory in
            // The steps acknowledged (0: none): the store must show that state or the next.
            var acknowledged = 0
            do {
                try self.workload(directory, journal: nil) { acknowledged = $0 }
            } catch {
                XCTAssertTrue(error is StoreError, "a typed store error, not \(error)")
            }
            return { context in
                do {
                    let found = try self.read(directory, context: context)
                    let allowed = acknowledged...min(acknowledged + 1, states.count - 1)
                    if let state = allowed.first(where: { states[$0] == found }) {
                        outcomes.insert(state)
                    } else {
                        XCTFail("\(context): \(found) is none of versions \(allowed) (acknowledged \(acknowledged))")
                    }
                } catch {
                    XCTFail("\(context): \(error)")
                }
            }
        })
        XCTAssertGreaterThan(report.injected, 10)
        XCTAssertTrue(outcomes.isSuperset(of: [1, 2, 3, 5]), "faults left each migration's old and new state: \(outcomes)")
        print("migration fault campaign: \(report.calls) I/O calls, \(report.injected) faults injected")
    }
}
