import ArgumentParser
import UnifiedStorage

/// `ustore compact DIR`: compacts every segment, then prints the statistics.
struct CompactCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Compact the store, then print its statistics as `stats` does.",
        discussion: """
            Compaction copies records byte for byte: it neither decrypts nor recompresses them. \
            The key and compression options apply to whatever the open itself writes, as for `put`.
            """
    )

    @OptionGroup var store: StoreDirectoryArgument
    @OptionGroup(title: "Compression") var compression: CompressionOptions

    func run() throws {
        try reportingFailures {
            let json = try StoreSession.with(store, readOnly: false, compression: compression.compression) { logStore in
                try ProgressLine("compact").whileRunning { try logStore.compact() }
                return JSON.statistics(logStore.statistics, recoveryReport: logStore.recoveryReport)
            }
            try Output.line(json.text)
        }
    }
}
