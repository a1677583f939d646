import ArgumentParser
import UnifiedStorage

/// `ustore train DIR --space N`: trains a zstd dictionary for a key space.
struct TrainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "train",
        abstract: "Train a zstd dictionary on a key space's values; its new values use it.",
        discussion: """
            Prints {"dictionary": ID} (null when the space holds too little to learn from). \
            New values of the space are compressed with the dictionary when compression is on \
            (--compress-level); values already written keep what they were written with.
            """
    )

    @OptionGroup var store: StoreDirectoryArgument
    @OptionGroup var keySpace: KeySpaceOption
    @Option(help: "Largest dictionary size in bytes.") var maxSize: Int = 16 << 10

    func run() throws {
        try reportingFailures {
            let id = try StoreSession.with(store, readOnly: false) { logStore in
                try logStore.trainCompressionDictionary(space: keySpace.space, maxSize: maxSize)
            }
            try Output.line("{\"dictionary\":\(id.map(String.init) ?? "null")}")
        }
    }
}
