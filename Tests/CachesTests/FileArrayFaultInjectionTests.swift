import CrashTestSupport
import Foundation
import XCTest
@testable import Caches
import LogStore

/// I/O error injection into the file arrays, as FaultInjectionTests does for the engine: a
/// workload of file-array writes (chunked and external files), overwrites, a rename and removals
/// runs once to count its I/O calls (the engine's and the external files', which go through the
/// same door), then once per call with that call failing. After each fault the store and the
/// array reopen, every acknowledged file reads back byte for byte, an acknowledged removal stays
/// removed, a call that failed left its file wholly old or wholly new, nothing unlisted is
/// readable, and no external file is left that no manifest names.
final class FileArrayFaultInjectionTests: XCTestCase {
    private enum Expectation {
        case content(Data)
        case absent
        /// A call that threw: any of the states it could have left.
        case oneOf([Data?])
    }

    private struct Model {
        var expected: [String: Expectation] = [:]
        var failures: [String] = []

        mutating func acknowledge(_ name: String, _ content: Data?) {
            expected[name] = content.map(Expectation.content) ?? .absent
        }

        mutating func fail(_ name: String, _ content: Data?, error: Error) {
            var states: [Data?]
            switch expected[name] {
            case .content(let old): states = [old]
            case .absent, .none: states = [nil]
            case .oneOf(let old): states = old
            }
            expected[name] = .oneOf(states + [content])
            if !(error is StoreError) { failures.append("untyped error for \(name): \(error)") }
        }

        func current(_ name: String) -> [Data?] {
            switch expected[name] {
            case .content(let data): return [data]
            case .absent, .none: return [nil]
            case .oneOf(let states): return states
            }
        }
    }

    private var folders: [URL] = []

    override func tearDown() {
        for folder in folders { try? FileManager.default.removeItem(at: folder) }
        folders = []
    }

    private func folder() -> URL {
        let url = makeTemporaryFolder("fault")
        folders.append(url)
        return url
    }

    /// The workload's file contents, made once (the campaign runs the workload some 200 times).
    private static let contents: [Int: Data] = {
        var result: [Int: Data] = [:]
        for (seed, count) in [(1, 3_000), (2, 100_000), (3, 70_000), (4, 1_300_000), (5, 90_000), (6, 65_536)] {
            var bytes = [UInt8](repeating: 0, count: count)
            bytes.withUnsafeMutableBufferPointer { buffer in
                for i in buffer.indices { buffer[i] = UInt8(truncatingIfNeeded: i &* 31 &+ seed &* 7) }
            }
            result[seed] = Data(bytes)
        }
        return result
    }()

    private func content(_ seed: Int, _ count: Int) -> Data {
        guard let data = Self.contents[seed], data.count == count else { preconditionFailure("no content \(seed) of \(count) bytes") }
        return data
    }

    private func options(_ durability: LogStore.Options.Durability) -> LogStore.Options {
        var options = LogStore.Options()
        options.segmentSize = 256 << 10
        options.durability = durability
        options.compactionTrigger = 2   // no background compaction: the call sequence is fixed
        if durability == .processCrashSafe {
            // No background syncer either (its rounds would interleave with the workload's
            // calls by timing): the workload's explicit `sync()` runs the same round, external
            // files' fsyncs and deferred unlinks included, at a fixed place.
            options.maxUnsyncedInterval = nil
            options.maxUnsyncedBytes = nil
        }
        return options
    }

    private func openIndex(_ directory: URL, _ durability: LogStore.Options.Durability) throws -> (LogStore, FileArrayIndex) {
        let storeFolder = directory.appendingPathComponent("store", isDirectory: true)
        let store = try LogStore(directory: storeFolder, options: options(durability))
        let index = try FileArrayIndex.index(for: store, directory: storeFolder, compresses: false, spaceName: "filearray:faults")
        return (store, index)
    }

