import Foundation
import XCTest
@testable import LogStore

/// A deterministic generator (SplitMix64), so a failing property loop can be replayed from its seed.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// UTF-8 bytes of a string: keys and values in tests are mostly readable text.
func b(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A fresh directory under the system temporary directory, removed by `removeTemporaryDirectories`.
final class TemporaryDirectories: @unchecked Sendable {
    private var urls: [URL] = []
    private let lock = NSLock()

    func make(_ label: String = "store") -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("logstore-tests-\(label)-\(UUID().uuidString)")
        lock.lock()
        urls.append(url)
        lock.unlock()
        return url
    }

    func removeAll() {
        lock.lock()
        let all = urls
        urls = []
        lock.unlock()
        for url in all { try? FileManager.default.removeItem(at: url) }
    }
}

/// How `StoreTestCase.options(...)` opens stores, from the environment variable
/// `LOGSTORE_TEST_MODE`: `plain` (the default), `encrypted` (AES-256-GCM with `key`, id 1),
/// `compressed` (zstd level 3, threshold 32 bytes) or `encrypted+compressed`. scripts/test.sh
/// runs the store tests in all four.
enum TestMode: String, CaseIterable, Sendable {
    case plain
    case encrypted
    case compressed
    case encryptedCompressed = "encrypted+compressed"

