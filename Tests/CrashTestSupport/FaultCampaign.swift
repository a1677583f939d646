import Foundation
import LogStore
import XCTest

/// The I/O error campaign of SQLite's tests, for any workload: run it once to count its I/O
/// calls, then once per call and fault with that call failing, checking each run.
package enum FaultCampaign {
    /// What a campaign did, for its summary line.
    package struct Report: Sendable {
        /// I/O calls of the workload's dry run.
        package var calls = 0
        /// Runs in which the fault fired (a run may take a path with fewer calls).
        package var injected = 0
        /// The kinds of call the dry run made, and those that received a fault.
        package var made: Set<String> = []
        package var failed: Set<String> = []
    }

    /// Runs the campaign. `workload` runs in a fresh directory (from `directory`) and returns a
    /// check of what it left, which the campaign calls with a context naming the fault.
    /// The dry run is checked too; it must make more than `minimumCalls` calls.
    @discardableResult
    package static func run(faults: [InjectedFault], minimumCalls: Int = 10, directory: () -> URL,
                           workload: (URL) -> (String) -> Void) -> Report {
        var report = Report()
        let dry = directory()
        FaultInjection.arm(failAt: nil)
        let checkDry = workload(dry)
        report.calls = FaultInjection.disarm()
        report.made = Set(FaultInjection.log.map(\.rawValue))
        XCTAssertGreaterThan(report.calls, minimumCalls, "the workload makes few I/O calls; is injection wired?")
        checkDry("dry run")
        try? FileManager.default.removeItem(at: dry)
        for fault in faults {
            for index in 0..<report.calls {
                let folder = directory()
                FaultInjection.arm(failAt: index, fault: fault)
                let check = workload(folder)
                let fired = FaultInjection.fired
                FaultInjection.disarm()
                if let fired {
                    report.failed.insert(fired.call.rawValue)
                    report.injected += 1
                    check("\(fault) at call \(index) (\(fired.call.rawValue) \(fired.path))")
                }
                try? FileManager.default.removeItem(at: folder)
            }
        }
        return report
    }
}
