@testable import DAO
import LogStore
import XCTest

/// `UndoLog`: row changes packed in 16 bytes, actions in order, entries out of the packed
/// bounds kept whole; everything comes back newest first, as it went in.
final class UndoLogTests: XCTestCase {
    func testEntriesComeBackNewestFirstAsTheyWentIn() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        for i in 0..<3 { try db.execute("CREATE TABLE t\(i) (x)") }
        let tables = try (0..<3).map { try db.table(named: "t\($0)") }
        var log = UndoLog()
        var expected: [String] = []
        var ran: [Int] = []
        for i in 0..<300 {
            let table = tables[i % 7 == 0 ? 2 : i % 2]
            let previous: PendingRows.Slot? = [nil, PendingRows.deleted, UInt64(i * 40), 1 << 41][i % 4]
            switch i % 5 {
            case 0:
                log.append(.action { ran.append(i) })
                expected.append("action \(i)")
            case 1, 2:
                log.append(.insertedRow(table, rowid: Int64(i) - 150, previous: previous))
                expected.append("inserted \(table.name) \(i - 150) \(String(describing: previous))")
            default:
                log.append(.deletedRow(table, rowid: Int64.max - Int64(i), previous: previous))
                expected.append("deleted \(table.name) \(Int64.max - Int64(i)) \(String(describing: previous))")
            }
        }
        XCTAssertEqual(log.count, 300)
        var got: [String] = []
        while let entry = log.removeLast() {
            switch entry {
            case .action(let action):
                let before = ran.count
                action()
                got.append("action \(ran.last ?? -1)")
                XCTAssertEqual(ran.count, before + 1)
            case .insertedRow(let table, let rowid, let previous):
                got.append("inserted \(table.name) \(rowid) \(String(describing: previous))")
            case .deletedRow(let table, let rowid, let previous):
                got.append("deleted \(table.name) \(rowid) \(String(describing: previous))")
            }
        }
        XCTAssertEqual(got, expected.reversed())
        XCTAssertTrue(log.isEmpty)
        log.append(.insertedRow(tables[0], rowid: 1, previous: nil))
        log.removeAll(keepingCapacity: false)
        XCTAssertNil(log.removeLast())
    }

    /// Inserts of consecutive new rowids share one entry (a run); taking changes back one by
    /// one, in part (a statement's mark) or all, gives exactly what went in, newest first,
    /// whatever the mix: runs broken by a gap, another table, a previous state, a delete.
    func testRunsOfInsertsComeBackRowByRow() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        for i in 0..<2 { try db.execute("CREATE TABLE r\(i) (x)") }
        let tables = try (0..<2).map { try db.table(named: "r\($0)") }
        var random = SystemRandomNumberGenerator()
        for round in 0..<40 {
            var log = UndoLog()
            var model: [String] = []
            var next: [Int64] = [Int64(round) * 1000 - 20_000, Int64.max - 300]
            func describe(_ entry: UndoEntry) -> String {
                switch entry {
                case .action: return "action"
                case .insertedRow(let table, let rowid, let previous): return "inserted \(table.name) \(rowid) \(String(describing: previous))"
                case .deletedRow(let table, let rowid, let previous): return "deleted \(table.name) \(rowid) \(String(describing: previous))"
                }
            }
            for _ in 0..<(200 + round * 20) {
                let t = Int.random(in: 0..<10, using: &random) == 0 ? 1 : 0
                let roll = Int.random(in: 0..<100, using: &random)
                let entry: UndoEntry
                if roll < 80 {
                    if Int.random(in: 0..<20, using: &random) == 0 { next[t] += Int64.random(in: 2...5, using: &random) }
                    let previous: PendingRows.Slot? = Int.random(in: 0..<25, using: &random) == 0 ? PendingRows.deleted : nil
                    guard next[t] < Int64.max else { continue }
                    entry = .insertedRow(tables[t], rowid: next[t], previous: previous)
                    next[t] += 1
                } else if roll < 90 {
                    entry = .deletedRow(tables[t], rowid: next[t] - 1, previous: UInt64(roll))
                } else {
                    entry = .action {}
                }
                log.append(entry)
                model.append(describe(entry))
                XCTAssertEqual(log.count, model.count)
                // Now and then a statement fails: its changes (back to a mark) are undone.
                if Int.random(in: 0..<30, using: &random) == 0 {
                    let mark = max(0, model.count - Int.random(in: 1...40, using: &random))
                    while log.count > mark, let undone = log.removeLast() { XCTAssertEqual(describe(undone), model.removeLast()) }
                    XCTAssertEqual(log.count, mark)
                }
            }
            while let undone = log.removeLast() { XCTAssertEqual(describe(undone), model.removeLast()) }
            XCTAssertTrue(model.isEmpty)
            XCTAssertEqual(log.count, 0)
        }
    }
}
