import CrashTestSupport
import Foundation
import XCTest
@testable import LogStore

/// I/O error injection in the manner of SQLite's tests: a workload runs once to count its I/O
/// calls, then once per call with that call failing (EIO, ENOSPC, or a short write followed by
/// ENOSPC). After each injected fault:
/// - the operation that met it throws a typed `StoreError` (never a crash);
/// - the store reopens;
/// - every acknowledged write is there with its value, every acknowledged delete stays deleted;
/// - an operation that threw is all or nothing: a batch is wholly there or wholly absent.
final class FaultInjectionTests: StoreTestCase {
    /// What the store must hold for a key after the workload.
    private enum Expectation {
        case value([UInt8])
        case absent
        /// Operations that threw: any of the states they could have left.
        case oneOf([[UInt8]?])
    }

    private struct Model {
        var expected: [[UInt8]: Expectation] = [:]
        /// Batches that threw: their keys must all show the batch's values or none of them.
        var uncertainBatches: [[(key: [UInt8], value: [UInt8]?)]] = []
        var failures: [String] = []

        mutating func acknowledge(_ key: [UInt8], _ value: [UInt8]?) {
            expected[key] = value.map(Expectation.value) ?? .absent
            // A later acknowledged write settles the key for any uncertain batch too.
            uncertainBatches = uncertainBatches.map { $0.filter { $0.key != key } }.filter { !$0.isEmpty }
        }

        mutating func fail(_ key: [UInt8], _ value: [UInt8]?, error: Error) {
            let possible: [[UInt8]?]
            switch expected[key] {
            case .value(let v): possible = [v]
            case .absent, .none: possible = [nil]
            case .oneOf(let states): possible = states   // still uncertain: every state stays possible
            }
            expected[key] = .oneOf(possible + [value])
            record(error)
        }

        mutating func record(_ error: Error) {
            if !(error is StoreError) { failures.append("untyped error: \(error)") }
        }
    }

    private func key(_ i: Int) -> [UInt8] { b("key-\(i)") }
    private func value(_ i: Int, _ round: Int) -> [UInt8] { b("value-\(i)-\(round)-") + [UInt8](repeating: UInt8(i & 0xFF), count: 200) }

    /// Puts, a batch, deletes, a segment roll, a compaction, overwrites and a close: each step in
    /// its own do/catch so the workload goes on after a failure, as an application would.
    private func runWorkload(at directory: URL, durability: LogStore.Options.Durability, model: inout Model) {
        var opts = options(segmentSize: 8 << 10, durability: durability)
        opts.compactionTrigger = 2   // compaction only when asked, so the call sequence is fixed
        let store: LogStore
        do {
            store = try LogStore(directory: directory, options: opts)
        } catch {
            model.record(error)
            return
        }
        for i in 0..<40 {
            do { try store.put(value(i, 0), forKey: key(i)); model.acknowledge(key(i), value(i, 0)) }
            catch { model.fail(key(i), value(i, 0), error: error) }
        }
        var batch = LogStore.WriteBatch()
        var batchContents: [(key: [UInt8], value: [UInt8]?)] = []
        for i in 40..<46 {
            batch.put(value(i, 1), forKey: key(i))
            batchContents.append((key(i), value(i, 1)))
        }
        batch.delete(forKey: key(0))
        batchContents.append((key(0), nil))
        do {
            try store.write(batch)
            for entry in batchContents { model.acknowledge(entry.key, entry.value) }
        } catch {
            // A delete is evidence of the batch only for a key known to hold a value before it (in
            // processCrashSafe a fault in the background syncer can fail every write from the first).
            let evidence = batchContents.filter { entry in
                if entry.value != nil { return true }
                if case .value = model.expected[entry.key] { return true }
                return false
            }
            for entry in batchContents { model.fail(entry.key, entry.value, error: error) }
            model.uncertainBatches.append(evidence)
        }
        for i in stride(from: 1, to: 40, by: 3) {
            do { try store.delete(forKey: key(i)); model.acknowledge(key(i), nil) }
            catch { model.fail(key(i), nil, error: error) }
        }
        do { try store.compact() } catch { model.record(error) }
        for i in 0..<20 {
            do { try store.put(value(i, 2), forKey: key(i)); model.acknowledge(key(i), value(i, 2)) }
            catch { model.fail(key(i), value(i, 2), error: error) }
        }
        do { try store.sync() } catch { model.record(error) }
        do { try store.close() } catch { model.record(error) }
        // Reopen (index snapshot, recovery of whatever the failure left) and write again.
        let reopened: LogStore
        do { reopened = try LogStore(directory: directory, options: opts) } catch {
            model.record(error)
            return
        }
        for i in 60..<66 {
            do { try reopened.put(value(i, 3), forKey: key(i)); model.acknowledge(key(i), value(i, 3)) }
            catch { model.fail(key(i), value(i, 3), error: error) }
        }
        do { try reopened.delete(forKey: key(2)); model.acknowledge(key(2), nil) }
        catch { model.fail(key(2), nil, error: error) }
        do { try reopened.close() } catch { model.record(error) }
    }

