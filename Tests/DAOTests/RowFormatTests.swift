@testable import DAO
import LogStore
import XCTest

/// The row and catalog bytes are those FORMAT.md "DAO tables" specifies.
final class RowFormatTests: XCTestCase {
    func testRowExampleOfFormatDocument() throws {
        XCTAssertEqual(RowCodec.key(rowid: 7), [0x80, 0, 0, 0, 0, 0, 0, 7])
        XCTAssertEqual(RowCodec.key(rowid: -1), [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        XCTAssertEqual(RowCodec.encode([.integer(7), .text("ab"), .real(1.5)], skipping: 0),
                       [0x01, 0x03, 0x00, 0x03, 0x02, 0x61, 0x62, 0x02, 0x3F, 0xF8, 0, 0, 0, 0, 0, 0])
        let values: [SQLValue] = [.null, .integer(-1), .integer(Int64.min), .real(-0.25), .text("é"), .blob([0, 255])]
        let decoded = RowCodec.encode(values).withUnsafeBytes { RowCodec.decode($0) }
        XCTAssertEqual(decoded, values)
    }

    func testStoredRowIsReadableFromTheDocumentedSpaces() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, score REAL)")
        try db.execute("INSERT INTO t VALUES (7, 'ab', 1.5)")
        let spaces = try temporary.store.namedSpaces()
        let rows = try XCTUnwrap(spaces["dao.table.t"])
        let catalog = try XCTUnwrap(spaces["dao.catalog"])
        XCTAssertEqual(try temporary.store.get(forKey: [0x80, 0, 0, 0, 0, 0, 0, 7], space: rows),
                       [0x01, 0x03, 0x00, 0x03, 0x02, 0x61, 0x62, 0x02, 0x3F, 0xF8, 0, 0, 0, 0, 0, 0])
        let record = try XCTUnwrap(try temporary.store.get(forKey: Array("t".utf8), space: catalog))
        XCTAssertEqual(record[0], 1)
        XCTAssertEqual(Array(record[1..<5]), [UInt8(rows >> 24 & 0xFF), UInt8(rows >> 16 & 0xFF), UInt8(rows >> 8 & 0xFF), UInt8(rows & 0xFF)])
        let decoded = try CatalogCodec.decode(record, name: "t")
        XCTAssertEqual(decoded.statements, ["CREATE TABLE \"t\" (\"id\" INTEGER PRIMARY KEY, \"name\" TEXT, \"score\" REAL)"])
    }
}
