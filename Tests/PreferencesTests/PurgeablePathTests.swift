import Foundation
import XCTest
@testable import Preferences
import LogStore

final class PurgeablePathTests: PreferencesTestCase {
    private func write(_ url: URL, bytes: Int, ageDays: Double) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(repeating: 1, count: bytes).write(to: url)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-ageDays * 86_400)], ofItemAtPath: url.path)
    }

    private func exists(_ url: URL) -> Bool { FileManager.default.fileExists(atPath: url.path) }

    func testPathCreatesAndRegistersTheFolder() throws {
        let url = try PurgeablePath.path("Library/Caches/Thumbs", type: .oneWeek, sizeLimitMB: 5)
        XCTAssertEqual(url, root.appendingPathComponent("Library/Caches/Thumbs", isDirectory: true))
        XCTAssertTrue(exists(url))
        XCTAssertEqual(try center.purgeableRegistrations(), [PurgeableRegistration(relative: "Library/Caches/Thumbs", type: .oneWeek, sizeLimitMB: 5)])
        _ = try PurgeablePath.path("Library/Caches/Thumbs/", type: .threeDays)
        XCTAssertEqual(try center.purgeableRegistrations().map(\.type), [.threeDays], "re-registering replaces")
        for bad in ["", "/abs", "../out", "a/../../b"] {
            XCTAssertThrowsError(try PurgeablePath.path(bad), bad)
        }
        XCTAssertThrowsError(try PurgeablePath.path("x", sizeLimitMB: -1))
    }

    func testSweepDeletesFilesOlderThanTheType() throws {
        let folder = try PurgeablePath.path("Aged", type: .oneWeek)
        let manual = try PurgeablePath.path("Manual")
        try write(folder.appendingPathComponent("old.bin"), bytes: 10, ageDays: 8)
        try write(folder.appendingPathComponent("sub/old.bin"), bytes: 10, ageDays: 30)
        try write(folder.appendingPathComponent("new.bin"), bytes: 10, ageDays: 6)
        try write(manual.appendingPathComponent("ancient.bin"), bytes: 10, ageDays: 400)
        try PurgeablePath.sweep()
        XCTAssertFalse(exists(folder.appendingPathComponent("old.bin")))
        XCTAssertFalse(exists(folder.appendingPathComponent("sub")), "directories left empty go")
        XCTAssertTrue(exists(folder.appendingPathComponent("new.bin")))
        XCTAssertTrue(exists(manual.appendingPathComponent("ancient.bin")), "manual folders keep old files")
        try FileManager.default.removeItem(at: folder.appendingPathComponent("new.bin"))
        try PurgeablePath.sweep()
        XCTAssertTrue(exists(folder), "the registered folder stays")
    }

    func testSweepTrimsOverTheSizeLimitToHalf() throws {
        let folder = try PurgeablePath.path("Sized", sizeLimitMB: 1)
        let size = 400 << 10
        try write(folder.appendingPathComponent("a"), bytes: size, ageDays: 3)
        try write(folder.appendingPathComponent("b"), bytes: size, ageDays: 2)
        try write(folder.appendingPathComponent("c"), bytes: size, ageDays: 1)
        try PurgeablePath.sweep()
        XCTAssertFalse(exists(folder.appendingPathComponent("a")))
        XCTAssertFalse(exists(folder.appendingPathComponent("b")))
        XCTAssertTrue(exists(folder.appendingPathComponent("c")))
        // Under the limit: nothing goes.
        try write(folder.appendingPathComponent("d"), bytes: size, ageDays: 5)
        try PurgeablePath.sweep()
        XCTAssertTrue(exists(folder.appendingPathComponent("d")))
    }

    func testResetAllEmptiesEveryRegisteredFolder() throws {
        let one = try PurgeablePath.path("One")
        let two = try PurgeablePath.path("Two", type: .oneMonth)
        try write(one.appendingPathComponent("x/y"), bytes: 1, ageDays: 0)
        try write(two.appendingPathComponent("z"), bytes: 1, ageDays: 0)
        try PurgeablePath.resetAll()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: one.path), [])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: two.path), [])
    }

    func testDataCenterStartSweepsRegisteredFoldersInTheBackground() throws {
        let folder = try PurgeablePath.path("Start", type: .threeDays)
        let old = folder.appendingPathComponent("old")
        try write(old, bytes: 1, ageDays: 4)
        try DataCenter.configure(root: root, appKey: "test-app-key", appVersion: "1.0")
        let deadline = Date().addingTimeInterval(10)
        while exists(old), Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        XCTAssertFalse(exists(old))
    }
}
