@testable import DAO
import Foundation
import XCTest

/// A statement run again reuses its last run's state (`CompiledBox.idleRun`): nothing of one run
/// (rows, DISTINCT's seen set, OFFSET count, sort keys, output values) shows in the next.
final class SelectRunReuseTests: XCTestCase {
    func testRepeatedRunsGiveTheSameAnswersAsSQLite() throws {
        let d = try Differential()
        d.run(["CREATE TABLE r (id INTEGER PRIMARY KEY, g INTEGER, name TEXT, payload BLOB)"])
        for i in 0..<60 { d.run(["INSERT INTO r VALUES (\(i), \(i % 7), 'n\(i % 11)', x'\(String(format: "%02x", i))')"]) }
        let statements = ["SELECT DISTINCT g FROM r ORDER BY g", "SELECT id, name FROM r ORDER BY name, id LIMIT 5 OFFSET 3",
                          "SELECT g, count(*) FROM r GROUP BY g", "SELECT id FROM r WHERE g = 3", "SELECT payload FROM r WHERE id = 9"]
        for round in 0..<3 {
            for sql in statements { XCTAssertNotNil(d.check(sql), "\(sql), round \(round)") }
            d.run(["UPDATE r SET g = g + 1 WHERE id % 5 = \(round)"])
        }
        // Streamed through forEachRow, twice, with a row kept from the first run.
        var kept: [SQLRow] = []
        for _ in 0..<2 {
            var rows = 0
            try d.database.forEachRow("SELECT id, name FROM r WHERE id < ? ORDER BY id", arguments: [.integer(4)]) { row in
                if kept.count < 4 { kept.append(row) }
                rows += 1
            }
            XCTAssertEqual(rows, 4)
        }
        XCTAssertEqual(kept.map { $0[0] }, [.integer(0), .integer(1), .integer(2), .integer(3)], "a kept row keeps its values")
        XCTAssertEqual(kept.map { $0[1] }, [.text("n0"), .text("n1"), .text("n2"), .text("n3")])
    }
}