    /// Writes (small chunked, large external, multi-chunk through the chunk path), an overwrite
    /// that replaces an external file, a rename, removals; each call in its own do/catch.
    private func runWorkload(at directory: URL, durability: LogStore.Options.Durability, model: inout Model) {
        let store: LogStore
        let index: FileArrayIndex
        do {
            (store, index) = try openIndex(directory, durability)
        } catch {
            if !(error is StoreError) { model.failures.append("untyped open error: \(error)") }
            return
        }
        func write(_ name: String, _ data: Data, plain: Bool = true) {
            do {
                try index.write(data, name: name, capacity: 0, crypt: .plain, plain: plain)
                model.acknowledge(name, data)
            } catch {
                model.fail(name, data, error: error)
            }
        }
        write("small", content(1, 3_000))
        write("large", content(2, 100_000))
        write("other", content(3, 70_000))
        write("chunked", content(4, 1_300_000), plain: false)   // two chunk records
        write("large", content(5, 90_000))                        // replaces an external file
        // Reads: a failed read throws a typed error and changes nothing.
        for name in ["large", "chunked"] {
            do { _ = try index.read(name) } catch {
                if !(error is StoreError) { model.failures.append("untyped read error for \(name): \(error)") }
            }
        }
        do {
            // false: "other" is not listed (its write threw); nothing was acknowledged.
            if try index.rename("other", to: "renamed") {
                model.expected["renamed"] = model.expected["other"]
                model.acknowledge("other", nil)
            }
        } catch {
            // Either both names as they were, or the file under its new name.
            let states = model.current("other")
            model.expected["renamed"] = .oneOf(model.current("renamed") + states)
            model.expected["other"] = .oneOf(states + [nil])
            if !(error is StoreError) { model.failures.append("untyped rename error: \(error)") }
        }
        do {
            try index.remove(["small", "large"])
            model.acknowledge("small", nil)
            model.acknowledge("large", nil)
        } catch {
            model.fail("small", nil, error: error)
            model.fail("large", nil, error: error)
        }
        // The default mode's sync: the external files written so far and their folder, then the
        // log; then the files dropped above are unlinked. A failure fails no acknowledged call.
        do { try store.sync() } catch {
            if !(error is StoreError) { model.failures.append("untyped sync error: \(error)") }
        }
        write("late", content(6, 65_536))
        do { try store.close() } catch {
            if !(error is StoreError) { model.failures.append("untyped close error: \(error)") }
        }
    }

    /// Reopens with no faults and checks the array against the model.
    private func check(_ directory: URL, durability: LogStore.Options.Durability, model: Model, context: String) {
        for failure in model.failures { XCTFail("\(context): \(failure)") }
        let store: LogStore
        let index: FileArrayIndex
        do {
            (store, index) = try openIndex(directory, durability)
        } catch {
            XCTFail("\(context): the array does not reopen: \(error)")
            return
        }
        defer { try? store.close() }
        for (name, expectation) in model.expected {
            let found: Data?
            do { found = try index.read(name) } catch {
                XCTFail("\(context): reading \(name) throws after reopen: \(error)")
                continue
            }
            switch expectation {
            case .content(let data):
                XCTAssertTrue(found == data, "\(context): acknowledged \(name) lost or wrong (\(found?.count ?? -1) bytes)")
            case .absent:
                XCTAssertNil(found, "\(context): acknowledged removal of \(name) undone")
            case .oneOf(let states):
                XCTAssertTrue(states.contains { $0 == found }, "\(context): \(name) holds none of the states its calls could leave (\(found?.count ?? -1) bytes)")
            }
        }
        XCTAssertTrue(Set(index.manifests.keys).isSubset(of: model.expected.keys), "\(context): unknown names \(index.manifests.keys.sorted())")
        // Every external file left is one a manifest names (the load deletes the others).
        if let folder = index.externalFolder {
            // Outside fsyncEachWrite the load's leftovers are unlinked after the store's next
            // sync (FORMAT.md, "Attachments").
            if durability != .fsyncEachWrite {
                do { try store.sync() } catch { XCTFail("\(context): sync after reopen: \(error)") }
            }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            let referenced = Set(index.manifests.values.filter { $0.kind == .external }.compactMap { index.externalURL($0.fileID)?.lastPathComponent })
            XCTAssertEqual(Set(names), referenced, "\(context): external files no manifest names")
        }
    }

    private func campaign(durability: LogStore.Options.Durability, faults: [InjectedFault], label: String) {
        let report = FaultCampaign.run(faults: faults, minimumCalls: 20, directory: folder) { directory in
            var model = Model()
            runWorkload(at: directory, durability: durability, model: &model)
            return { [model] context in self.check(directory, durability: durability, model: model, context: "\(label) \(context)") }
        }
        print("file array fault injection, \(label): \(report.calls) I/O calls, \(report.injected) runs with a fault injected, calls failed: \(report.failed.sorted().joined(separator: " "))")
        XCTAssertTrue(report.made.isSuperset(of: ["open", "pwrite", "pread", "fstat", "unlink"]), "\(label): the external files' calls are not counted: \(report.made)")
        XCTAssertTrue(report.made.isSubset(of: report.failed), "\(label): calls never failed: \(report.made.subtracting(report.failed))")
    }

    func testEveryIOCallOfAFileArrayFailingInProcessCrashSafeMode() {
        campaign(durability: .processCrashSafe, faults: [.error(EIO), .error(ENOSPC), .shortWrite], label: "processCrashSafe")
    }

    /// In fsync mode the external files are synced before their manifests (and fdatasync fails too).
    func testEveryIOCallOfAFileArrayFailingInFsyncMode() {
        campaign(durability: .fsyncEachWrite, faults: [.error(EIO)], label: "fsyncEachWrite")
    }
}