    private func describe(_ value: [UInt8]?) -> String {
        guard let value else { return "absent" }
        return "holds " + String(decoding: value.prefix(14), as: UTF8.self) + "..."
    }

    /// Reopens the store with no faults and checks it against the model.
    private func check(_ directory: URL, model: Model, context: String) {
        for failure in model.failures { XCTFail("\(context): \(failure)") }
        let store: LogStore
        do {
            store = try LogStore(directory: directory, options: options(segmentSize: 8 << 10))
        } catch {
            XCTFail("\(context): the store does not reopen: \(error)")
            return
        }
        defer { try? store.close() }
        for (key, expectation) in model.expected {
            let name = String(decoding: key, as: UTF8.self)
            let found: [UInt8]?
            do { found = try store.get(forKey: key) } catch {
                XCTFail("\(context): get \(name) throws after reopen: \(error)")
                continue
            }
            switch expectation {
            case .value(let v):
                XCTAssertTrue(found == v, "\(context): acknowledged value of \(name) lost or wrong (\(describe(found)))")
            case .absent:
                XCTAssertTrue(found == nil, "\(context): acknowledged delete of \(name) undone (\(describe(found)))")
            case .oneOf(let states):
                XCTAssertTrue(states.contains { $0 == found },
                              "\(context): \(name) holds none of the values its writes could leave (\(describe(found)))")
            }
        }
        for batch in model.uncertainBatches {
            let applied = batch.map { entry in (try? store.get(forKey: entry.key)) == entry.value }
            XCTAssertTrue(applied.allSatisfy { $0 } || !applied.contains(true) || batch.count == 1,
                          "\(context): a failed batch is half there: \(applied)")
        }
        do {
            let report = try store.verify()
            XCTAssertTrue(report.problems.isEmpty, "\(context): verify after reopen: \(report.problems)")
        } catch {
            XCTFail("\(context): verify throws: \(error)")
        }
    }

    private func campaign(durability: LogStore.Options.Durability, faults: [InjectedFault], label: String) throws {
        let report = FaultCampaign.run(faults: faults, minimumCalls: 50, directory: { temporary.make("fault") }) { directory in
            var model = Model()
            runWorkload(at: directory, durability: durability, model: &model)
            return { [model] context in self.check(directory, model: model, context: "\(label) \(context)") }
        }
        print("fault injection, \(label): \(report.calls) I/O calls in the workload, \(report.injected) runs with a fault injected, calls failed: \(report.failed.sorted().joined(separator: " "))")
        // Every kind of call the workload makes was failed at least once.
        XCTAssertTrue(report.made.isSubset(of: report.failed), "\(label): calls never failed: \(report.made.subtracting(report.failed))")
    }

    func testEveryIOCallFailingInProcessCrashSafeMode() throws {
        try campaign(durability: .processCrashSafe, faults: [.error(EIO), .error(ENOSPC), .shortWrite], label: "processCrashSafe")
    }

    func testEveryIOCallFailingInFsyncMode() throws {
        try campaign(durability: .fsyncEachWrite, faults: [.error(EIO)], label: "fsyncEachWrite")
    }

    /// A disk that fills up while a segment is created: the write that needs the new segment
    /// throws ENOSPC (no SIGBUS: segments are preallocated before they are mapped), and the
    /// store keeps working once there is room again.
    func testFullDiskAtSegmentCreationIsAnErrorNotACrash() throws {
        let directory = temporary.make("enospc")
        let store = try LogStore(directory: directory, options: options(segmentSize: 4 << 10))
        defer { try? store.close() }
        try store.put(value(1, 0), forKey: key(1))
        FaultInjection.arm(failAt: 0, fault: .error(ENOSPC), only: [.fallocate])
        var sawENOSPC = false
        for i in 2..<200 {
            do { try store.put(value(i, 0), forKey: key(i)) } catch StoreError.io(_, let code) {
                XCTAssertEqual(code, ENOSPC)
                sawENOSPC = true
                break
            }
        }
        FaultInjection.disarm()
        XCTAssertTrue(sawENOSPC, "no write needed a new segment")
        try store.put(value(500, 0), forKey: key(500))
        XCTAssertEqual(try store.get(forKey: key(500)), value(500, 0))
        XCTAssertEqual(try store.get(forKey: key(1)), value(1, 0))
    }
}

