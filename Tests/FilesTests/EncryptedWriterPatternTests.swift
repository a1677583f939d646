import Files
import Foundation
import LogStore
import XCTest

/// The encrypted writer buffers partial segments, seals whole ones straight from the caller's
/// bytes, and seals large batches on two threads (SegmentBatch): whatever the sizes of the
/// pieces it is given, the file reads back as the bytes written and has the same layout.
final class EncryptedWriterPatternTests: FilesTestCase {
    /// Piece sizes around segment, chunk and batch boundaries, in a seeded order.
    private func pieces(total: Int, seed: UInt64) -> [Int] {
        let sizes = [1, 7, 63, 64, 65, 4095, 4096, 4097, 65_536, 100_000, 1 << 20, (1 << 20) + 5, (1 << 20) - 3, 3 << 20]
        var state = seed
        var result: [Int] = []
        var left = total
        while left > 0 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let size = min(left, sizes[Int(state >> 33) % sizes.count])
            result.append(size)
            left -= size
        }
        return result
    }

    func testAnyPiecesReadBackWithTheSameLayout() throws {
        for segmentSize in [64, 4096, 65_536] {
            let folder = makeFilesTestFolder(name + "\(segmentSize)")
            defer { try? FileManager.default.removeItem(at: folder) }
            let storage = try FileStorage(folder: folder, options: .init(key: [UInt8](repeating: 5, count: 32), segmentSize: segmentSize))
            for total in [0, 1, segmentSize - 1, segmentSize, segmentSize + 1, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, segmentSize >= 4096 ? (5 << 20) + 123 : 0] {
                let bytes = testBytes(total, seed: UInt8(truncatingIfNeeded: total))
                let segments = max(1, (total + segmentSize - 1) / segmentSize)
                let expectedSize = 72 + total + segments * 16
                for seed in [UInt64(1), 2, 3] where seed == 1 || total > segmentSize {
                    let writer = try storage.writer("f", encryption: .storageKey)
                    var offset = 0
                    for piece in pieces(total: total, seed: seed &+ UInt64(total)) {
                        try writer.write(bytes[offset ..< offset + piece])
                        offset += piece
                    }
                    try writer.close()
                    let label = "segment \(segmentSize), \(total) bytes, pieces \(seed)"
                    XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: try storage.url(of: "f").path)[.size] as? Int, expectedSize, label)
                    XCTAssertEqual(try storage.data(of: "f", encryption: .storageKey), Data(bytes), label)
                }
            }
        }
    }

    /// A failed write of any batch (each pwrite in turn, a clean failure and a short write;
    /// every batch but the last is written in the background while the next one is sealed, so
    /// its failure surfaces at the next batch or at close) is thrown from `write` or `close`,
    /// and leaves the old file as it was and no temporary file.
    func testAFailedWriteInASplitBatchLeavesTheOldFile() throws {
        let storage = try center.fileStorage()
        let old = Data("old".utf8), new = testBytes(3 << 20, seed: 6)
        var firedCases = 0
        for fault in [InjectedFault.error(EIO), .shortWrite] {
            for failAt in 0 ..< 12 {
                try storage.write(old, to: "f", encryption: .storageKey)
                // Only this storage's files count: another store's background syncer writes
                // its mark file with pwrite too, and took the injected fault once in CI.
                FaultInjection.arm(failAt: failAt, fault: fault, only: [.pwrite], under: try storage.folder().path)
                var failed = false
                do {
                    let writer = try storage.writer("f", encryption: .storageKey)
                    for piece in 0 ..< 3 { try writer.write(new[(piece << 20) ..< ((piece + 1) << 20)]) }
                    try writer.close()
                } catch {
                    failed = true
                }
                let fired = FaultInjection.fired != nil
                FaultInjection.disarm()
                if fired { firedCases += 1 }
                XCTAssertEqual(failed, fired, "\(fault) at pwrite \(failAt)")
                XCTAssertEqual(try storage.data(of: "f", encryption: .storageKey), fired ? old : Data(new), "\(fault) at pwrite \(failAt)")
                XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: try storage.folder().path), ["f"])
            }
        }
        XCTAssertGreaterThan(firedCases, 8, "the faults reached the writer's own pwrites")
    }

    /// A large replacement drops the old file's page cache early
    /// (AtomicReplacement.releaseTargetCache): nothing of the old file changes for a reader
    /// opened before, for a discarded writer, or until close.
    func testReleasingTheOldFilesCacheChangesNothingVisible() throws {
        let storage = try center.fileStorage()
        for encryption in [FileEncryption.none, .storageKey] {
            let old = testBytes(6 << 20, seed: 3)
            try storage.write(old, to: "big", encryption: encryption)
            let before = try storage.reader("big", encryption: encryption)
            let discarded = try storage.writer("big", encryption: encryption)
            try discarded.write(testBytes(5 << 20, seed: 4))
            XCTAssertEqual(try storage.data(of: "big", encryption: encryption), Data(old), "the old file stays until close")
            discarded.discard()
            XCTAssertEqual(try storage.data(of: "big", encryption: encryption), Data(old))
            let new = testBytes(5 << 20, seed: 5)
            try storage.write(new, to: "big", encryption: encryption)
            XCTAssertEqual(try storage.data(of: "big", encryption: encryption), Data(new))
            XCTAssertEqual(try before.readToEnd(), Data(old), "an open reader keeps the old file")
            before.close()
        }
    }
}
