import CrashTestSupport
import Foundation
import XCTest
@testable import LogStore

/// What the power-loss campaigns (PowerLossTests) found, one named test each.
final class PowerLossRegressionTests: StoreTestCase {
    /// Finding 1 (groupCommit): a new segment's name was made durable (directory fsync) before
    /// its header was: a power loss could keep later appends to it but not its header, and the
    /// segment was then skipped as unreadable with its records. The header is synced first now.
    func testNewSegmentHeaderIsSyncedBeforeItsName() throws {
        let directory = temporary.make("powerloss-header")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        PowerLossSimulator.start(root: directory.path)
        do {
            let store = try LogStore(directory: directory, options: options(segmentSize: 4 << 10, durability: .groupCommit(interval: 60)))
            for i in 0..<40 { try store.put([UInt8](repeating: UInt8(i), count: 300), forKey: b("k\(i)")) }
            try store.close()
        } catch {
            _ = PowerLossSimulator.stop()
            throw error
        }
        let recording = PowerLossSimulator.stop()
        var created: [Int: Int] = [:]   // segment file -> index of its create
        var checked = 0
        for (index, operation) in recording.operations.enumerated() {
            switch operation {
            case .create(let path, let file) where path.hasSuffix(".seg"):
                created[file] = index
            case .syncDirectory:
                // Every segment created before this directory sync has had its header synced.
                for (file, at) in created where at < index {
                    let synced = recording.operations[at..<index].contains { $0 == .syncFile(file: file) }
                    XCTAssertTrue(synced, "segment file \(file) (created at \(at)) named durably at \(index) before its header was synced")
                    checked += 1
                }
                created = created.filter { $0.value > index }
            default:
                break
            }
        }
        XCTAssertGreaterThan(checked, 3, "the workload rolls several segments")
    }
}