/// After a failed fsync the store refuses writes (the kernel may have dropped the pages it could
/// not write) until it is reopened; reads go on, and the reopened store holds what was
/// acknowledged.
final class StickySyncFailureTests: StoreTestCase {
    func testWritesAreRefusedAfterAFailedFsyncUntilReopen() throws {
        let directory = temporary.make("sticky")
        let store = try LogStore(directory: directory, options: options(durability: .fsyncEachWrite))
        try store.put(b("one"), forKey: b("a"))
        FaultInjection.arm(failAt: 0, fault: .error(EIO), only: [.fdatasync])
        XCTAssertThrowsError(try store.put(b("two"), forKey: b("b")))
        FaultInjection.disarm()
        // The disk works again, but this handle stays refused: it cannot know what was lost.
        XCTAssertThrowsError(try store.put(b("three"), forKey: b("c"))) { error in
            guard case StoreError.io(let operation, let code) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(code, EIO)
            XCTAssertTrue(operation.contains("reopened"), operation)
        }
        XCTAssertThrowsError(try store.sync())
        // Even a removal that finds nothing to delete: "b" may be on disk after all.
        XCTAssertThrowsError(try store.removeAll(space: 5))
        XCTAssertThrowsError(try store.checkNoFailedSync())
        XCTAssertEqual(try store.get(forKey: b("a")), b("one"))
        try? store.close()
        let reopened = try LogStore(directory: directory, options: options(durability: .fsyncEachWrite))
        defer { try? reopened.close() }
        XCTAssertEqual(try reopened.get(forKey: b("a")), b("one"))
        XCTAssertNil(try reopened.get(forKey: b("c")))
        try reopened.put(b("four"), forKey: b("d"))
        XCTAssertEqual(try reopened.get(forKey: b("d")), b("four"))
    }
}

/// Every I/O call of a rekey (and the compaction after it) failed in turn: afterwards the store
/// opens with the old key when the rekey threw (finishing it from its rekey record when one was
/// written) and with the new key when it returned, and every value reads back.
final class RekeyFaultInjectionTests: StoreTestCase {
    private let oldKey = LogStore.Options.Encryption(key: [UInt8](repeating: 0x5A, count: 32), keyID: 1)
    private let newKey = LogStore.Options.Encryption(key: [UInt8](repeating: 0xC3, count: 32), keyID: 2)

    private func options(_ key: LogStore.Options.Encryption) -> LogStore.Options {
        var options = self.options(segmentSize: 8 << 10)
        options.encryption = key
        options.compactionTrigger = 2
        return options
    }

    private func value(_ i: Int) -> [UInt8] { b("rekey value \(i) " + String(repeating: "r", count: 50 + i % 90)) }

    func testEveryIOCallOfARekeyFailing() throws {
        let template = temporary.make("rekey-template")
        do {
            let store = try LogStore(directory: template, options: options(oldKey))
            for i in 0..<80 { try store.put(value(i), forKey: b("k\(i)")) }
            try store.close()
        }
        /// Whether the rekey returned (the compaction after it may still fail).
        func rekeyRun(_ directory: URL) -> Bool {
            var rekeyed = false
            do {
                let store = try LogStore(directory: directory, options: options(oldKey))
                defer { try? store.close() }
                try store.rekey(to: newKey)
                rekeyed = true
                try store.compact()
            } catch {
                XCTAssertTrue(error is StoreError, "untyped error \(error)")
            }
            return rekeyed
        }
        let dry = try copyStore(template, label: "rekey-dry")
        FaultInjection.arm(failAt: nil)
        XCTAssertTrue(rekeyRun(dry))
        let calls = FaultInjection.disarm()
        XCTAssertGreaterThan(calls, 10)
        var fired = 0
        for index in 0..<calls {
            let directory = try copyStore(template, label: "rekey-fault")
            FaultInjection.arm(failAt: index, fault: .error(EIO))
            let succeeded = rekeyRun(directory)
            let what = FaultInjection.fired
            FaultInjection.disarm()
            guard let what else { continue }
            fired += 1
            let context = "EIO at call \(index) (\(what.call.rawValue) \(what.path)), rekey \(succeeded ? "returned" : "threw")"
            // A rekey that returned is done: the new key opens the store. One that threw may or
            // may not have written its rekey record: the old key opens it either way.
            let key = succeeded ? newKey : oldKey
            do {
                let store = try LogStore(directory: directory, options: options(key))
                defer { try? store.close() }
                for i in 0..<80 {
                    XCTAssertEqual(try store.get(forKey: b("k\(i)")), value(i), "\(context): k\(i)")
                }
                XCTAssertEqual(try store.verify().problems, [], context)
            } catch {
                XCTFail("\(context): reopen with key \(key.keyID) failed: \(error)")
            }
            try? FileManager.default.removeItem(at: directory)
        }
        XCTAssertGreaterThan(fired, 10)
    }
}

