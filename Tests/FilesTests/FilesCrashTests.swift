import CrashTestSupport
import Files
import Foundation
import XCTest

/// kill -9 during writes of an encrypted and a plain file (Tests/CrashWriter/FilesChild.swift):
/// after each kill a new storage opens the folder and must find each file exactly as its last
/// acknowledged version, or as the version in flight, and no other file (the temporary file of
/// the killed write is removed by that open).
///
/// 10 kill cycles by default (half with fsync durability); `FILES_CRASH_CYCLES=N` for more,
/// `FILES_CRASH_SEED` to replay.
final class FilesCrashTests: XCTestCase {
    /// Version per file name; -1 for a file whose bytes are not a version's content.
    private typealias State = [String: Int]
    private static let key = [UInt8](repeating: 0x5A, count: 32)
    private static let names = ["doc", "notes/plain.txt"]

    /// Must match `filesCrashContent` of the crash writer.
    private static func content(name: String, version: Int) -> [UInt8] {
        var bytes = Array("\(name)=\(version);".utf8)
        let length = (version &* 7919) % 150_000 + 1
        bytes.reserveCapacity(bytes.count + length)
        for i in 0..<length { bytes.append(UInt8(truncatingIfNeeded: i &* 31 &+ version)) }
        return bytes
    }

    func testKillDuringWritesLeavesTheOldOrTheNewFileAndNothingElse() throws {
        let environment = ProcessInfo.processInfo.environment
        let cycles = environment["FILES_CRASH_CYCLES"].flatMap(Int.init) ?? 10
        let seed = environment["FILES_CRASH_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        let binary = try CrashWriterProcess.binary(nextTo: FilesCrashTests.self)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("files-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let campaign = KillCampaign<State>(
            cycles: cycles, seed: seed, binary: binary,
            arguments: { cycle, _ in ["files", folder.path, "\(cycle * 1_000_000 + 1)", cycle % 2 == 0 ? "crash" : "fsync"] },
            killAfter: { random in UInt32(60_000 + Int(random >> 33) % 250_000) },
            parse: { line in
                let parts = line.split(separator: " ")
                guard parts.count == 3, let version = Int(parts[1]) else { return nil }
                let name = String(parts[2])
                return (version, { $0[name] = version })
            },
            read: { context in try self.readState(folder, context: context) },
            difference: { expected, found in "expected \(expected.sorted { $0.key < $1.key }), found \(found.sorted { $0.key < $1.key })" })
        let summary = try campaign.run(from: [:])
        XCTAssertGreaterThan(summary.acknowledged, cycles, "the child hardly ran")
        print("files crash test: seed \(seed), \(cycles) cycles, \(summary.acknowledged) acknowledged replacements, "
              + "\(summary.inFlightApplied) in-flight found applied")
    }

    private func readState(_ folder: URL, context: String) throws -> State {
        let storage = try FileStorage(folder: folder, options: .init(key: Self.key, segmentSize: 4096))
        // Nothing but the two files is left on disk (the killed write's temporary file is gone).
        let onDisk = (FileManager.default.enumerator(atPath: folder.path)?.allObjects as? [String] ?? [])
            .filter { !$0.hasSuffix("notes") || $0.contains(".") }.sorted()
        XCTAssertTrue(Set(onDisk).isSubset(of: Self.names), "\(context): unexpected files \(onDisk)")
        var state: State = [:]
        for name in try storage.list() {
            let encrypted = name == "doc"
            let bytes = [UInt8](try storage.data(of: name, encryption: encrypted ? .storageKey : .none))
            let prefix = String(decoding: bytes.prefix(while: { $0 != UInt8(ascii: ";") }), as: UTF8.self)
            guard let version = Int(prefix.dropFirst(name.count + 1)), bytes == Self.content(name: name, version: version) else {
                XCTFail("\(context): \(name) holds \(bytes.count) bytes that are no version's content")
                state[name] = -1
                continue
            }
            state[name] = version
        }
        return state
    }
}
