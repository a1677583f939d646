import ArgumentParser
import UnifiedStorage

/// `ustore delete DIR KEY`: deletes a key (deleting an absent key is not an error).
struct DeleteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete KEY. Deleting an absent key succeeds."
    )

    @OptionGroup var store: StoreDirectoryArgument
    @Argument(help: "The key (its UTF-8 bytes).")
    var key: String
    @OptionGroup var keySpace: KeySpaceOption

    func run() throws {
        try reportingFailures {
            try StoreSession.with(store, readOnly: false) { logStore in
                try logStore.delete(forKey: Array(key.utf8), space: keySpace.space)
            }
        }
    }
}
