import ArgumentParser
import UnifiedStorage

/// `ustore stats DIR`: the store's counters and its recovery report as one JSON object.
struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Print the store's statistics and recovery report as one JSON object."
    )

    @OptionGroup var store: StoreDirectoryArgument

    func run() throws {
        try reportingFailures {
            let json = try StoreSession.with(store, readOnly: true) { logStore in
                JSON.statistics(logStore.statistics, recoveryReport: logStore.recoveryReport)
            }
            try Output.line(json.text)
        }
    }
}
