import DAO
import XCTest

/// The oracle itself: storage classes come back as SQLite gives them.
final class SQLiteOracleTests: XCTestCase {
    func testOracleReportsSQLiteStorageClasses() throws {
        let oracle = try SQLiteOracle()
        XCTAssertEqual(try oracle.execute("SELECT 7 / 2, 7 / 2.0, 'a' || 1, NULL, x'01ff'"),
                       [[.integer(3), .real(3.5), .text("a1"), .null, .blob([0x01, 0xff])]])
        XCTAssertEqual(try oracle.execute("SELECT 'abc' LIKE 'ABC', 'é' LIKE 'É'"), [[.integer(1), .integer(0)]])
        XCTAssertEqual(try oracle.execute("SELECT ? + 1", arguments: [.integer(41)]), [[.integer(42)]])
    }
}
