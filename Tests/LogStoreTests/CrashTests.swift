import Foundation
import CrashTestSupport
import XCTest
import CChecksum
@testable import LogStore

#if canImport(Glibc)
import Glibc
#endif

/// Kills a real writer process (Tests/CrashWriter) with SIGKILL at random moments, many times
/// over the same store, and checks after each kill that the store holds exactly what the writer
/// had acknowledged (plus, possibly, the one operation in flight, wholly or not at all).
///
/// Runs 12 kill cycles by default. Set LOGSTORE_CRASH_CYCLES to run another number, for example
/// `LOGSTORE_CRASH_CYCLES=500 swift test --scratch-path .build-tests --filter CrashTests`.
/// LOGSTORE_CRASH_SEED fixes the random seed (each failure message prints the one used).
final class CrashTests: StoreTestCase {
    /// Must match `crashValue` in Tests/CrashWriter/main.swift.
    static func crashValue(key: String, version: Int) -> [UInt8] {
        var bytes = Array("\(key)=\(version);".utf8)
        let length = version % 50 == 7 ? 5000 + version % 1000 : (version &* 37 &+ key.utf8.count &* 11) % 400
        bytes.reserveCapacity(bytes.count + length)
        for i in 0..<length { bytes.append(UInt8(truncatingIfNeeded: i &* 131 &+ version)) }
        return bytes
    }

    /// One operation as the writer described it. Keys are "space/key".
    enum Effect: Equatable {
        case put(String, version: Int)
        case delete(String)
    }

    struct Operation {
        var id: Int
        var effects: [Effect]
        var line: String
    }

    static func parse(_ line: Substring) -> Operation? {
        let fields = line.split(separator: " ")
        guard fields.count >= 3, fields[0] == "B", let id = Int(fields[1]) else { return nil }
        switch fields[2] {
        case "P" where fields.count == 5: return Operation(id: id, effects: [.put("\(fields[3])/\(fields[4])", version: id)], line: String(line))
        case "X" where fields.count == 5, "D" where fields.count == 5:
            return Operation(id: id, effects: [.delete("\(fields[3])/\(fields[4])")], line: String(line))
        case "C": return Operation(id: id, effects: [], line: String(line))
        case "T":
            guard fields.count >= 4, let count = Int(fields[3]), fields.count == 4 + count else { return nil }
            var effects: [Effect] = []
            for member in fields[4...] {
                let parts = member.split(separator: ":", maxSplits: 2)
                guard parts.count == 3 else { return nil }
                effects.append(parts[0] == "D" ? .delete("\(parts[1])/\(parts[2])") : .put("\(parts[1])/\(parts[2])", version: id))
            }
            return Operation(id: id, effects: effects, line: String(line))
        default: return nil
        }
    }

    static func apply(_ effects: [Effect], to model: inout [String: Int]) {
        for effect in effects {
            switch effect {
            case .put(let key, let version): model[key] = version
            case .delete(let key): model[key] = nil
            }
        }
    }

    func writerBinary() throws -> URL { try CrashWriterProcess.binary(nextTo: CrashTests.self) }

    /// The store's live contents as "space/key" -> value.
    func actualContents(_ store: LogStore) throws -> [String: [UInt8]] {
        var result: [String: [UInt8]] = [:]
        for space: LogStore.KeySpace in 0...1 {
            for entry in try store.entries(space: space) { result["\(space)/\(String(decoding: entry.key, as: UTF8.self))"] = entry.value }
        }
        return result
    }

    func expectedContents(_ model: [String: Int]) -> [String: [UInt8]] {
        var result: [String: [UInt8]] = [:]
        for (item, version) in model {
            let key = String(item.split(separator: "/", maxSplits: 1)[1])
            result[item] = Self.crashValue(key: key, version: version)
        }
        return result
    }

