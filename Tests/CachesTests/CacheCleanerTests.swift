import Foundation
import XCTest
@testable import Caches
@testable import Preferences
import LogStore

final class CacheCleanerTests: CachesTestCase {
    private func write(_ relative: String, bytes: Int, ageDays: Double = 0) throws {
        let url = root.appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(repeating: 7, count: bytes).write(to: url)
        if ageDays > 0 {
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-ageDays * 86_400)], ofItemAtPath: url.path)
        }
    }

    private func exists(_ relative: String) -> Bool {
        FileManager.default.fileExists(atPath: root.appendingPathComponent(relative).path)
    }

    private final class Reports: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [(CacheCleaner.Phase, Double)] = []
        func add(_ phase: CacheCleaner.Phase, _ value: Double) { lock.lock(); items.append((phase, value)); lock.unlock() }
        var all: [(CacheCleaner.Phase, Double)] { lock.lock(); defer { lock.unlock() }; return items }
    }

    func testTasksLoadFromJSONAndPropertyListInBothShapes() throws {
        let json = root.appendingPathComponent("tasks.json")
        try Data("""
        [{"Class": "APUserCacheCleaner", "Selectors": ["cleanDefaultPreferences", "cleanPurgeablePaths"]},
         {"Path": "Library/Caches", "Entries": ["*.cache", "LogFiles"]}]
        """.utf8).write(to: json)
        let expected: [CacheCleaner.Task] = [
            .handlers(className: "APUserCacheCleaner", selectors: ["cleanDefaultPreferences", "cleanPurgeablePaths"]),
            .paths(path: "Library/Caches", entries: ["*.cache", "LogFiles"]),
        ]
        XCTAssertEqual(try CacheCleaner.tasks(from: json), expected)
        let plist = root.appendingPathComponent("PurgeableCache.plist")
        let items: [[String: Any]] = [
            ["Class": "APUserCacheCleaner", "Selectors": ["cleanDefaultPreferences", "cleanPurgeablePaths"]],
            ["Path": "Library/Caches", "Entries": ["*.cache", "LogFiles"]],
        ]
        try PropertyListSerialization.data(fromPropertyList: items, format: .xml, options: 0).write(to: plist)
        XCTAssertEqual(try CacheCleaner.tasks(from: plist), expected)

        let bad = root.appendingPathComponent("bad.json")
        try Data(#"[{"Path": "Library"}]"#.utf8).write(to: bad)
        XCTAssertThrowsError(try CacheCleaner.tasks(from: bad)) { error in
            guard case CacheError.invalidTaskFile(let message) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("item 0"), message)
        }
        for outside in [#"[{"Path": "../x", "Entries": ["*"]}]"#, #"[{"Path": "/etc", "Entries": ["*"]}]"#,
                        #"[{"Path": "a/../../b", "Entries": ["*"]}]"#, #"[{"Path": "Library", "Entries": ["../x"]}]"#] {
            try Data(outside.utf8).write(to: bad)
            XCTAssertThrowsError(try CacheCleaner.tasks(from: bad), outside) { error in
                guard case CacheError.pathOutsideRoot = error else { return XCTFail("\(error)") }
            }
        }
    }

    func testEntriesMatchNamesDirectlyInsidePathAndFoldersGoWhole() async throws {
        try write("Library/Caches/a.cache", bytes: 1 << 20)
        try write("Library/Caches/b.cache.keep", bytes: 10)
        try write("Library/Caches/LogFiles/2024/log.txt", bytes: 1 << 20)
        try write("Library/Caches/sub/deep.cache", bytes: 10)
        try write("Library/Caches/TBSDKNetworkSDK_Cache_v2", bytes: 10)
        try write("Library/Other/x.cache", bytes: 10)
        let reports = Reports()
        let freed = await CacheCleaner.execute(tasks: [.paths(path: "Library/Caches", entries: ["*.cache", "LogFiles", "TBSDKNetworkSDK_Cache*"])]) {
            reports.add($0, $1)
        }
        XCTAssertFalse(exists("Library/Caches/a.cache"))
        XCTAssertFalse(exists("Library/Caches/LogFiles"), "a matching folder goes whole")
        XCTAssertFalse(exists("Library/Caches/TBSDKNetworkSDK_Cache_v2"))
        XCTAssertTrue(exists("Library/Caches/b.cache.keep"))
        XCTAssertTrue(exists("Library/Caches/sub/deep.cache"), "no recursion into subfolders for matching")
        XCTAssertTrue(exists("Library/Other/x.cache"))
        XCTAssertEqual(freed, 2.0, accuracy: 0.01, "two MiB files went")

        let all = reports.all
        let phases = all.map(\.0)
        XCTAssertEqual(phases.first, .preCalculating)
        XCTAssertEqual(phases.last, .done)
        let order: [CacheCleaner.Phase] = [.preCalculating, .cleaning, .postCalculating, .done]
        XCTAssertEqual(phases.map { order.firstIndex(of: $0)! }, phases.map { order.firstIndex(of: $0)! }.sorted(), "phases in order")
        for phase in order.dropLast() {
            let values = all.filter { $0.0 == phase }.map(\.1)
            XCTAssertEqual(values, values.sorted(), "\(phase) never decreases")
            XCTAssertEqual(values.last, 1)
            XCTAssertTrue(values.allSatisfy { (0...1).contains($0) })
        }
        XCTAssertEqual(all.last?.1 ?? 0, 2.0, accuracy: 0.01)
    }

    func testHandlersBuiltInsAndAFailingHandlerDoNotStopTheRun() async throws {
        struct Boom: Error {}
        CacheCleaner.register("Test.fails") { throw Boom() }
        let ran = Reports()
        CacheCleaner.register("Test.records") { ran.add(.cleaning, 1) }
        let prefs = center.commonPreferences
        try prefs.setObject("big", forKey: "purge-me", business: "b", options: .purgeable)
        try prefs.setObject("keep", forKey: "keep-me", business: "b")
        let folder = try PurgeablePath.path("Library/Thumbs", type: .manual)
        try write("Library/Thumbs/t1", bytes: 100)
        try write("Library/Thumbs/sub/t2", bytes: 100)
        try write("Library/Caches/x.tmp", bytes: 10)

        let freed = await CacheCleaner.execute(tasks: [
            .handlers(className: "Test", selectors: ["fails", "records", "missing"]),
            .handlers(className: "APUserCacheCleaner", selectors: ["cleanDefaultPreferences", "cleanPurgeablePaths"]),
            .paths(path: "../outside", entries: ["*"]),
            .paths(path: "Library/Caches", entries: ["*.tmp"]),
        ]) { _, _ in }
        XCTAssertEqual(ran.all.count, 1, "the handler after the failing one ran")
        XCTAssertNil(prefs.object(forKey: "purge-me", business: "b"), "purgeable values are cleaned")
        XCTAssertEqual(prefs.string(forKey: "keep-me", business: "b"), "keep")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), [], "purgeable folders emptied")
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder.path), "the registered folder stays")
        XCTAssertFalse(exists("Library/Caches/x.tmp"), "the run went on after the refused task")
        XCTAssertGreaterThanOrEqual(freed, 0)
    }

    func testNothingOutsideTheRootIsTouched() async throws {
        let outside = root.deletingLastPathComponent().appendingPathComponent("outside-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: outside) }
        try Data([1]).write(to: outside.appendingPathComponent("victim.cache"))
        XCTAssertThrowsError(try CacheCleaner.validate(.paths(path: "../" + outside.lastPathComponent, entries: ["*"])))
        XCTAssertThrowsError(try CacheCleaner.validate(.paths(path: outside.path, entries: ["*"])))
        await CacheCleaner.execute(tasks: [
            .paths(path: "../" + outside.lastPathComponent, entries: ["*"]),
            .paths(path: outside.path, entries: ["*.cache"]),
        ]) { _, _ in }
        XCTAssertTrue(FileManager.default.fileExists(atPath: outside.appendingPathComponent("victim.cache").path))

        // A folder inside the root that is a link to the outside, and an entry that is a link.
        try FileManager.default.createSymbolicLink(at: root.appendingPathComponent("Escape"), withDestinationURL: outside)
        try write("Library/Caches/keep.txt", bytes: 1)
        try FileManager.default.createSymbolicLink(at: root.appendingPathComponent("Library/Caches/link.cache"),
                                                   withDestinationURL: outside.appendingPathComponent("victim.cache"))
        await CacheCleaner.execute(tasks: [
            .paths(path: "Escape", entries: ["*"]),
            .paths(path: "Library/Caches", entries: ["*.cache"]),
        ]) { _, _ in }
        XCTAssertTrue(FileManager.default.fileExists(atPath: outside.appendingPathComponent("victim.cache").path))
        XCTAssertNil(try? FileManager.default.destinationOfSymbolicLink(atPath: root.appendingPathComponent("Library/Caches/link.cache").path),
                     "the matching link itself is removed")
        XCTAssertTrue(exists("Library/Caches/keep.txt"))
    }

    func testCompletionForm() throws {
        try write("Tmp/a.log", bytes: 10)
        let done = expectation(description: "done")
        CacheCleaner.execute(tasks: [.paths(path: "Tmp", entries: ["*.log"])], progress: { _, _ in }) { freed in
            XCTAssertGreaterThanOrEqual(freed, 0)
            done.fulfill()
        }
        wait(for: [done], timeout: 10)
        XCTAssertFalse(exists("Tmp/a.log"))
    }

    func testWildcards() {
        XCTAssertTrue(WildcardPattern("*").matches("anything"))
        XCTAssertTrue(WildcardPattern("*.cache").matches(".cache"))
        XCTAssertFalse(WildcardPattern("*.cache").matches("a.cache.x"))
        XCTAssertTrue(WildcardPattern("a*b*c").matches("abc"))
        XCTAssertTrue(WildcardPattern("a*b*c").matches("a-b-b-c"))
        XCTAssertFalse(WildcardPattern("a*b*c").matches("a-c-b"))
        XCTAssertFalse(WildcardPattern("ab*ba").matches("aba"), "prefix and suffix may not overlap")
        XCTAssertTrue(WildcardPattern("file").matches("file"))
        XCTAssertFalse(WildcardPattern("file").matches("File"))
    }

    /// A real folder tree through PurgeablePath: age by modification time, size by creation time.
    func testPurgeableSweepOnAFolderTree() throws {
        let folder = try PurgeablePath.path("Library/Voice", type: .threeDays, sizeLimitMB: 1)
        // Created in the order first, second, third; modification times the other way round.
        try write("Library/Voice/2024/first.amr", bytes: 400 << 10, ageDays: 0.1)
        Thread.sleep(forTimeInterval: 0.01)
        try write("Library/Voice/2025/second.amr", bytes: 400 << 10, ageDays: 0.2)
        Thread.sleep(forTimeInterval: 0.01)
        try write("Library/Voice/third.amr", bytes: 400 << 10, ageDays: 0.3)
        try write("Library/Voice/old/stale.amr", bytes: 10, ageDays: 4)
        try PurgeablePath.sweep()
        XCTAssertFalse(exists("Library/Voice/old"), "older than three days, and its emptied folder")
        XCTAssertFalse(exists("Library/Voice/2024"), "over 1 MiB: the first created goes first")
        XCTAssertFalse(exists("Library/Voice/2025/second.amr"))
        XCTAssertTrue(exists("Library/Voice/third.amr"), "down to half the limit")
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder.path))
        try PurgeablePath.resetAll()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), [])
    }
}
