import Foundation
import XCTest
import UnifiedStorage

/// `import UnifiedStorage` alone brings in the Preferences layer and the engine.
final class FacadeTests: XCTestCase {
    func testFacadeReexportsPreferences() throws {
        let root = makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let center = try DataCenter(root: root, appKey: "facade", appVersion: "1")
        try center.commonPreferences.set(true, forKey: "k", business: "b")
        XCTAssertTrue(center.commonPreferences.bool(forKey: "k", business: "b"))
        let _: DataCrypt = .default
        let _: LogStore.Options = LogStore.Options()
        XCTAssertTrue(LikePattern("k%").matches("K1"))
    }
}
