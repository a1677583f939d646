import Foundation
import XCTest
import LogStore

/// Holds the LogStore module to ../shared/API.swift: every declaration of its "module LogStore"
/// section is used here with the exact names, labels and types it fixes, so a change that
/// breaks the contract fails to compile. (Behaviour is tested elsewhere.)
final class APIContractTests: XCTestCase {
    func testLogStoreSectionOfTheContract() throws {
        let errors: [StoreError] = [.locked(URL(fileURLWithPath: "/")), .alreadyOpen(URL(fileURLWithPath: "/")), .closed, .readOnly,
                                    .noCurrentUser, .wrongKey(keyID: 1), .cryptRequired(key: "k"), .tampered("t"),
                                    .corrupt("c"), .valueTooLarge(1), .io(operation: "o", errno: 5)]
        XCTAssertEqual(errors.count, 11)

        var options = LogStore.Options()
        options.durability = .processCrashSafe
        options.durability = .groupCommit(interval: 0.5)
        options.durability = .fsyncEachWrite
        options.segmentSize = 1 << 20
        options.compactionTrigger = 0.5
        options.compression = LogStore.Options.Compression(level: 3, threshold: 256)
        options.compression = LogStore.Options.Compression()
        options.encryption = LogStore.Options.Encryption(key: [UInt8](repeating: 1, count: 32), keyID: 1)
        options.readOnly = false
        let keySpace: LogStore.KeySpace = 0

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("api-contract-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try LogStore(directory: directory, options: options)
        try store.put([1], forKey: [2], space: keySpace, expiresAt: nil)
        try store.put([1], forKey: [2])
        let value: [UInt8]? = try store.get(forKey: [2], space: keySpace)
        XCTAssertEqual(value, [1])
        try store.delete(forKey: [2], space: keySpace)
        var batch = LogStore.WriteBatch()
        batch.put([1], forKey: [3], space: 0, expiresAt: Date().addingTimeInterval(60))
        batch.delete(forKey: [4], space: 0)
        try store.write(batch)
        let keys: [[UInt8]] = try store.keys(space: 0, prefix: [])
        XCTAssertEqual(keys, [[3]])
        try store.sync()
        try store.compact()
        try store.rekey(to: LogStore.Options.Encryption(key: [UInt8](repeating: 2, count: 32), keyID: 2), progress: { _ in })
        let statistics: LogStore.Statistics = store.statistics
        let counters: (Int, Int, Int, Int, Int) = (statistics.liveKeys, statistics.liveBytes, statistics.deadBytes,
                                                   statistics.segmentCount, statistics.keydirBytes)
        XCTAssertGreaterThan(counters.0, 0)
        let report: LogStore.VerifyReport = try store.verify()
        let reportFields: ([String], Int) = (report.problems, report.recordsChecked)
        XCTAssertEqual(reportFields.0, [])
        try store.close()

        let crypt = DataCrypt(encrypt: { $0 }, decrypt: { $0 })
        let defaultCrypt: DataCrypt = DataCrypt.default
        _ = (crypt, defaultCrypt)
    }
}
