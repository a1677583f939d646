import Foundation
import XCTest
@testable import Preferences
import LogStore

/// A fresh folder under the temporary directory, removed by the test case's teardown.
func makeTemporaryFolder(_ name: String = #function) -> URL {
    let safe = name.filter { $0.isLetter || $0.isNumber }
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("prefs-tests-\(safe)-\(UUID().uuidString)", isDirectory: true)
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A thread-safe list for collecting events in tests.
final class Recorder<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var elements: [Element] = []
    func append(_ element: Element) { lock.lock(); elements.append(element); lock.unlock() }
    var all: [Element] { lock.lock(); defer { lock.unlock() }; return elements }
}

/// A custom crypt that XORs every byte with 0x5A and counts its calls.
func xorCrypt() -> DataCrypt {
    DataCrypt(encrypt: { $0.map { $0 ^ 0x5A } }, decrypt: { $0.map { $0 ^ 0x5A } })
}

/// A base class giving each test a DataCenter of its own (also configured as the default).
class PreferencesTestCase: XCTestCase {
    var root: URL!
    var center: DataCenter!

    override func setUpWithError() throws {
        root = makeTemporaryFolder(name)
        DataCenter.loggingEnabled = false
        try DataCenter.configure(root: root, appKey: "test-app-key", appVersion: "1.0")
        center = DataCenter.default
    }

    override func tearDownWithError() throws {
        center = nil
        if let root { try? FileManager.default.removeItem(at: root) }
    }

    var prefs: SharedPreferences { center.commonPreferences }

    /// The first `count` elements of `stream`, or fewer if it stalls for `timeout` seconds.
    func collect<Element: Sendable>(_ stream: AsyncStream<Element>, count: Int, timeout: TimeInterval = 5) async -> [Element] {
        await withTaskGroup(of: [Element]?.self) { group in
            group.addTask {
                var result: [Element] = []
                for await element in stream {
                    result.append(element)
                    if result.count == count { break }
                }
                return result
            }
            group.addTask {
                try? await Task.sleep(nanoseconds: UInt64(timeout * 1_000_000_000))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? []
        }
    }
}
