import Foundation
import XCTest
@testable import LogStore

/// `LogStore.write(streaming:)`: one atomic batch handed over a chunk at a time (a DAO
/// transaction of millions of rows). Runs in every `LOGSTORE_TEST_MODE` (compressed stores take
/// the collect-whole path).
final class StreamedBatchTests: StoreTestCase {
    /// Operations of a streamed batch, made from their index so both passes get the same ones:
    /// puts of new and existing keys, some with an expiry far ahead, and deletes.
    private func operation(_ i: Int, into batch: inout LogStore.WriteBatch) {
        switch i % 10 {
        case 7: batch.delete(forKey: b("k\(i / 2)"))
        case 8: batch.put(b("v\(i)-expiring"), forKey: b("e\(i)"), expiresAt: Date(timeIntervalSinceNow: 86_400))
        default: batch.put([UInt8](repeating: UInt8(i % 251), count: 20 + i % 300), forKey: b("k\(i)"))
        }
    }

    /// The model after the operations 0..<count, on top of `model`.
    private func apply(_ count: Int, to model: inout [[UInt8]: [UInt8]]) {
        for i in 0..<count {
            switch i % 10 {
            case 7: model[b("k\(i / 2)")] = nil
            case 8: model[b("e\(i)")] = b("v\(i)-expiring")
            default: model[b("k\(i)")] = [UInt8](repeating: UInt8(i % 251), count: 20 + i % 300)
            }
        }
    }

    /// A fill that hands out `count` operations in chunks of uneven sizes.
    private func fill(count: Int) -> (inout LogStore.WriteBatch, Int) throws -> Bool {
        let sizes = [1, 4096, 333, 7, 5000]
        var starts = [0]
        var index = 0
        while starts[starts.count - 1] < count {
            starts.append(min(count, starts[starts.count - 1] + sizes[index % sizes.count]))
            index += 1
        }
        return { [self] batch, chunk in
            guard chunk + 1 < starts.count else { return false }
            for i in starts[chunk]..<starts[chunk + 1] { operation(i, into: &batch) }
            return true
        }
    }

    func testStreamedBatchIsReadBackAndRecovered() throws {
        let directory = temporary.make()
        var model: [[UInt8]: [UInt8]] = [:]
        let count = 12_000
        do {
            // Segments smaller than the batch: it gets a segment of its own, as a big write does.
            let store = try LogStore(directory: directory, options: options(segmentSize: 1 << 20))
            for i in 0..<500 {
                try store.put(b("before-\(i)"), forKey: b("k\(i)"))
                model[b("k\(i)")] = b("before-\(i)")
            }
            try store.write(streaming: fill(count: count))
            apply(count, to: &model)
            try store.put(b("after"), forKey: b("after"))
            model[b("after")] = b("after")
            try assertContents(store, model, "before reopen")
            XCTAssertEqual(try store.verify().problems, [])
            // A crash copy: recovery reads the batch from the segments, not from a snapshot.
            let copy = try copyStore(directory, label: "crash")
            let recovered = try LogStore(directory: copy, options: options(segmentSize: 1 << 20))
            try assertContents(recovered, model, "after a crash")
            XCTAssertEqual(recovered.recoveryReport, [])
            try recovered.close()
            try store.close()
        }
        let reopened = try LogStore(directory: directory, options: options(segmentSize: 1 << 20))
        try assertContents(reopened, model, "after reopen")
        try reopened.close()
    }

