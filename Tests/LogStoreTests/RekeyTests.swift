import Foundation
import CrashTestSupport
import XCTest
@testable import LogStore

/// `rekey(to:)`: every AES-GCM record moves to the new key, crash-safe at every point.
final class RekeyTests: StoreTestCase {
    private let keyA = LogStore.Options.Encryption(key: [UInt8](repeating: 0xA1, count: 32), keyID: 1)
    private let keyB = LogStore.Options.Encryption(key: [UInt8](repeating: 0xB2, count: 32), keyID: 2)
    private let xorCrypt = DataCrypt(encrypt: { $0.map { $0 ^ 0x33 } }, decrypt: { $0.map { $0 ^ 0x33 } })

    private func options(_ key: LogStore.Options.Encryption?) -> LogStore.Options {
        var options = self.options(segmentSize: 32 << 10)
        options.encryption = key
        options.compression = .init(level: 3, threshold: 64)
        return options
    }

    private func value(_ i: Int) -> [UInt8] { b("value \(i) " + String(repeating: "x", count: i % 300)) }

    /// Fills a store under key A: default-crypt, plain and custom-crypt values, some overwritten.
    private func populate(_ directory: URL) throws -> [[UInt8]: [UInt8]] {
        let store = try LogStore(directory: directory, options: options(keyA))
        var expected: [[UInt8]: [UInt8]] = [:]
        for i in 0..<600 {
            let key = b("k\(i % 500)")
            switch i % 10 {
            case 7: try store.put(value(i), forKey: key, crypt: .plain)
            case 9: try store.put(value(i), forKey: key, crypt: xorCrypt)
            default: try store.put(value(i), forKey: key)
            }
            expected[key] = value(i)
        }
        try store.close()
        return expected
    }

    private func assertReadable(_ directory: URL, with key: LogStore.Options.Encryption, _ expected: [[UInt8]: [UInt8]],
                                file: StaticString = #filePath, line: UInt = #line) throws {
        let store = try LogStore(directory: directory, options: options(key))
        defer { try? store.close() }
        for (k, v) in expected {
            XCTAssertEqual(try store.get(forKey: k, crypt: xorCrypt), v, "key \(String(decoding: k, as: UTF8.self))", file: file, line: line)
        }
        XCTAssertEqual(try store.verify().problems, [], file: file, line: line)
    }

    /// Key ids of every AES-GCM record in the store's segment files.
    private func keyIDsOnDisk(_ directory: URL) throws -> Set<UInt32> {
        var ids = Set<UInt32>()
        for (_, url) in try segmentFiles(directory) {
            for record in try records(in: url) where record.header.flags.contains(.encrypted) { ids.insert(record.header.keyID) }
        }
        return ids
    }

    func testRekeyMovesEveryRecordToTheNewKeyAndRetiresTheOldOne() throws {
        let directory = temporary.make()
        let expected = try populate(directory)
        XCTAssertEqual(try keyIDsOnDisk(directory), [1])
        let steps = ProgressLog()
        do {
            let store = try LogStore(directory: directory, options: options(keyA))
            try store.rekey(to: keyB) { steps.append($0) }
            XCTAssertEqual(try store.get(forKey: b("k3")), expected[b("k3")])
            try store.put(b("after"), forKey: b("new"))
            try store.close()
        }
        let fractions = steps.all
        XCTAssertEqual(fractions.last, 1)
        XCTAssertEqual(fractions, fractions.sorted(), "progress must never go down")
        XCTAssertEqual(try keyIDsOnDisk(directory), [2], "compaction must leave no ciphertext under the old key")
        try assertReadable(directory, with: keyB, expected.merging([b("new"): b("after")]) { $1 })
        assertStoreError(try LogStore(directory: directory, options: options(keyA)), { $0.wrongKeyID == 1 })
    }

    func testRekeyRefusesAKnownIDWithOtherBytes() throws {
        let directory = temporary.make()
        _ = try populate(directory)
        let store = try LogStore(directory: directory, options: options(keyA))
        assertStoreError(try store.rekey(to: .init(key: [UInt8](repeating: 0, count: 32), keyID: 1)), { $0.wrongKeyID == 1 })
        assertStoreError(try store.rekey(to: .init(key: [1, 2, 3], keyID: 5)), { $0.wrongKeyID == 5 })
    }