/// Opening a store whose compaction was interrupted after its commit file was written (the
/// open reads the commit with pread, renames the outputs into place, deletes the inputs), with
/// each I/O call of that open failing in turn: the open throws a typed error or succeeds, and a
/// clean open afterwards finds every value.
final class InterruptedCompactionFaultTests: StoreTestCase {
    private func value(_ i: Int, _ round: Int) -> [UInt8] { b("v\(i).\(round)-" + String(repeating: "c", count: 120)) }

    func testEveryIOCallOfFinishingACompactionFailing() throws {
        let template = temporary.make("compaction-template")
        var expected: [[UInt8]: [UInt8]] = [:]
        do {
            let store = try LogStore(directory: template, options: options(segmentSize: 4 << 10))
            for round in 0..<3 {
                for i in 0..<60 {
                    try store.put(value(i, round), forKey: b("k\(i)"))
                    expected[b("k\(i)")] = value(i, round)
                }
            }
            // Stop the compaction at its second rename: the first puts the commit file in place
            // (written and synced), the second would move the first output into place. The store then refuses nothing (compaction failures do not
            // poison it), and the handle is dropped without a snapshot, as a crash would.
            FaultInjection.arm(failAt: 1, fault: .error(EIO), only: [.rename])
            XCTAssertThrowsError(try store.compact())
            FaultInjection.disarm()
            try? store.close()
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: template.appendingPathComponent(StoreFileName.compactionCommit).path),
                      "the interrupted compaction left no commit file")
        func open(_ directory: URL) -> Bool {
            do {
                let store = try LogStore(directory: directory, options: options(segmentSize: 4 << 10))
                try store.close()
                return true
            } catch {
                XCTAssertTrue(error is StoreError, "untyped error \(error)")
                return false
            }
        }
        let dry = try copyStore(template, label: "compaction-dry")
        FaultInjection.arm(failAt: nil)
        XCTAssertTrue(open(dry))
        let calls = FaultInjection.disarm()
        var failed = Set<String>()
        for index in 0..<calls {
            let directory = try copyStore(template, label: "compaction-fault")
            FaultInjection.arm(failAt: index, fault: .error(EIO))
            _ = open(directory)
            let fired = FaultInjection.fired
            FaultInjection.disarm()
            guard let fired else { continue }
            failed.insert(fired.call.rawValue)
            let context = "EIO at call \(index) (\(fired.call.rawValue) \(fired.path))"
            do {
                let store = try LogStore(directory: directory, options: options(segmentSize: 4 << 10))
                defer { try? store.close() }
                for (key, v) in expected {
                    XCTAssertEqual(try store.get(forKey: key), v, "\(context): \(String(decoding: key, as: UTF8.self))")
                }
                XCTAssertEqual(try store.verify().problems, [], context)
            } catch {
                XCTFail("\(context): clean reopen failed: \(error)")
            }
            try? FileManager.default.removeItem(at: directory)
        }
        XCTAssertTrue(failed.contains(IOCall.pread.rawValue), "the commit file was never read: \(failed)")
        print("fault injection, finishing an interrupted compaction: \(calls) I/O calls, calls failed: \(failed.sorted().joined(separator: " "))")
    }
}

/// Failures of work the store does on its own are visible in `statistics.backgroundErrors`.
final class BackgroundErrorTests: StoreTestCase {
    func testAFailedCompactionAfterRekeyIsReported() throws {
        let directory = temporary.make("background")
        var opts = options(segmentSize: 4 << 10)
        opts.encryption = .init(key: [UInt8](repeating: 0x11, count: 32), keyID: 1)
        let store = try LogStore(directory: directory, options: opts)
        defer { try? store.close() }
        for i in 0..<50 { try store.put(b("value \(i) " + String(repeating: "v", count: 100)), forKey: b("k\(i)")) }
        XCTAssertEqual(store.statistics.backgroundErrors, [])
        // The first rename fails: the rekey's rewrites need none, its final compaction's commit does.
        FaultInjection.arm(failAt: 0, fault: .error(EIO), only: [.rename])
        try store.rekey(to: .init(key: [UInt8](repeating: 0x22, count: 32), keyID: 2))
        FaultInjection.disarm()
        XCTAssertEqual(store.statistics.backgroundErrors.count, 1)
        XCTAssertTrue(store.statistics.backgroundErrors.first?.contains("compaction after rekey") == true)
        XCTAssertEqual(try store.get(forKey: b("k7")), b("value 7 " + String(repeating: "v", count: 100)))
    }
}
