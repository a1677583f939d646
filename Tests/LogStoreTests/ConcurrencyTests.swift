import Foundation
import XCTest
@testable import LogStore

/// Runs `body(index)` on `count` dedicated threads (not the Dispatch pool, whose width on a
/// small machine would serialize them) and waits for all.
func runThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    group.wait()
}

/// Failures collected from other threads, reported on the test thread.
final class FailureLog: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [String] = []
    func add(_ message: String) {
        lock.lock()
        if messages.count < 20 { messages.append(message) }
        lock.unlock()
    }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return messages }
}

final class AtomicFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.lock(); value = true; lock.unlock() }
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
}

final class ConcurrencyTests: StoreTestCase {
    /// The value of `key` at `version`: self-describing, so a reader can tell a valid version
    /// from garbage or another key's value.
    static func value(key: Int, version: Int) -> [UInt8] {
        let head = b("k\(key):v\(version):")
        let length = 20 + (key * 7 + version * 13) % 180
        return head + (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ key &+ version) }
    }

    /// The version a value encodes, or nil when it is not a valid value of `key`.
    static func version(of value: [UInt8], key: Int) -> Int? {
        let text = String(decoding: value.prefix(40), as: UTF8.self)
        let parts = text.split(separator: ":", maxSplits: 2)
        guard parts.count >= 2, parts[0] == "k\(key)", parts[1].hasPrefix("v"), let version = Int(parts[1].dropFirst()) else { return nil }
        return Self.value(key: key, version: version) == value ? version : nil
    }

    func testReadersDuringWritesAndCompaction() throws {
        let directory = temporary.make()
        let store = try LogStore(directory: directory, options: options(segmentSize: 16 << 10, compactionTrigger: 0.3))
        let keyCount = 300
        let volatile = 250  // keys >= this are deleted and re-put: nil is a valid read for them
        for key in 0..<keyCount { try store.put(Self.value(key: key, version: 0), forKey: b("key-\(key)")) }
        let failures = FailureLog()
        let done = AtomicFlag()
        let duration: TimeInterval = 2.5
        let finalVersions = LockedBox([Int: Int?]())
        runThreads(5) { role in
            var rng = SeededRandom(seed: UInt64(role) + 100)
            switch role {
            case 0:
                // The writer: overwrites (versions only grow), deletes and re-puts volatile keys, batches.
                var versions = [Int](repeating: 0, count: keyCount)
                var deleted = Set<Int>()
                let end = Date(timeIntervalSinceNow: duration)
                while Date() < end {
                    do {
                        let key = Int.random(in: 0..<keyCount, using: &rng)
                        switch Int.random(in: 0..<10, using: &rng) {
                        case 0 where key >= volatile:
                            try store.delete(forKey: b("key-\(key)"))
                            deleted.insert(key)
                        case 1:
                            var batch = LogStore.WriteBatch()
                            for other in [key, (key + 1) % volatile] {
                                versions[other] += 1
                                batch.put(Self.value(key: other, version: versions[other]), forKey: b("key-\(other)"))
                                deleted.remove(other)
                            }
                            try store.write(batch)
                        default:
                            versions[key] += 1
                            try store.put(Self.value(key: key, version: versions[key]), forKey: b("key-\(key)"))
                            deleted.remove(key)
                        }
                    } catch {
                        failures.add("writer: \(error)")
                        break
                    }
                }
                finalVersions.value = Dictionary(uniqueKeysWithValues: (0..<keyCount).map { ($0, deleted.contains($0) ? nil : versions[$0]) })
                done.set()
            case 1:
                // Explicit compactions, over and over, while the writer runs: alternately the
                // public one (seals the active segment) and the background kind (sealed only).
                var count = 0
                while !done.isSet {
                    do {
                        if count % 2 == 0 { try store.compact() } else { try store.engine.compact(sealActive: false) }
                        count += 1
                    } catch {
                        failures.add("compact: \(error)")
                    }
                    Thread.sleep(forTimeInterval: 0.02)
                }
                if count == 0 { failures.add("no compaction ran") }
            default:
                // Readers: every value is a valid version of its key, and never older than one
                // this reader saw before.
                var seen = [Int](repeating: 0, count: keyCount)
                var reads = 0
                while !done.isSet {
                    do {
                        let key = Int.random(in: 0..<keyCount, using: &rng)
                        if let value = try store.get(forKey: b("key-\(key)")) {
                            guard let version = Self.version(of: value, key: key) else {
                                failures.add("garbage for key \(key): \(value.prefix(30))")
                                continue
                            }
                            if key < volatile && version < seen[key] {
                                failures.add("key \(key) went back from version \(seen[key]) to \(version)")
                            }
                            seen[key] = max(seen[key], version)
                        } else if key < volatile {
                            failures.add("key \(key) missing")
                        }
                        reads += 1
                        if reads % 500 == 0 {
                            let entries = try store.entries(space: 0, prefix: b("key-1"))
                            for entry in entries {
                                let key = Int(String(decoding: entry.key.dropFirst(4), as: UTF8.self))!
                                if Self.version(of: entry.value, key: key) == nil { failures.add("entries: garbage for \(key)") }
                            }
                            _ = store.statistics
                        }
                    } catch {
                        failures.add("reader: \(error)")
                    }
                }
                if reads == 0 { failures.add("reader \(role) never read") }
            }
        }
        XCTAssertEqual(failures.all, [])
        XCTAssertGreaterThan(store.statistics.compactions, 0)
        let expected = finalVersions.value
        for key in 0..<keyCount {
            let got = try store.get(forKey: b("key-\(key)"))
            if let version = expected[key] ?? nil {
                XCTAssertEqual(got, Self.value(key: key, version: version), "key \(key)")
            } else {
                XCTAssertNil(got, "key \(key)")
            }
        }
        XCTAssertEqual(try store.verify().problems, [])
        // A background compaction may still be running; an explicit one waits for it, so the copy
        // below does not race its file removals.
        try store.compact()
        let crash = try copyStore(directory)
        try store.close()
        for directory in [directory, crash] {
            let reopened = try LogStore(directory: directory, options: options(segmentSize: 16 << 10))
            for key in 0..<keyCount {
                let got = try reopened.get(forKey: b("key-\(key)"))
                if let version = expected[key] ?? nil {
                    XCTAssertEqual(got, Self.value(key: key, version: version), "key \(key) after reopen")
                } else {
                    XCTAssertNil(got, "key \(key) after reopen")
                }
            }
            try reopened.close()
        }
    }

    func testConcurrentDurableWriters() throws {
        for mode in [LogStore.Options.Durability.fsyncEachWrite, .groupCommit(interval: 0.005), .processCrashSafe] {
            let directory = temporary.make()
            let store = try LogStore(directory: directory, options: options(segmentSize: 32 << 10, durability: mode))
            let failures = FailureLog()
            let threads = 8
            let perThread = mode == .fsyncEachWrite ? 60 : 300
            runThreads(threads) { thread in
                for i in 0..<perThread {
                    do {
                        if i % 10 == 9 {
                            var batch = LogStore.WriteBatch()
                            batch.put(b("batch-\(thread)-\(i)"), forKey: b("t\(thread)-\(i)"))
                            batch.put(b("batch-\(thread)-\(i)"), forKey: b("t\(thread)-\(i)-b"))
                            try store.write(batch)
                        } else {
                            try store.put(b("value-\(thread)-\(i)"), forKey: b("t\(thread)-\(i)"))
                        }
                        if i % 25 == 0 { _ = try store.get(forKey: b("t\((thread + 1) % threads)-\(i)")) }
                    } catch {
                        failures.add("\(thread)/\(i): \(error)")
                    }
                }
            }
            XCTAssertEqual(failures.all, [], "\(mode)")
            var expected: [[UInt8]: [UInt8]] = [:]
            for thread in 0..<threads {
                for i in 0..<perThread {
                    if i % 10 == 9 {
                        expected[b("t\(thread)-\(i)")] = b("batch-\(thread)-\(i)")
                        expected[b("t\(thread)-\(i)-b")] = b("batch-\(thread)-\(i)")
                    } else {
                        expected[b("t\(thread)-\(i)")] = b("value-\(thread)-\(i)")
                    }
                }
            }
            try assertContents(store, expected, "\(mode)")
            let crash = try copyStore(directory)
            try store.close()
            let reopened = try LogStore(directory: crash, options: options(segmentSize: 32 << 10, durability: mode))
            try assertContents(reopened, expected, "\(mode) crash copy")
            XCTAssertEqual(try reopened.verify().problems, [])
            try reopened.close()
        }
    }

    func testCloseWhileBusy() throws {
        // Closing while other threads read, write and compact: they get `closed` (or finish), never crash.
        let directory = temporary.make()
        let store = try LogStore(directory: directory, options: options(segmentSize: 8 << 10, compactionTrigger: 0.2))
        for i in 0..<200 { try store.put(b("v\(i)"), forKey: b("k\(i)")) }
        let failures = FailureLog()
        runThreads(4) { role in
            if role == 0 {
                Thread.sleep(forTimeInterval: 0.3)
                do { try store.close() } catch { failures.add("close: \(error)") }
                return
            }
            var i = 0
            while true {
                i += 1
                do {
                    switch role {
                    case 1: try store.put(b("w\(i)"), forKey: b("k\(i % 200)"))
                    case 2: _ = try store.get(forKey: b("k\(i % 200)"))
                    default: if i % 50 == 0 { try store.compact() } else { _ = try store.keys(space: 0) }
                    }
                } catch let error as StoreError where error.isClosed {
                    return
                } catch {
                    failures.add("role \(role): \(error)")
                    return
                }
            }
        }
        XCTAssertEqual(failures.all, [])
        let reopened = try LogStore(directory: directory, options: options(segmentSize: 8 << 10))
        XCTAssertEqual(reopened.recoveryReport, [])
        XCTAssertEqual(try reopened.keys(space: 0).count, 200)
        XCTAssertEqual(try reopened.verify().problems, [])
    }
}

/// A value shared between threads under a lock.
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); stored = newValue; lock.unlock() }
    }
}
