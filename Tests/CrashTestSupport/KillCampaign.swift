import Foundation
import XCTest

/// The kill -9 loop shared by the layers' crash tests: start the crash writer, kill it at a
/// random moment, replay what it acknowledged onto a model, and compare the model with what a
/// reopen finds. The writer prints `B <id> ...` before an operation and `A <id>` after it
/// returned (Tests/CrashWriter/main.swift), so at most one operation is in flight at the kill;
/// it may be found applied wholly, or not at all.
package struct KillCampaign<State: Equatable> {
    /// One operation of a `B` line: its id and what it does to the state.
    package typealias Operation = (id: Int, apply: (inout State) -> Void)

    package var cycles: Int
    package var seed: UInt64
    package var binary: URL
    /// The writer's arguments for a cycle, given the cycle's random number.
    package var arguments: (_ cycle: Int, _ random: UInt64) -> [String]
    /// How long the writer runs before the kill, in microseconds, given the cycle's random number.
    package var killAfter: (_ random: UInt64) -> UInt32
    /// The operation of a `B` line, or nil when the line is not understood.
    package var parse: (Substring) -> Operation?
    /// What a reopen finds (checks of its own may fail the test with the context given).
    package var read: (_ context: String) throws -> State
    /// How an expected state differs from the found one, for the failure message.
    package var difference: (_ expected: State, _ found: State) -> String

    package init(cycles: Int, seed: UInt64, binary: URL, arguments: @escaping (Int, UInt64) -> [String],
                 killAfter: @escaping (UInt64) -> UInt32, parse: @escaping (Substring) -> Operation?,
                 read: @escaping (String) throws -> State, difference: @escaping (State, State) -> String) {
        self.cycles = cycles
        self.seed = seed
        self.binary = binary
        self.arguments = arguments
        self.killAfter = killAfter
        self.parse = parse
        self.read = read
        self.difference = difference
    }

    /// What the campaign saw, for its summary line.
    package struct Summary {
        package var acknowledged = 0
        package var inFlightApplied = 0
        package var state: State
    }

    /// Runs every cycle from `initial`; stops at the first cycle whose state is wrong (after
    /// failing the test with the seed and cycle, so the run can be replayed).
    package func run(from initial: State) throws -> Summary {
        var summary = Summary(state: initial)
        var random = seed
        for cycle in 0..<cycles {
            let context = "seed \(seed), cycle \(cycle)"
            random = random &* 6364136223846793005 &+ 1442695040888963407
            let text = try CrashWriterProcess.runUntilKilled(binary, arguments: arguments(cycle, random), after: killAfter(random))
            var pending: Operation?
            for line in text.split(separator: "\n") {
                if line.hasPrefix("B ") {
                    pending = parse(line)
                    XCTAssertNotNil(pending, "\(context): unreadable line \(line)")
                } else if line.hasPrefix("A "), let started = pending, Int(line.dropFirst(2)) == started.id {
                    started.apply(&summary.state)
                    summary.acknowledged += 1
                    pending = nil
                }
            }
            let found = try read(context)
            if found == summary.state { continue }
            if let pending {
                var applied = summary.state
                pending.apply(&applied)
                if found == applied {
                    summary.state = applied
                    summary.inFlightApplied += 1
                    continue
                }
            }
            XCTFail("\(context): what the reopen finds differs from the acknowledged operations: \(difference(summary.state, found))")
            return summary
        }
        return summary
    }
}