    func describeDifference(_ actual: [String: [UInt8]], _ expected: [String: [UInt8]], everWritten: Set<String>) -> String {
        var lines: [String] = []
        for key in Set(actual.keys).union(expected.keys).sorted() where actual[key] != expected[key] {
            let got = actual[key].map { String(decoding: $0.prefix(30), as: UTF8.self) } ?? "absent"
            let want = expected[key].map { String(decoding: $0.prefix(30), as: UTF8.self) } ?? "absent"
            lines.append("\(key): store has \(got), expected \(want)\(everWritten.contains(key) ? "" : " (never written!)")")
            if lines.count >= 12 { break }
        }
        return lines.joined(separator: "\n")
    }

    /// While a writer process holds the store, no opener in this process gets in, read-write or
    /// read-only; once it is killed, both do.
    func testLockIsHeldAcrossProcesses() throws {
        let binary = try writerBinary()
        let directory = temporary.make("lock")
        let process = Process()
        process.executableURL = binary
        process.arguments = [directory.path, "1", "crash", String(32 << 10), "1"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() } }
        // Wait until the writer has opened the store and acknowledged a write.
        var seen = Data()
        let deadline = Date(timeIntervalSinceNow: 20)
        while !String(decoding: seen, as: UTF8.self).contains("\nA "), Date() < deadline {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen.append(chunk)
        }
        XCTAssertTrue(String(decoding: seen, as: UTF8.self).contains("\nA "), "the writer started writing")
        assertStoreError(try LogStore(directory: directory, options: options(segmentSize: 32 << 10)), \.isLocked)
        assertStoreError(try LogStore(directory: directory, options: options(segmentSize: 32 << 10, readOnly: true)), \.isLocked)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let store = try LogStore(directory: directory, options: options(segmentSize: 32 << 10))
        XCTAssertGreaterThan(try store.keys(space: 0).count + (try store.keys(space: 1).count), 0)
        XCTAssertEqual(try store.verify().problems, [])
    }

    /// Names and contents' checksums of the files of a directory.
    func directorySnapshot(_ directory: URL) throws -> [String: UInt32] {
        var result: [String: UInt32] = [:]
        for name in try fileNames(directory) {
            let data = try Data(contentsOf: directory.appendingPathComponent(name))
            result[name] = data.withUnsafeBytes { cs_crc32c_extend(0, $0.baseAddress, $0.count) }
        }
        return result
    }

    func testKillWriterAtRandomPoints() throws {
        let binary = try writerBinary()
        let environment = ProcessInfo.processInfo.environment
        let cycles = environment["LOGSTORE_CRASH_CYCLES"].flatMap(Int.init) ?? 12
        let seed = environment["LOGSTORE_CRASH_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max >> 1)
        var rng = SeededRandom(seed: seed)
        let directory = temporary.make("crash")
        let segmentSize = 32 << 10
        var model: [String: Int] = [:]
        var everWritten = Set<String>()
        var nextID = 1
        var acknowledgedTotal = 0
        var inFlightApplied = 0
        var reports: [String] = []
        let modes = ["crash", "group", "fsync"]

        for cycle in 0..<cycles {
            let mode = modes[cycle % modes.count]
            let context = "seed \(seed) cycle \(cycle) mode \(mode)"
            let process = Process()
            process.executableURL = binary
            process.arguments = [directory.path, String(rng.next() >> 1), mode, String(segmentSize), String(nextID)]
            let output = Pipe()
            let errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            let collected = LockedBox(Data())
            let finished = DispatchSemaphore(value: 0)
            let reader = output.fileHandleForReading
            let thread = Thread {
                collected.value = reader.readDataToEndOfFile()
                finished.signal()
            }
            try process.run()
            thread.start()
            let runMillis = Int.random(in: 50...400, using: &rng)
            Thread.sleep(forTimeInterval: Double(runMillis) / 1000)
            let pid = process.processIdentifier
            if process.isRunning { kill(pid, SIGKILL) }
            process.waitUntilExit()
            if finished.wait(timeout: .now() + 10) == .timedOut {
                XCTFail("\(context): the writer's output never closed")
                return
            }
            let stderrText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            guard process.terminationReason == .uncaughtSignal, process.terminationStatus == SIGKILL else {
                XCTFail("\(context): the writer ended by itself (status \(process.terminationStatus)): \(stderrText)")
                return
            }

            // What the writer said: operations in order, acknowledged or not.
            let text = String(decoding: collected.value, as: UTF8.self)
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            if !text.hasSuffix("\n") { lines.removeLast() }  // a line cut by the kill (cannot happen with one write(2), but be safe)
            var pending: Operation?
            var acknowledged = 0
            for line in lines where !line.isEmpty {
                if line.hasPrefix("B ") {
                    guard pending == nil, let operation = Self.parse(line) else {
                        XCTFail("\(context): unexpected line \(line) (pending \(pending?.line ?? "none"))")
                        return
                    }
                    XCTAssertEqual(operation.id, nextID, context)
                    pending = operation
                    nextID = operation.id + 1
                    for case .put(let key, _) in operation.effects { everWritten.insert(key) }
                } else if line.hasPrefix("A ") {
                    guard let operation = pending, Int(line.dropFirst(2)) == operation.id else {
                        XCTFail("\(context): acknowledgement \(line) without its operation")
                        return
                    }
                    Self.apply(operation.effects, to: &model)
                    acknowledged += 1
                    pending = nil
                } else if !line.hasPrefix("O ") {
                    XCTFail("\(context): unexpected line \(line)")
                    return
                }
            }
            acknowledgedTotal += acknowledged

            // Reopen: read-write on even cycles (recovery repairs, then verify must be clean);
            // read-only on odd ones (nothing repaired: verify may only report what the recovery
            // report explains), leaving the repair to the next writer.
            let readOnly = cycle % 2 == 1
            let filesBefore = try directorySnapshot(directory)
            let store = try LogStore(directory: directory, options: options(segmentSize: segmentSize, compactionTrigger: 0.5, readOnly: readOnly))
            reports += store.recoveryReport
            let actual = try actualContents(store)
            let without = expectedContents(model)
            var with = model
            if let operation = pending { Self.apply(operation.effects, to: &with) }
            let withContents = expectedContents(with)
            if actual == withContents {
                if withContents != without { inFlightApplied += 1 }
                model = with
            } else if actual != without {
                XCTFail("""
                    \(context): after \(acknowledged) acknowledged operations (in flight: \(pending?.line ?? "none")), the store \
                    holds neither the acknowledged state nor it plus the in-flight operation.
                    Versus acknowledged state:
                    \(describeDifference(actual, without, everWritten: everWritten))
                    Recovery report: \(store.recoveryReport)
                    """)
                return
            }
            for key in actual.keys where !everWritten.contains(key) { XCTFail("\(context): \(key) was never written") }
            let problems = try store.verify().problems
            if readOnly {
                for problem in problems {
                    let explained = store.recoveryReport.contains { line in
                        guard let file = problem.split(separator: ":").first?.split(separator: "/").last else { return false }
                        return line.contains(file)
                    }
                    XCTAssertTrue(explained, "\(context): verify problem not explained by recovery: \(problem); report: \(store.recoveryReport)")
                }
            } else {
                XCTAssertEqual(problems, [], "\(context); recovery report: \(store.recoveryReport)")
            }
            try store.close()
            if readOnly {
                XCTAssertEqual(try directorySnapshot(directory), filesBefore, "\(context): a read-only open changed the directory")
            }
        }
        // The writer made progress: most cycles acknowledge operations.
        XCTAssertGreaterThan(acknowledgedTotal, cycles, "seed \(seed)")
        XCTAssertGreaterThan(model.count, 0)
        print("crash test: writer \(binary.path)")
        print("crash test: seed \(seed), \(cycles) cycles, \(acknowledgedTotal) acknowledged operations, "
              + "\(inFlightApplied) in-flight operations found applied, \(model.count) live keys; recovery report lines: \(reports.count)")
        for line in Set(reports.map { $0.replacingOccurrences(of: directory.path, with: "") }).sorted().prefix(20) { print("  \(line)") }
    }
}
