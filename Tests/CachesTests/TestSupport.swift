import Foundation
import XCTest
@testable import Caches
@testable import Preferences
import LogStore

/// A fresh folder under the temporary directory, removed by the test case's teardown.
func makeTemporaryFolder(_ name: String = #function) -> URL {
    let safe = name.filter { $0.isLetter || $0.isNumber }
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("caches-tests-\(safe)-\(UUID().uuidString)", isDirectory: true)
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A base class giving each test a DataCenter of its own, configured as the default.
class CachesTestCase: XCTestCase {
    var root: URL!
    var center: DataCenter!

    override func setUpWithError() throws {
        root = makeTemporaryFolder(name)
        DataCenter.loggingEnabled = false
        try DataCenter.configure(root: root, appKey: "caches-test-key", appVersion: "1.0")
        center = DataCenter.default
    }

    override func tearDownWithError() throws {
        center = nil
        if let root { try? FileManager.default.removeItem(at: root) }
    }
}
