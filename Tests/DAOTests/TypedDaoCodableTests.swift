import Foundation
import XCTest
@testable import DAO

/// The Codable row mapping (DAORowEncoder, DAORowDecoder, DAOColumnProbe).
final class TypedDaoCodableTests: XCTestCase {
    struct Inner: Codable, Equatable {
        var tags: [String]
        var when: Date
    }

    struct Everything: Codable, Equatable {
        var int: Int
        var int8: Int8
        var uint32: UInt32
        var int64: Int64
        var double: Double
        var float: Float
        var flag: Bool
        var text: String
        var data: Data
        var bytes: [UInt8]
        var date: Date
        var url: URL
        var inner: Inner
        var maybe: Int?
        var maybeText: String?
    }

    private let sample = Everything(
        int: -1, int8: 7, uint32: 4_000_000_000, int64: .min, double: 1e308, float: 0.5, flag: true,
        text: "' ; DROP", data: Data([0, 255]), bytes: [1, 2, 3], date: Date(timeIntervalSince1970: 1_700_000_000.25),
        url: URL(string: "https://example.com/a?b=1")!, inner: Inner(tags: ["x", "y"], when: Date(timeIntervalSince1970: 5)),
        maybe: nil, maybeText: "here")

    func testEncoderMapsEveryKindToItsStorageClass() throws {
        let row = try DAORowEncoder().encode(sample)
        XCTAssertEqual(row["int"], .integer(-1))
        XCTAssertEqual(row["int8"], .integer(7))
        XCTAssertEqual(row["uint32"], .integer(4_000_000_000))
        XCTAssertEqual(row["int64"], .integer(.min))
        XCTAssertEqual(row["double"], .real(1e308))
        XCTAssertEqual(row["float"], .real(0.5))
        XCTAssertEqual(row["flag"], .integer(1))
        XCTAssertEqual(row["text"], .text("' ; DROP"))
        XCTAssertEqual(row["data"], .blob([0, 255]))
        XCTAssertEqual(row["bytes"], .blob([1, 2, 3]))
        XCTAssertEqual(row["date"], .real(1_700_000_000.25))
        XCTAssertEqual(row["url"], .text("https://example.com/a?b=1"))
        XCTAssertEqual(row["inner"], .text(#"{"tags":["x","y"],"when":5}"#))
        XCTAssertNil(row["maybe"], "encodeIfPresent leaves nil out")
        XCTAssertEqual(try DAORowEncoder().encode(sample, columns: ["maybe"])["maybe"], .null)
        XCTAssertEqual(try DAORowEncoder().encodeOrdered(sample).map(\.column).prefix(3), ["int", "int8", "uint32"])
    }

    func testDecoderReversesTheEncoder() throws {
        let row = try DAORowEncoder().encode(sample)
        XCTAssertEqual(try DAORowDecoder().decode(Everything.self, from: row), sample)
        var withNull = row
        withNull["maybeText"] = .null
        XCTAssertNil(try DAORowDecoder().decode(Everything.self, from: withNull).maybeText)
    }

    func testDecoderConvertsLikeSQLiteAndRefusesLoss() throws {
        struct Numbers: Codable, Equatable { var i: Int8; var d: Double; var b: Bool; var s: String }
        let decoder = DAORowDecoder()
        XCTAssertEqual(try decoder.decode(Numbers.self, from: ["i": .real(3), "d": .integer(2), "b": .real(0.5), "s": .integer(12)]),
                       Numbers(i: 3, d: 2, b: true, s: "12"))
        XCTAssertEqual(try decoder.decode(Numbers.self, from: ["i": .text(" 12 "), "d": .text("1e3"), "b": .integer(0), "s": .text("")]),
                       Numbers(i: 12, d: 1000, b: false, s: ""))
        for bad: [String: DAOValue] in [
            ["i": .integer(300), "d": 1, "b": 1, "s": "x"],   // out of Int8's range
            ["i": .real(1.5), "d": 1, "b": 1, "s": "x"],      // not integral
            ["i": 1, "d": .blob([1]), "b": 1, "s": "x"],
            ["i": 1, "d": 1, "b": .text("yes"), "s": "x"],
            ["i": 1, "d": 1, "b": 1, "s": .null],
            ["i": 1, "d": 1, "b": 1],
        ] {
            XCTAssertThrowsError(try decoder.decode(Numbers.self, from: bad), "\(bad)")
        }
    }

    func testEncoderRefusesWhatARowCannotHold() {
        struct Huge: Codable { var n: UInt64 }
        XCTAssertThrowsError(try DAORowEncoder().encode(Huge(n: .max)))
        XCTAssertEqual(try DAORowEncoder().encode(Huge(n: 5)), ["n": .integer(5)])
        XCTAssertThrowsError(try DAORowEncoder().encode([1, 2]), "an array is not a row")
        XCTAssertThrowsError(try DAORowEncoder().encode("text"), "a single value is not a row")
        struct Manual: Encodable {
            func encode(to encoder: Encoder) throws {
                var container = encoder.container(keyedBy: AnyKey.self)
                var nested = container.nestedUnkeyedContainer(forKey: AnyKey("a"))
                try nested.encode(1)
            }
        }
        XCTAssertThrowsError(try DAORowEncoder().encode(Manual()))
    }

    func testProbeFindsColumnsAffinitiesAndOptionality() throws {
        let columns = try DAOColumnProbe.columns(of: Everything.self)
        XCTAssertEqual(columns.map(\.name), ["int", "int8", "uint32", "int64", "double", "float", "flag", "text", "data", "bytes",
                                             "date", "url", "inner", "maybe", "maybeText"])
        XCTAssertEqual(columns.map(\.affinity.rawValue), ["INTEGER", "INTEGER", "INTEGER", "INTEGER", "REAL", "REAL", "INTEGER", "TEXT",
                                                          "BLOB", "BLOB", "REAL", "TEXT", "TEXT", "INTEGER", "TEXT"])
        XCTAssertEqual(columns.filter(\.optional).map(\.name), ["maybe", "maybeText"])
        enum Mood: String, Codable { case happy }
        struct Moody: Codable { var mood: Mood }
        XCTAssertThrowsError(try DAOColumnProbe.columns(of: Moody.self)) { error in
            guard case DAOError.unsupported = error else { return XCTFail("\(error)") }
        }
    }
}

/// A coding key made of any string.
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
