import Foundation
import LogStore
import XCTest

/// `dump`, `stats` and `compact`.
final class InspectionTests: UstoreTestCase {
    static let dumpFields: Set<String> = ["space", "key", "key_base64", "sequence", "flags", "tombstone", "live",
                                          "expiresAt", "value_base64", "value_decoded_base64", "segment", "offset"]

    func testDumpPrintsEveryRecordAsAJSONLine() throws {
        let store = try makeStorePath()
        try ustoreOK(["put", store.path, "a", "one"])
        try ustoreOK(["put", store.path, "a", "two"])
        try ustoreOK(["put", store.path, "b", "bee", "--space", "2", "--expires-in", "3600"])
        try ustoreOK(["delete", store.path, "a"])
        let now = Date().timeIntervalSince1970 * 1000

        let run = try ustoreOK(["dump", store.path])
        XCTAssertEqual(run.lines.count, 4)
        let records = try run.lines.map { try parseObject($0) }
        for record in records { XCTAssertEqual(Set(record.keys), Self.dumpFields) }

        XCTAssertEqual(records.map { $0["key"] as? String }, ["a", "a", "b", "a"])
        XCTAssertEqual(records.map { $0["key_base64"] as? String }, ["YQ==", "YQ==", "Yg==", "YQ=="])
        XCTAssertEqual(records.map { $0["value_base64"] as? String }, ["b25l", "dHdv", "YmVl", ""])
        // Plain values decode to themselves; a tombstone has no value (and no error).
        XCTAssertEqual(records.map { $0["value_decoded_base64"] as? String }, ["b25l", "dHdv", "YmVl", nil])
        XCTAssertTrue(records[3]["value_decoded_base64"] is NSNull)
        XCTAssertEqual(records.map { $0["space"] as? Int }, [0, 0, 2, 0])
        XCTAssertEqual(records.map { $0["tombstone"] as? Bool }, [false, false, false, true])
        // Only b is live: a's puts are superseded and its tombstone is never a keydir entry.
        XCTAssertEqual(records.map { $0["live"] as? Bool }, [false, false, true, false])
        XCTAssertEqual(records.map { $0["segment"] as? Int }, [1, 1, 1, 1])

        let sequences = records.compactMap { $0["sequence"] as? Int }
        XCTAssertEqual(sequences.count, 4)
        XCTAssertEqual(sequences, sequences.sorted())
        XCTAssertEqual(Set(sequences).count, 4)
        let offsets = records.compactMap { $0["offset"] as? Int }
        XCTAssertEqual(offsets.first, 32, "records start after the 32-byte segment header")
        XCTAssertEqual(offsets, offsets.sorted())

        XCTAssertTrue(records[0]["expiresAt"] is NSNull)
        let expiresAt = try XCTUnwrap(records[2]["expiresAt"] as? Double)
        XCTAssertEqual(expiresAt, now + 3_600_000, accuracy: 60_000)
        XCTAssertNotEqual(records[2]["flags"] as? Int, 0, "the expiry flag is set")
        XCTAssertNotEqual(records[3]["flags"] as? Int, 0, "the tombstone flag is set")
    }

    func testDumpShowsNonUTF8KeyAsNull() throws {
        let store = try makeStorePath()
        let logStore = try LogStore(directory: store)
        try logStore.put([0xDE, 0xAD], forKey: [0xC3, 0x28], space: 9)
        try logStore.close()

        let run = try ustoreOK(["dump", store.path])
        XCTAssertEqual(run.lines.count, 1)
        let record = try parseObject(run.stdoutText)
        XCTAssertTrue(record["key"] is NSNull)
        XCTAssertEqual(record["key_base64"] as? String, "wyg=")
        XCTAssertEqual(record["value_base64"] as? String, "3q0=")
        XCTAssertEqual(record["space"] as? Int, 9)
    }

    func testStatsPrintsCountersAndRecoveryReport() throws {
        let store = try makeStorePath()
        for key in ["x", "y", "z"] { try ustoreOK(["put", store.path, key, "value of \(key)"]) }
        try ustoreOK(["put", store.path, "x", "replaced"])

        let run = try ustoreOK(["stats", store.path])
        XCTAssertEqual(run.lines.count, 1)
        let stats = try parseObject(run.stdoutText)
        XCTAssertEqual(Set(stats.keys), ["liveKeys", "liveBytes", "deadBytes", "segmentCount", "keydirBytes",
                                         "segmentBytes", "compactions", "recoveryReport"])
        XCTAssertEqual(stats["liveKeys"] as? Int, 3)
        XCTAssertGreaterThan(try XCTUnwrap(stats["deadBytes"] as? Int), 0, "the first x is dead")
        XCTAssertGreaterThan(try XCTUnwrap(stats["liveBytes"] as? Int), 0)
        XCTAssertEqual(stats["segmentCount"] as? Int, 1)
        XCTAssertGreaterThan(try XCTUnwrap(stats["segmentBytes"] as? Int), 32)
        XCTAssertEqual(stats["compactions"] as? Int, 0)
        XCTAssertEqual((stats["recoveryReport"] as? [Any])?.count, 0, "a cleanly closed store reports nothing")
        // The output is stable: sorted member names.
        XCTAssertTrue(run.stdoutText.hasPrefix(#"{"compactions":"#), run.stdoutText)
    }

    func testCompactDropsDeadRecordsAndKeepsLiveOnes() throws {
        let store = try makeStorePath()
        try ustoreOK(["put", store.path, "a", "one"])
        try ustoreOK(["put", store.path, "a", "two"])
        try ustoreOK(["put", store.path, "b", "bee"])
        try ustoreOK(["delete", store.path, "b"])

        let run = try ustoreOK(["compact", store.path])
        let stats = try parseObject(run.stdoutText)
        XCTAssertEqual(stats["compactions"] as? Int, 1)
        XCTAssertEqual(stats["deadBytes"] as? Int, 0)
        XCTAssertEqual(stats["liveKeys"] as? Int, 1)

        let records = try ustoreOK(["dump", store.path]).lines.map { try parseObject($0) }
        XCTAssertEqual(records.count, 1, "only the live record of a is left")
        XCTAssertEqual(records.first?["value_base64"] as? String, "dHdv")
        XCTAssertEqual(records.first?["live"] as? Bool, true)
        XCTAssertEqual(try ustoreOK(["get", store.path, "a"]).stdoutText, "two")
        XCTAssertEqual(try ustore(["get", store.path, "b"]).status, 1)
        XCTAssertEqual(try parseObject(try ustoreOK(["verify", store.path]).stdoutText)["ok"] as? Bool, true)
    }
}
