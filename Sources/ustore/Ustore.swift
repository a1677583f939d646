import ArgumentParser

/// `ustore`: inspects and edits a UnifiedStorage store directory from the command line.
///
/// Exit status: 0 on success; 1 when `get` finds no value or `verify` finds a problem;
/// 2 when the store cannot be opened or an operation fails (a one-line message goes to
/// stderr); 64 for a malformed command line (reported by ArgumentParser with the usage).
@main
struct Ustore: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ustore",
        abstract: "Inspect and edit a UnifiedStorage store directory.",
        discussion: """
            Exit status: 0 on success; 1 when `get` finds no value or `verify` finds a problem; \
            2 when the store cannot be opened (for example because another process holds it) \
            or an operation fails; 64 for a malformed command line.
            """,
        subcommands: [
            GetCommand.self, PutCommand.self, DeleteCommand.self, KeysCommand.self,
            StatsCommand.self, VerifyCommand.self, DumpCommand.self, CompactCommand.self, TrainCommand.self,
            SqlCommand.self, ShellCommand.self, DaoCommand.self, ExportCommand.self, ImportCommand.self, RekeyCommand.self,
        ]
    )
}
