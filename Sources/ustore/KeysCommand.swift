import ArgumentParser
import UnifiedStorage

/// `ustore keys DIR [--prefix P]`: the live keys of a space as one JSON array.
struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Print the live keys of a space as one JSON array, sorted bytewise.",
        discussion: #"Keys that are not valid UTF-8 appear as {"base64":"..."}."#
    )

    @OptionGroup var store: StoreDirectoryArgument
    @OptionGroup var keySpace: KeySpaceOption
    @Option(help: "Only keys starting with this prefix (its UTF-8 bytes).")
    var prefix: String = ""

    func run() throws {
        try reportingFailures {
            let keys = try StoreSession.with(store, readOnly: true) { logStore in
                try logStore.keys(space: keySpace.space, prefix: Array(prefix.utf8))
            }
            try Output.line(JSON.array(keys.map(JSON.key)).text)
        }
    }
}
