import Files
import Foundation
import XCTest

/// Threads writing and reading the same files at once: every read finds one whole version
/// (atomic replacement), never a mix or a partial file. Named Concurrency* so scripts/test.sh
/// runs it under ThreadSanitizer.
final class ConcurrencyFilesTests: XCTestCase {
    private static func content(writer: Int, round: Int) -> [UInt8] {
        let tag = Array("\(writer):\(round);".utf8)
        return tag + testBytes(9_000 + (writer * 977 + round * 131) % 9_000, seed: UInt8(truncatingIfNeeded: writer &* 31 &+ round))
    }

    func testConcurrentWritersAndReadersSeeWholeVersions() throws {
        let folder = makeFilesTestFolder(name)
        defer { try? FileManager.default.removeItem(at: folder) }
        let storage = try FileStorage(folder: folder, options: .init(key: [UInt8](repeating: 1, count: 32)))
        for encryption in [FileEncryption.none, .storageKey] {
            try storage.write(Self.content(writer: 0, round: 0), to: "shared", encryption: encryption)
            let failures = FailureLog()
            DispatchQueue.concurrentPerform(iterations: 4) { thread in
                for round in 1...25 {
                    do {
                        if thread % 2 == 0 {
                            try storage.write(Self.content(writer: thread, round: round), to: "shared", encryption: encryption)
                            try storage.write(Self.content(writer: thread, round: round), to: "own-\(thread)", encryption: encryption)
                        } else {
                            let bytes = [UInt8](try storage.data(of: "shared", encryption: encryption))
                            let tag = String(decoding: bytes.prefix(while: { $0 != UInt8(ascii: ";") }), as: UTF8.self).split(separator: ":")
                            guard tag.count == 2, let writer = Int(tag[0]), let version = Int(tag[1]),
                                  bytes == Self.content(writer: writer, round: version) else {
                                failures.add("thread \(thread) round \(round): read \(bytes.count) bytes that are no whole version")
                                continue
                            }
                        }
                    } catch {
                        failures.add("thread \(thread) round \(round): \(error)")
                    }
                }
            }
            XCTAssertEqual(failures.all, [], "\(encryption)")
            XCTAssertEqual(try storage.list(), ["own-0", "own-2", "shared"])
            XCTAssertEqual(try storage.data(of: "own-2", encryption: encryption), Data(Self.content(writer: 2, round: 25)))
        }
    }
}

private final class FailureLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func add(_ item: String) { lock.withLock { items.append(item) } }
    var all: [String] { lock.withLock { items } }
}
