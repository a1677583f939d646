import ArgumentParser
import UnifiedStorage

/// `ustore get DIR KEY`: writes the value's raw bytes to stdout, nothing added.
struct GetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Write the value of KEY to stdout as raw bytes (no newline added).",
        discussion: "Exits 1 with a message on stderr when the key is absent, deleted or expired."
    )

    @OptionGroup var store: StoreDirectoryArgument
    @Argument(help: "The key (its UTF-8 bytes).")
    var key: String
    @OptionGroup var keySpace: KeySpaceOption

    func run() throws {
        try reportingFailures {
            let value = try StoreSession.with(store, readOnly: true) { logStore in
                try logStore.get(forKey: Array(key.utf8), space: keySpace.space)
            }
            guard let value else {
                Output.error("no value for key \(JSON.string(key).text) in space \(keySpace.space)")
                throw ExitStatus.notFoundOrProblem
            }
            try Output.write(value)
        }
    }
}
