import ArgumentParser
import UnifiedStorage

/// `ustore compact DIR`: compacts every segment, then prints the statistics.
struct CompactCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Compact the store, then print its statistics as `stats` does."
    )

    @OptionGroup var store: StoreDirectoryArgument

    func run() throws {
        try reportingFailures {
            let json = try StoreSession.with(store.url, readOnly: false) { logStore in
                try logStore.compact()
                return JSON.statistics(logStore.statistics, recoveryReport: logStore.recoveryReport)
            }
            try Output.line(json.text)
        }
    }
}