    /// The image of the directory at every progress report (what a crash at that moment leaves)
    /// must open with either key, read every value, and finish the rekey.
    func testACrashAtAnyPointOfARekeyLosesNothingWithEitherKey() throws {
        let directory = temporary.make()
        let expected = try populate(directory)
        let images = ImageLog()
        do {
            let store = try LogStore(directory: directory, options: options(keyA))
            let temporary = self.temporary
            try store.rekey(to: keyB) { fraction in
                guard fraction < 1 else { return }
                // Copy the open store byte for byte: the image a kill at this moment leaves.
                let image = temporary.make("image")
                try? FileManager.default.createDirectory(at: image, withIntermediateDirectories: true)
                for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] {
                    if let data = try? Data(contentsOf: directory.appendingPathComponent(name)) {
                        try? data.write(to: image.appendingPathComponent(name))
                    }
                }
                images.append(image)
            }
            try store.close()
        }
        XCTAssertGreaterThan(images.all.count, 1)
        for (index, image) in images.all.enumerated() {
            let second = try copyStore(image, label: "image-b")
            try assertReadable(image, with: keyA, expected)
            try assertReadable(second, with: keyB, expected)
            // Both finished the rekey on open: only the new key remains on disk.
            XCTAssertEqual(try keyIDsOnDisk(image), [2], "image \(index)")
            XCTAssertEqual(try keyIDsOnDisk(second), [2], "image \(index)")
        }
    }
}

/// kill -9 of a process in the middle of `rekey`, at random moments: the store reopens with
/// either key and every value is there.
final class RekeyKillTests: StoreTestCase {
    func testKillDuringRekeyLosesNothing() throws {
        let cycles = Int(ProcessInfo.processInfo.environment["LOGSTORE_REKEY_CYCLES"] ?? "") ?? 8
        let binary = try CrashWriterProcess.binary(nextTo: RekeyKillTests.self)
        var generator = SeededRandom(seed: UInt64(ProcessInfo.processInfo.environment["LOGSTORE_CRASH_SEED"] ?? "") ?? 4242)
        let keyA = LogStore.Options.Encryption(key: [UInt8](repeating: 0xA1, count: 32), keyID: 1)
        let keyB = LogStore.Options.Encryption(key: [UInt8](repeating: 0xB2, count: 32), keyID: 2)
        var killedMidway = 0
        for cycle in 0..<cycles {
            let directory = temporary.make("rekey-kill")
            var options = self.options(segmentSize: 16 << 10)
            options.compression = .init(level: 3, threshold: 64)
            options.encryption = keyA
            var expected: [[UInt8]: [UInt8]] = [:]
            do {
                let store = try LogStore(directory: directory, options: options)
                for i in 0..<1500 {
                    let value = b("v\(i)-" + String(repeating: "z", count: i % 200))
                    try store.put(value, forKey: b("k\(i % 1200)"))
                    expected[b("k\(i % 1200)")] = value
                }
                try store.close()
            }
            let output = try CrashWriterProcess.runUntilKilled(binary, arguments: ["rekey", directory.path, "\(16 << 10)"],
                                                                after: UInt32.random(in: 2_000...120_000, using: &generator))
            let lines = output.split(separator: "\n")
            if lines.contains("O") && !lines.contains("R") { killedMidway += 1 }
            // Every value must read back with one of the two keys (which one depends on how far
            // the rekey got: not started, A only; finished, B only; in between, either).
            let first = cycle % 2 == 0 ? keyA : keyB
            let second = cycle % 2 == 0 ? keyB : keyA
            var readable = false
            for key in [first, second] where !readable {
                options.encryption = key
                readable = try readsEverything(directory, options, expected, cycle: cycle)
            }
            XCTAssertTrue(readable, "cycle \(cycle): no key reads every value")
        }
        print("rekey kill test: \(cycles) cycles, \(killedMidway) killed in the middle of a rekey")
    }

    /// Opens with `options` and reads every expected value; false when the key is refused
    /// (`wrongKey`) at open or at a read, a failure for anything else.
    private func readsEverything(_ directory: URL, _ options: LogStore.Options, _ expected: [[UInt8]: [UInt8]], cycle: Int) throws -> Bool {
        do {
            let store = try LogStore(directory: directory, options: options)
            defer { try? store.close() }
            for (key, value) in expected {
                let read = try store.get(forKey: key)   // a wrongKey here means: try the other key
                XCTAssertEqual(read, value, "cycle \(cycle), key \(String(decoding: key, as: UTF8.self))")
            }
            XCTAssertEqual(try store.verify().problems, [], "cycle \(cycle)")
            return true
        } catch StoreError.wrongKey {
            return false
        }
    }
}

final class ProgressLog: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Double] = []
    func append(_ value: Double) { lock.lock(); values.append(value); lock.unlock() }
    var all: [Double] { lock.lock(); defer { lock.unlock() }; return values }
}

final class ImageLog: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [URL] = []
    func append(_ value: URL) { lock.lock(); values.append(value); lock.unlock() }
    var all: [URL] { lock.lock(); defer { lock.unlock() }; return values }
}
