import Foundation
import LogStore
import XCTest

/// Power-loss campaigns over any workload: the workload runs once under
/// `PowerLossSimulator`, then for every cut point (just before and just after every sync call,
/// and random points between them) and several outcomes of the unsynced changes, a folder that
/// power loss could leave is built and handed to the check.
///
/// Short by default (what CI runs). Environment:
/// - `POWERLOSS_CUTS=N`: at most N cut points per workload (default 24; 0: every one);
/// - `POWERLOSS_BETWEEN=N`: random cut points between two syncs (default 2);
/// - `POWERLOSS_OUTCOMES=N`: random outcomes per cut point, besides "unsynced dropped" and
///   "everything kept" (default 1);
/// - `POWERLOSS_SEED=S`: the seed of the cut sampling and the outcomes (default random, printed).
package enum PowerLossCampaign {
    /// How much of the campaign to run.
    package struct Settings: Sendable {
        package var maximumCuts: Int
        package var randomOutcomes: Int
        package var pointsBetweenSyncs = 2
        package var seed: UInt64

        package static var fromEnvironment: Settings {
            let environment = ProcessInfo.processInfo.environment
            return Settings(maximumCuts: environment["POWERLOSS_CUTS"].flatMap(Int.init) ?? 24,
                            randomOutcomes: environment["POWERLOSS_OUTCOMES"].flatMap(Int.init) ?? 1,
                            pointsBetweenSyncs: environment["POWERLOSS_BETWEEN"].flatMap(Int.init) ?? 2,
                            seed: environment["POWERLOSS_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max))
        }
    }

    /// What a campaign did, for its summary line and RELIABILITY.md.
    package struct Report: Sendable {
        package var operations = 0
        package var syncs = 0
        package var cuts = 0
        /// Simulated power losses: folders built and checked.
        package var images = 0
        /// Unsynced changes the outcomes lost or tore, over all images.
        package var lostChanges = 0
    }

    /// What the check is told about one simulated power loss.
    package struct Cut: Sendable {
        /// The folder the power loss left (the workload's root, rebuilt).
        package var directory: URL
        /// Operations `0..<index` of the recording happened before the power went.
        package var index: Int
        package var recording: PowerLossSimulator.Recording
        /// Names the cut and outcome, for failure messages.
        package var context: String
    }

    /// Runs `workload` in a fresh folder under the simulator, then `check` on every simulated
    /// power loss. Prints a summary line naming the seed.
    @discardableResult
    package static func run(_ name: String, settings: Settings = .fromEnvironment,
                            workload: (URL) throws -> Void, check: (Cut) throws -> Void) -> Report {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("powerloss-\(name)-\(UUID().uuidString)")
        let root = base.appendingPathComponent("work", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: base) }
        do {
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        } catch {
            XCTFail("\(name): cannot create \(root.path): \(error)")
            return Report()
        }
        PowerLossSimulator.start(root: root.path)
        var workloadError: Error?
        do { try workload(root) } catch { workloadError = error }
        let recording = PowerLossSimulator.stop()
        if let workloadError {
            XCTFail("\(name): the workload failed: \(workloadError)")
            return Report()
        }
        if ProcessInfo.processInfo.environment["POWERLOSS_DUMP"] == "1" {
            for (index, operation) in recording.operations.enumerated() { print("\(name) #\(index): \(describe(recording, index))") }
        }
        var report = Report()
        report.operations = recording.operations.count
        report.syncs = recording.syncIndices.count
        XCTAssertGreaterThan(report.syncs, 0, "\(name): the workload made no sync call; is the simulator wired?")

        var random = PowerLossImage.SplitMix(seed: settings.seed)
        let cuts = cutPoints(recording, maximum: settings.maximumCuts, between: settings.pointsBetweenSyncs, random: &random)
        report.cuts = cuts.count
        var outcomes: [PowerLossImage.Outcome] = [.dropUnsynced, .keepAll]
        for cut in cuts {
            outcomes.removeSubrange(2...)
            for _ in 0..<settings.randomOutcomes { outcomes.append(.random(seed: random.next())) }
            for outcome in outcomes {
                let image = base.appendingPathComponent("image-\(report.images)", isDirectory: true)
                let context = "\(name): power loss before operation \(cut) of \(recording.operations.count) "
                    + "(\(describe(recording, cut))), \(outcome), campaign seed \(settings.seed)"
                do {
                    report.lostChanges += try PowerLossImage.build(recording, cut: cut, outcome: outcome, into: image)
                    try check(Cut(directory: image, index: cut, recording: recording, context: context))
                } catch {
                    XCTFail("\(context): \(error)")
                }
                report.images += 1
                try? FileManager.default.removeItem(at: image)
            }
        }
        print("power-loss campaign \(name): seed \(settings.seed), \(report.operations) operations, \(report.syncs) syncs, "
              + "\(report.cuts) cut points, \(report.images) simulated power losses, \(report.lostChanges) unsynced changes lost or torn")
        return report
    }

    /// Just before and just after every sync, `between` random points between two syncs, and the end; at most
    /// `maximum` of them (a random sample, always with the end), sorted.
    static func cutPoints(_ recording: PowerLossSimulator.Recording, maximum: Int, between: Int,
                          random: inout PowerLossImage.SplitMix) -> [Int] {
        var points = Set<Int>([recording.operations.count])
        var previous = 0
        for index in recording.syncIndices {
            points.insert(index)
            points.insert(index + 1)
            if index - previous > 2 {
                for _ in 0..<between { points.insert(previous + 1 + Int(random.next() % UInt64(index - previous - 1))) }
            }
            previous = index + 1
        }
        if recording.operations.count - previous > 2 {
            points.insert(previous + Int(random.next() % UInt64(recording.operations.count - previous)))
        }
        var sorted = points.sorted()
        if maximum > 0 && sorted.count > maximum {
            var sample = Set<Int>([recording.operations.count])
            while sample.count < maximum { sample.insert(sorted[Int(random.next() % UInt64(sorted.count))]) }
            sorted = sample.sorted()
        }
        return sorted
    }

    /// The operation the cut is before, for failure messages.
    private static func describe(_ recording: PowerLossSimulator.Recording, _ cut: Int) -> String {
        guard cut < recording.operations.count else { return "the end" }
        switch recording.operations[cut] {
        case .write(let file, let offset, let bytes): return "write of \(bytes.count) bytes at \(offset) to file \(file)"
        case .marker(let note): return "marker \(note)"
        default: return "\(recording.operations[cut])"
        }
    }
}

/// A workload's operations as a sequence of states, for the checks: the workload marks when each
/// operation begins and when it is acknowledged; after a power loss, what the store shows must be
/// exactly one of the states, no older than what the durability mode promises.
package final class PowerLossJournal<State: Equatable> {
    /// State `k` is the state after the first `k` operations.
    package private(set) var states: [State]
    private var begun: [Int] = []
    private var acknowledged: [Int] = []

    package init(initial: State) { states = [initial] }

    /// Marks the start of an operation; returns its number.
    @discardableResult
    package func begin(_ note: String) -> Int {
        begun.append(PowerLossSimulator.mark("begin \(begun.count) \(note)"))
        return begun.count - 1
    }

    /// Marks the operation begun last as acknowledged, leaving `state`.
    package func acknowledge(_ state: State) {
        acknowledged.append(PowerLossSimulator.mark("ack \(acknowledged.count)"))
        states.append(state)
    }

    /// The current state (after the last acknowledged operation).
    package var current: State { states[states.count - 1] }

    /// Operations acknowledged before operation `index` of the recording.
    package func acknowledged(before index: Int) -> Int { acknowledged.prefix { $0 < index }.count }

    /// Operations begun before operation `index` of the recording.
    package func begun(before index: Int) -> Int { begun.prefix { $0 < index }.count }

    /// The states a store may show after a power loss before operation `cut`, when every
    /// operation acknowledged before recording index `durableBefore` must have survived: the
    /// states from then up to the one after the operation in flight.
    package func allowed(cut: Int, durableBefore: Int) -> ClosedRange<Int> {
        let floor = acknowledged(before: min(cut, durableBefore))
        let ceiling = min(states.count - 1, begun(before: cut))
        return floor...max(floor, ceiling)
    }

    /// The index of the state `found` equals in `range`, or nil.
    package func match(_ found: State, in range: ClosedRange<Int>) -> Int? {
        range.last { states[$0] == found }
    }
}

extension PowerLossSimulator.Recording {
    /// The index after the last `fdatasync` of a file whose name ends with `suffix` before `cut`
    /// (0 if none): what a group-commit store promises is what was acknowledged before it.
    package func afterLastSync(ofFilesEndingWith suffix: String, before cut: Int) -> Int {
        var paths: [Int: String] = baselineIDs.reduce(into: [:]) { $0[$1.value] = $1.key }
        var last = 0
        for (index, operation) in operations.prefix(cut).enumerated() {
            switch operation {
            case .create(let path, let file): paths[file] = path
            case .syncFile(let file) where paths[file]?.hasSuffix(suffix) == true: last = index + 1
            default: break
            }
        }
        return last
    }
}
