import ArgumentParser
import Foundation
import UnifiedStorage

/// `ustore shell DIR`: an interactive SQL shell on the store's tables, in the manner of the
/// sqlite3 shell; reads a script from stdin when stdin is not a terminal.
struct ShellCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shell",
        abstract: "An interactive SQL shell on the store's tables (like sqlite3); reads stdin when piped.",
        discussion: """
            Statements end with ';' and may span lines. Dot-commands (.help lists them): .tables, \
            .schema, .indexes, .mode box|column|csv|json|line|list, .headers, .timer, .eqp, \
            .read FILE, .quit. EXPLAIN QUERY PLAN shows how a query reaches its rows. On a \
            terminal, lines can be edited and up/down recall earlier ones; output defaults to \
            box mode. Piped, nothing is prompted, output defaults to list mode without headers, \
            and the exit status is 2 when any statement failed (errors name line and column). \
            Errors go to stderr.
            """
    )

    @OptionGroup var store: StoreDirectoryArgument
    @Flag(name: .customLong("read-only"), help: "Open the store read-only (statements that write fail).")
    var readOnly = false

    func run() throws {
        var failed = false
        try reportingFailures {
            try StoreSession.with(store, readOnly: readOnly) { logStore in
                let database = try SQLDatabase.attached(to: logStore)
                let editor = LineEditor()
                let session = ShellSession(database: database, interactive: editor.isInteractive)
                if editor.isInteractive {
                    try Output.line("ustore shell on \(store.directory): enter \".help\" for help, statements end with \";\"")
                }
                var accumulator = StatementAccumulator()
                loop: while !session.quitRequested {
                    switch editor.read(prompt: accumulator.isPending ? "   ...> " : "ustore> ") {
                    case .line(let line):
                        editor.remember(line)
                        session.take(line: line, into: &accumulator, source: nil)
                    case .interrupt:
                        accumulator.reset()
                    case .endOfInput:
                        session.finish(&accumulator, source: nil)
                        break loop
                    }
                }
                failed = session.anyFailed && !editor.isInteractive
            }
        }
        if failed { throw ExitStatus.failure }
    }
}