    static let current: TestMode = {
        let value = ProcessInfo.processInfo.environment["LOGSTORE_TEST_MODE"] ?? ""
        if value.isEmpty { return .plain }
        guard let mode = TestMode(rawValue: value) else {
            fatalError("LOGSTORE_TEST_MODE=\(value): expected one of \(allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return mode
    }()

    /// The fixed key of the encrypted modes, id `keyID`.
    static let key: [UInt8] = (0..<32).map { UInt8(0xA0 &+ $0) }
    static let keyID: UInt32 = 1
    static let compression = LogStore.Options.Compression(level: 3, threshold: 32)

    var encrypts: Bool { self == .encrypted || self == .encryptedCompressed }
    var compresses: Bool { self == .compressed || self == .encryptedCompressed }

    func apply(to options: inout LogStore.Options) {
        if encrypts { options.encryption = .init(key: Self.key, keyID: Self.keyID) }
        if compresses { options.compression = Self.compression }
    }
}

/// Base class for store tests: temporary directories cleaned up after each test.
class StoreTestCase: XCTestCase {
    let temporary = TemporaryDirectories()

    override func tearDown() {
        temporary.removeAll()
        super.tearDown()
    }

    /// Store options for a test, in the `TestMode` the environment selects: with the test key
    /// (`encrypted`) and/or zstd level 3 from 32 bytes (`compressed`).
    func options(segmentSize: Int = 64 << 10, durability: LogStore.Options.Durability = .processCrashSafe,
                 compactionTrigger: Double = 2, readOnly: Bool = false) -> LogStore.Options {
        var options = LogStore.Options()
        options.segmentSize = segmentSize
        options.durability = durability
        options.compactionTrigger = compactionTrigger
        options.readOnly = readOnly
        TestMode.current.apply(to: &options)
        return options
    }

    /// The mode every store test runs in (`LOGSTORE_TEST_MODE`).
    var mode: TestMode { TestMode.current }

    /// The keys the engine itself keeps in `LogStore.engineSpace` of a store opened with
    /// `options()`: the check value of the test key in the encrypted modes (FORMAT.md, "Keys").
    /// They count in `statistics.liveKeys` and are listed by `forEachRecord`.
    var engineKeys: [[UInt8]] { mode.encrypts ? [b("keycheck/\(TestMode.keyID)")] : [] }

    /// `count` pseudo-random bytes from `seed`: a value zstd cannot shrink, so it takes the same
    /// room in every mode.
    func incompressible(_ count: Int, seed: UInt64) -> [UInt8] {
        var rng = SeededRandom(seed: seed)
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    /// Copies a store directory byte for byte (while it may be open: the copy is what a process
    /// crash at this moment would leave, since every write is already in the page cache).
    func copyStore(_ source: URL, label: String = "copy") throws -> URL {
        let destination = temporary.make(label)
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: source.path) {
            // A background compaction may remove a file (its COMPACTION commit file, an input
            // segment) between the listing and the read; a crash then would not have had it either.
            guard FileManager.default.fileExists(atPath: source.appendingPathComponent(name).path),
                  let data = try? Data(contentsOf: source.appendingPathComponent(name)) else { continue }
            try data.write(to: destination.appendingPathComponent(name))
        }
        return destination
    }

    func fileNames(_ directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    /// Segment files (`*.seg`) of a store directory, by id.
    func segmentFiles(_ directory: URL) throws -> [(id: UInt32, url: URL)] {
        try fileNames(directory).compactMap { name in
            StoreFileName.segmentID(of: name).map { ($0, directory.appendingPathComponent(name)) }
        }.sorted { $0.id < $1.id }
    }

    func segmentHeader(_ url: URL) throws -> SegmentHeader {
        let bytes = [UInt8](try Data(contentsOf: url))
        return try bytes.withUnsafeBytes { try SegmentHeader.decode($0.baseAddress!, length: $0.count, path: url.path) }
    }

    /// Offsets and headers of the valid records of a segment file.
    func records(in url: URL) throws -> [(offset: Int, header: RecordHeader)] {
        let bytes = [UInt8](try Data(contentsOf: url))
        return bytes.withUnsafeBytes { raw in
            var scanner = SegmentScanner(base: raw.baseAddress!, limit: raw.count)
            var found: [(offset: Int, header: RecordHeader)] = []
            while let event = scanner.next() {
                if case .record(let offset, let header) = event { found.append((offset, header)) }
            }
            return found
        }
    }

    /// Every live key and value of a space, as a dictionary (via `entries`, which checks checksums).
    func contents(_ store: LogStore, space: LogStore.KeySpace = 0) throws -> [[UInt8]: [UInt8]] {
        var result: [[UInt8]: [UInt8]] = [:]
        for entry in try store.entries(space: space) { result[entry.key] = entry.value }
        return result
    }

    /// Checks that `store` holds exactly `expected` in `space`, through `get`, `keys` and `entries`.
    func assertContents(_ store: LogStore, _ expected: [[UInt8]: [UInt8]], space: LogStore.KeySpace = 0,
                        _ message: String = "", file: StaticString = #filePath, line: UInt = #line) throws {
        let actual = try contents(store, space: space)
        XCTAssertEqual(actual.count, expected.count, "entry count \(message)", file: file, line: line)
        for (key, value) in expected {
            let got = try store.get(forKey: key, space: space)
            if got != value {
                XCTFail("key \(String(decoding: key, as: UTF8.self)): got \(got.map { String(decoding: $0.prefix(40), as: UTF8.self) } ?? "nil"), expected \(String(decoding: value.prefix(40), as: UTF8.self)) \(message)",
                        file: file, line: line)
            }
        }
        for key in actual.keys where expected[key] == nil {
            XCTFail("unexpected key \(String(decoding: key, as: UTF8.self)) \(message)", file: file, line: line)
        }
        XCTAssertEqual(try store.keys(space: space), expected.keys.sorted { $0.lexicographicallyPrecedes($1) },
                       "keys \(message)", file: file, line: line)
    }

    /// The bytes of the records the keydir points at, summed from the records themselves.
    func liveRecordBytes(_ store: LogStore) -> Int {
        let engine = store.engine
        var total = 0
        engine.rw.withReadLock {
            engine.keydir.forEach { _, entry in total += engine.header(at: entry.location)?.totalLength ?? 0 }
        }
        return total
    }

    /// Opens a store, writes `before` (closing it, so a snapshot covers them), reopens, writes
    /// `after`, and returns a crash copy taken while open, with the path of its active segment.
    func crashCopy(before: Int, after: Int, segmentSize: Int = 1 << 20, last: (LogStore) throws -> Void = { _ in })
        throws -> (copy: URL, model: [[UInt8]: [UInt8]], active: URL) {
        let directory = temporary.make()
        var model: [[UInt8]: [UInt8]] = [:]
        if before > 0 {
            let store = try LogStore(directory: directory, options: options(segmentSize: segmentSize))
            for i in 0..<before {
                try store.put(b("before-\(i)"), forKey: b("b\(i)"))
                model[b("b\(i)")] = b("before-\(i)")
            }
            try store.close()
        }
        let store = try LogStore(directory: directory, options: options(segmentSize: segmentSize))
        if segmentSize < 256 << 10 {
            // Fill past a segment, so the active segment at the crash is a fresh one: its file is
            // a whole segment long, all reserved when it was created.
            for i in 0..<(segmentSize / 1024 + 6) {
                let value = [UInt8](repeating: UInt8(i % 256), count: 1024)
                try store.put(value, forKey: b("fill\(i)"))
                model[b("fill\(i)")] = value
            }
        }
        for i in 0..<after {
            try store.put(b("after-\(i)"), forKey: b("a\(i)"))
            model[b("a\(i)")] = b("after-\(i)")
        }
        try last(store)
        let copy = try copyStore(directory, label: "crash")
        try store.close()
        var active: URL?
        for file in try segmentFiles(copy).reversed() where !(try segmentHeader(file.url)).isCompactionOutput {
            active = file.url
            break
        }
        return (copy, model, active!)
    }

    func truncateFile(_ url: URL, to length: Int) throws {
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: UInt64(length))
        try handle.close()
    }

    func modifyFile(_ url: URL, _ body: (inout [UInt8]) -> Void) throws {
        var bytes = [UInt8](try Data(contentsOf: url))
        body(&bytes)
        try Data(bytes).write(to: url)
    }

    func fileSize(_ url: URL) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue ?? -1
    }
}

extension StoreError {
    var isLocked: Bool { if case .locked = self { return true } else { return false } }
    var isReadOnly: Bool { if case .readOnly = self { return true } else { return false } }
    var isClosed: Bool { if case .closed = self { return true } else { return false } }
    var isCorrupt: Bool { if case .corrupt = self { return true } else { return false } }
    var tooLargeSize: Int? { if case .valueTooLarge(let size) = self { return size } else { return nil } }
}

/// Asserts that `body` throws a `StoreError` for which `check` is true.
func assertStoreError<T>(_ body: @autoclosure () throws -> T, _ check: (StoreError) -> Bool, _ message: String = "",
                         file: StaticString = #filePath, line: UInt = #line) {
    do {
        _ = try body()
        XCTFail("expected a StoreError, nothing thrown \(message)", file: file, line: line)
    } catch let error as StoreError {
        XCTAssertTrue(check(error), "unexpected error \(error) \(message)", file: file, line: line)
    } catch {
        XCTFail("unexpected non-StoreError \(error) \(message)", file: file, line: line)
    }
}
