@testable import DAO
import Foundation
import XCTest

/// A table's pending rows (`PendingRows`): the arena in memory, then in the unlinked scratch
/// file, read back by slot and walked in full for the commit.
final class PendingRowsTests: XCTestCase {
    private func bytes(_ i: Int) -> [UInt8] { [UInt8](repeating: UInt8(i % 256), count: 10 + i % 700) }

    private func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("pending-\(UUID())")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }

    /// Every live change, as the commit walks them.
    private func walk(_ rows: PendingRows) throws -> [Int64: [UInt8]?] {
        var cursor = PendingRows.Cursor()
        var seen: [Int64: [UInt8]?] = [:]
        while try rows.next(&cursor, { rowid, bytes in
            XCTAssertFalse(seen.keys.contains(rowid), "row \(rowid) walked twice")
            seen[rowid] = .some(bytes.map { Array($0) })
        }) {}
        return seen
    }

    func testRowsSpillToAnUnlinkedFileAndReadBack() throws {
        let folder = try directory()
        for spillPath in [folder.appendingPathComponent(PendingRows.fileName).path, "/nonexistent-\(UUID())/x.tmp", nil] {
            let rows = PendingRows(spillPath: spillPath)
            rows.memoryBudget = 5_000
            var model: [Int64: [UInt8]?] = [:]
            var previous: [(PendingRows.Slot, [UInt8])] = []
            for i in 0..<6_000 {
                let rowid = Int64(i % 4_000)
                if i % 11 == 5 {
                    rows.setDeleted(rowid)
                    model[rowid] = .some(nil)
                } else {
                    if let slot = rows[rowid], slot != PendingRows.deleted, let old = model[rowid] ?? nil { previous.append((slot, old)) }
                    rows.set(rowid, bytes: bytes(i))
                    model[rowid] = .some(bytes(i))
                }
            }
            let where_ = spillPath ?? "memory"
            if spillPath?.hasPrefix(folder.path) == true {
                XCTAssertGreaterThan(rows.arenaBytes.file, 1_000_000, "\(where_): spilled")
                XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), [], "the scratch file has no name")
            } else {
                XCTAssertEqual(rows.arenaBytes.file, 0, where_)
            }
            for (rowid, expected) in model {
                let slot = try XCTUnwrap(rows[rowid])
                if let expected {
                    XCTAssertEqual(try rows.withBytes(slot) { Array($0) }, expected, "\(where_) row \(rowid)")
                } else {
                    XCTAssertEqual(slot, PendingRows.deleted)
                }
            }
            // Slots replaced later still read their own bytes (an undo restores them).
            for (slot, expected) in previous.suffix(500) { XCTAssertEqual(try rows.withBytes(slot) { Array($0) }, expected, where_) }
            XCTAssertEqual(try walk(rows), model, where_)
            var all: [Int64: [UInt8]?] = [:]
            try rows.forEachChange { rowid, bytes in
                XCTAssertFalse(all.keys.contains(rowid), "row \(rowid) twice")
                all[rowid] = .some(bytes.map { Array($0) })
            }
            XCTAssertEqual(all, model, "\(where_): forEachChange")
            rows.removeAll(keepingCapacity: false)
            XCTAssertTrue(rows.isEmpty)
            XCTAssertEqual(try walk(rows), [:])
            rows.set(7, bytes: bytes(7))
            XCTAssertEqual(try walk(rows), [7: .some(bytes(7))], "\(where_): usable after removeAll")
        }
    }

    func testARowLargerThanTheReadAheadIsWalked() throws {
        let rows = PendingRows(spillPath: try directory().appendingPathComponent(PendingRows.fileName).path)
        rows.memoryBudget = 100
        let big = [UInt8](repeating: 9, count: PendingRows.fileChunk * 2 + 17)
        rows.set(1, bytes: [1, 2, 3])
        rows.set(2, bytes: big)
        rows.set(3, bytes: [4])
        rows.set(4, bytes: big + [1])
        XCTAssertEqual(try walk(rows), [1: .some([1, 2, 3]), 2: .some(big), 3: .some([4]), 4: .some(big + [1])])
        XCTAssertEqual(try rows.withBytes(try XCTUnwrap(rows[2])) { $0.count }, big.count)
    }
}

/// `RowSlots`: ascending rowids in sorted arrays (only the first while they are consecutive),
/// the others in a dictionary; the same answers as a plain dictionary through inserts, updates,
/// deletes and undos in any order.
final class RowSlotsTests: XCTestCase {
    func testAgreesWithADictionary() {
        var random = SystemRandomNumberGenerator()
        for round in 0..<8 {
            var slots = RowSlots()
            var model: [Int64: PendingRows.Slot] = [:]
            var next: Int64 = 100
            for step in 0..<20_000 {
                let rowid: Int64
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<5:
                    // A bulk insert: ids with gaps in the first rounds, consecutive ones with a
                    // rare gap in the others (the first gap ends the consecutive form).
                    rowid = next
                    next += round < 4 ? Int64.random(in: 1...3, using: &random) : (Int.random(in: 0..<3_000, using: &random) == 0 ? 2 : 1)
                case 5..<8: rowid = Int64.random(in: 0...next, using: &random)
                default: rowid = model.keys.randomElement(using: &random) ?? 0
                }
                let value: PendingRows.Slot? = switch Int.random(in: 0..<6, using: &random) {
                case 0: nil
                case 1: PendingRows.deleted
                default: UInt64(step)
                }
                slots[rowid] = value
                model[rowid] = value
                if step % 2_500 == 0 {
                    for probe in Int64(90)...next where probe % 7 == 0 || probe > next - 30 {
                        XCTAssertEqual(slots[probe], model[probe], "round \(round) step \(step) rowid \(probe)")
                    }
                    XCTAssertEqual(slots.count, model.count)
                }
                if round % 4 == 3, step % 97 == 0 {
                    // Undo the newest inserts, newest first.
                    for r in stride(from: next - 1, through: max(0, next - 20), by: -1) { slots[r] = nil; model[r] = nil }
                }
            }
            XCTAssertEqual(slots.count, model.count)
            XCTAssertEqual(slots.isEmpty, model.isEmpty)
            for rowid in Int64(0)...next { XCTAssertEqual(slots[rowid], model[rowid], "rowid \(rowid)") }
            XCTAssertEqual(Set(slots.rowids), Set(model.keys))
            XCTAssertEqual(slots.rowids.count, model.count)
            var position = RowSlots.Position()
            var deleted: [Int64] = []
            while let rowid = slots.nextDeleted(after: &position) { deleted.append(rowid) }
            XCTAssertEqual(deleted.sorted(), model.filter { $0.value == PendingRows.deleted }.keys.sorted())
        }
    }
}
