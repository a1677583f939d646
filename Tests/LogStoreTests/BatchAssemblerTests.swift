import XCTest
@testable import LogStore

/// The batch rules of FORMAT.md ("Write batches"), one arrangement at a time.
final class BatchAssemblerTests: XCTestCase {
    private func header(_ sequence: UInt64, _ flags: RecordFlags) -> RecordHeader {
        RecordHeader(flags: flags, sequence: sequence, space: 0, keyLength: 1, valueLength: 1,
                     expiresAtMillis: nil, keyOffset: 10, totalLength: 12)
    }

    /// Feeds (sequence, flags) records at offsets 100, 200, ... and returns the applied sequences.
    private func applied(_ records: [(UInt64, RecordFlags)], corruptionBefore: Int? = nil) -> (applied: [UInt64], incomplete: Int?, dropped: [String]) {
        var assembler = BatchAssembler()
        var result: [UInt64] = []
        for (index, record) in records.enumerated() {
            if index == corruptionBefore { assembler.corruption() }
            result += assembler.add(offset: (index + 1) * 100, header: header(record.0, record.1)).map(\.header.sequence)
        }
        let incomplete = assembler.finish()
        return (result, incomplete, assembler.dropped)
    }

    func testSingleWritesApplyAtOnce() {
        XCTAssertEqual(applied([(1, []), (2, []), (3, [])]).applied, [1, 2, 3])
    }

    func testCompleteBatchAppliesWhole() {
        let outcome = applied([(1, .batchContinues), (2, [.batchFollower, .batchContinues]), (3, .batchFollower), (4, [])])
        XCTAssertEqual(outcome.applied, [1, 2, 3, 4])
        XCTAssertNil(outcome.incomplete)
        XCTAssertEqual(outcome.dropped, [])
    }

    func testBatchCutByTheEndOfTheSegmentIsDroppedAndItsStartReturned() {
        let outcome = applied([(1, []), (2, .batchContinues), (3, [.batchFollower, .batchContinues])])
        XCTAssertEqual(outcome.applied, [1])
        XCTAssertEqual(outcome.incomplete, 200)
        XCTAssertEqual(outcome.dropped.count, 1)
    }

    func testBatchBrokenByCorruptionIsDroppedIncludingItsTailAfterTheCorruption() {
        // 2..4 is one batch; corrupt bytes replaced record 3; record 4 (its tail) must not apply.
        let outcome = applied([(1, []), (2, .batchContinues), (4, .batchFollower), (5, [])], corruptionBefore: 2)
        XCTAssertEqual(outcome.applied, [1, 5])
        XCTAssertEqual(outcome.dropped.count, 2, "\(outcome.dropped)")
    }

    func testFollowersWhoseStartWasLostAreDroppedUpToTheNextWrite() {
        // The batch's first record (1) was lost: 2 and 3 are its tail.
        let outcome = applied([(2, [.batchFollower, .batchContinues]), (3, .batchFollower), (4, [])], corruptionBefore: 0)
        XCTAssertEqual(outcome.applied, [4])
    }

    func testSequenceGapInsideABatchBreaksIt() {
        let outcome = applied([(1, .batchContinues), (3, .batchFollower), (4, [])])
        XCTAssertEqual(outcome.applied, [4])
    }

    func testNewWriteWhileABatchIsOpenDropsTheOpenBatch() {
        let outcome = applied([(1, .batchContinues), (2, []), (3, [])])
        XCTAssertEqual(outcome.applied, [2, 3])
        XCTAssertEqual(outcome.dropped.count, 1)
    }
}
