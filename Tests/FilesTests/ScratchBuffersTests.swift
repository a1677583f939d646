@testable import Files
import Foundation
import XCTest

/// The batch buffers encrypted readers and writers share: reused, bounded, and never handed on
/// with a previous file's plaintext in them.
final class ScratchBuffersTests: XCTestCase {
    func testAReturnedBufferIsReusedForTheSameSizeOnly() {
        // From an empty pool: one that earlier tests' writers filled would free the buffer
        // given back, and malloc may hand its address out again for the other size.
        ScratchBuffers.releaseAll()
        let first = ScratchBuffers.borrow(byteCount: 12_345)
        let address = first.baseAddress
        ScratchBuffers.giveBack(first)
        let other = ScratchBuffers.borrow(byteCount: 12_346)
        XCTAssertNotEqual(other.baseAddress, address, "a buffer of another size is not handed out")
        let again = ScratchBuffers.borrow(byteCount: 12_345)
        XCTAssertEqual(again.baseAddress, address, "the free buffer of that size is reused")
        XCTAssertEqual(again.count, 12_345)
        ScratchBuffers.giveBack(other)
        ScratchBuffers.giveBack(again)
    }

    func testThePoolKeepsAtMostItsLimit() {
        let size = 3 << 20
        let buffers = (0..<((ScratchBuffers.retainedLimit / size) + 3)).map { _ in ScratchBuffers.borrow(byteCount: size) }
        for buffer in buffers { ScratchBuffers.giveBack(buffer) }
        XCTAssertLessThanOrEqual(ScratchBuffers.retainedBytes, ScratchBuffers.retainedLimit)
        // Drain what this test left, so later tests start from a small pool.
        let drained = (0..<buffers.count).map { _ in ScratchBuffers.borrow(byteCount: size) }
        for buffer in drained { buffer.deallocate() }
    }

    /// A reader's window holds plaintext; the buffer goes back to the pool wiped, so the next
    /// reader or writer never sees another file's content.
    func testAReaderWipesItsPlaintextBeforeTheBufferIsReused() throws {
        let folder = makeFilesTestFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let storage = try FileStorage(folder: folder, options: .init(key: [UInt8](repeating: 9, count: 32), segmentSize: 4096))
        let marker: UInt8 = 0xA5
        try storage.write(Data(repeating: marker, count: 3 * 4096 - 100), to: "secret", encryption: .storageKey)

        // A zeroed buffer of the window's size waits in the pool, so the reader takes it (and
        // no stale heap bytes from the Data written above can be mistaken for its plaintext).
        let windowSize = 3 * 4096
        let seeded = ScratchBuffers.borrow(byteCount: windowSize)
        seeded.initializeMemory(as: UInt8.self, repeating: 0)
        ScratchBuffers.giveBack(seeded)

        let reader = try storage.reader("secret", encryption: .storageKey)
        try reader.seek(to: 10)
        XCTAssertEqual(try reader.read(upTo: 5000), Data(repeating: marker, count: 5000), "a read at an offset goes through the window")
        reader.close()

        // The window of a 3-segment file is 3 segments (the sealed buffer: 3 stored segments).
        let window = ScratchBuffers.borrow(byteCount: windowSize)
        defer { ScratchBuffers.giveBack(window) }
        XCTAssertEqual(window.baseAddress, seeded.baseAddress, "the reader used the pooled buffer and gave it back")
        var run = 0, longest = 0
        for byte in window {
            run = byte == marker ? run + 1 : 0
            longest = max(longest, run)
        }
        XCTAssertLessThan(longest, 16, "plaintext of the closed reader is still in the pooled buffer")
    }
}
