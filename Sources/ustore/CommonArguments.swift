import ArgumentParser
import Foundation

/// The store directory: the first argument of every subcommand.
struct StoreDirectoryArgument: ParsableArguments {
    @Argument(help: "The store's directory.")
    var directory: String

    /// The directory as a file URL.
    var url: URL { URL(fileURLWithPath: directory, isDirectory: true) }
}

/// `--space N`: the key space of the subcommands that take keys.
struct KeySpaceOption: ParsableArguments {
    @Option(help: "The key space (0 ..< 2^31 belong to applications).")
    var space: UInt32 = 0
}