    func testStreamedBatchHasTheBatchFlagsOfOneWrite() throws {
        let directory = temporary.make()
        let store = try LogStore(directory: directory, options: options(segmentSize: 4 << 20))
        try store.put(b("first"), forKey: b("first"))
        try store.write(streaming: fill(count: 9_000))
        let copy = try copyStore(directory, label: "flags")
        try store.close()
        let segment = try segmentFiles(copy).last!.url
        let records = try records(in: segment).filter { $0.header.space == 0 }
        let batch = Array(records.dropFirst())
        XCTAssertEqual(batch.count, 9_000)
        XCTAssertFalse(batch[0].header.flags.contains(.batchFollower))
        XCTAssertTrue(batch.dropFirst().allSatisfy { $0.header.flags.contains(.batchFollower) })
        XCTAssertTrue(batch.dropLast().allSatisfy { $0.header.flags.contains(.batchContinues) })
        XCTAssertFalse(batch[batch.count - 1].header.flags.contains(.batchContinues))
        XCTAssertEqual(zip(batch, batch.dropFirst()).first { $0.1.header.sequence != $0.0.header.sequence + 1 }.map { $0.0.offset }, nil)
    }

    func testStreamedBatchCutAnywhereIsDroppedWhole() throws {
        var model: [[UInt8]: [UInt8]] = [:]
        let (copy, before, active) = try crashCopy(before: 0, after: 30, segmentSize: 4 << 20) { store in
            try store.write(streaming: fill(count: 6_000))
        }
        model = before
        let records = try records(in: active).filter { $0.header.space == 0 }
        let batch = records.suffix(6_000)
        XCTAssertEqual(batch.count, 6_000)
        var cuts = [batch[batch.startIndex].offset + 1, batch[batch.startIndex + 2_999].offset, batch[batch.endIndex - 1].offset + 5]
        cuts.append(batch[batch.endIndex - 1].offset)
        for cut in cuts {
            let crashed = try copyStore(copy, label: "cut")
            let segment = crashed.appendingPathComponent(active.lastPathComponent)
            try truncateFile(segment, to: cut)
            let store = try LogStore(directory: crashed, options: options(segmentSize: 4 << 20))
            try assertContents(store, model, "cut at \(cut)")
            try store.close()
        }
    }

    func testSecondPassThatDiffersWritesNothing() throws {
        // A compressing store collects the batch in one pass (nothing to compare it with).
        if options().compression != nil { throw XCTSkip("compressing stores do not stream") }
        let directory = temporary.make()
        let store = try LogStore(directory: directory, options: options(segmentSize: 1 << 20))
        try store.put(b("kept"), forKey: b("kept"))
        for change in ["more", "fewer", "longer"] {
            var pass = 0
            XCTAssertThrowsError(try store.write(streaming: { batch, chunk in
                if chunk == 0 { pass += 1 }
                guard chunk < 3 else { return false }
                for i in 0..<1000 {
                    let grow = pass > 1 && change == "longer" && chunk == 2 && i == 999
                    batch.put([UInt8](repeating: 1, count: grow ? 200 : 100), forKey: b("x\(chunk)-\(i)"))
                }
                if pass > 1, change == "more", chunk == 2 { batch.put(b("extra"), forKey: b("extra")) }
                return !(pass > 1 && change == "fewer" && chunk == 2)
            }), change) { error in
                guard case StoreError.corrupt(let message) = error else { return XCTFail("\(change): \(error)") }
                XCTAssertTrue(message.contains("streamed batch"), message)
            }
            try assertContents(store, [b("kept"): b("kept")], change)
        }
        // The store goes on, and what a crash leaves reads as it should.
        try store.put(b("next"), forKey: b("next"))
        let copy = try copyStore(directory, label: "after-failures")
        let recovered = try LogStore(directory: copy, options: options(segmentSize: 1 << 20))
        try assertContents(recovered, [b("kept"): b("kept"), b("next"): b("next")], "crash copy")
        XCTAssertEqual(recovered.recoveryReport, [])
        try recovered.close()
        try store.close()
    }

    func testEmptyStreamedBatchWritesNothing() throws {
        let store = try LogStore(directory: temporary.make(), options: options())
        try store.write(streaming: { _, _ in false })
        try store.write(streaming: { _, chunk in chunk == 0 })   // a chunk with no operations
        XCTAssertEqual(try store.keys(space: 0), [])
        try store.close()
    }
}
