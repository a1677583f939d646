import Files
import Foundation
import LogStore
import Preferences
import XCTest

/// A fresh folder under the temporary directory.
func makeFilesTestFolder(_ name: String = #function) -> URL {
    let safe = name.filter { $0.isLetter || $0.isNumber }
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("files-tests-\(safe)-\(UUID().uuidString)", isDirectory: true)
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Each test gets a DataCenter of its own (configured as the default) and a folder for the
/// external location; both are removed at teardown.
class FilesTestCase: XCTestCase {
    var root: URL!
    var external: URL!
    var center: DataCenter!

    override func setUpWithError() throws {
        root = makeFilesTestFolder(name)
        external = makeFilesTestFolder(name + "external")
        DataCenter.loggingEnabled = false
        try DataCenter.configure(root: root, appKey: "files-test-key", appVersion: "1.0")
        center = DataCenter.default
    }

    override func tearDownWithError() throws {
        center = nil
        if let root { try? FileManager.default.removeItem(at: root) }
        if let external { try? FileManager.default.removeItem(at: external) }
    }

    /// The raw bytes of `name` on disk.
    func rawBytes(_ storage: FileStorage, _ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: try storage.url(of: name)))
    }
}

/// Deterministic bytes for tests.
func testBytes(_ count: Int, seed: UInt8 = 1) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ Int(seed) &* 7 &+ ($0 >> 8)) }
}
