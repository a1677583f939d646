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
}
