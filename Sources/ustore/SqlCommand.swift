import ArgumentParser
import Foundation
import UnifiedStorage

/// `ustore sql DIR STATEMENT` / `ustore sql DIR --file F`: runs SQL statements of the subset
/// (API.md "DAO" 2) on the store's tables and prints one JSON line per statement.
struct SqlCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sql",
        abstract: "Run SQL statements on the store's tables, printing one JSON line per statement.",
        discussion: """
            A query prints {"ok":true,"rows":[[...],...]} (integers as JSON integers, reals with a \
            decimal point or exponent, text as strings, NULL as null, blobs as {"blob":"<base64>"}, \
            and text whose bytes are not valid UTF-8, which no JSON string holds, as \
            {"text":"<base64 of its bytes>"}); \
            any other statement prints {"ok":true,"changes":N,"lastInsertRowId":M}; a failing \
            statement prints {"ok":false,"error":"..."} and the next statement still runs. \
            With --file, statements end at a semicolon at the end of a line. Exits 0 when every \
            statement succeeded, 2 when any failed (after running them all) or the store cannot \
            be opened.
            """
    )

    @OptionGroup var store: StoreDirectoryArgument
    @Argument(help: "The statement to run (omit with --file).")
    var statement: String?
    @Option(name: .customLong("file"), help: ArgumentHelp("Run the statements of this file instead.", valueName: "path"))
    var file: String?

    func validate() throws {
        if (statement == nil) == (file == nil) {
            throw ValidationError("give either a STATEMENT or --file, not both")
        }
    }

    func run() throws {
        var anyFailed = false
        try reportingFailures {
            let statements: [String]
            if let file {
                let text = try String(contentsOf: URL(fileURLWithPath: file), encoding: .utf8)
                statements = SQLScript.statements(text)
            } else {
                statements = [statement ?? ""]
            }
            try StoreSession.with(store, readOnly: false) { logStore in
                let database = try SQLDatabase.attached(to: logStore)
                var lines = BufferedLines()
                for sql in statements {
                    let json: JSON
                    do {
                        json = .sqlResult(try database.execute(sql))
                    } catch {
                        anyFailed = true
                        json = .sqlError(error)
                    }
                    try lines.append(json.text)
                }
                try lines.flush()
            }
        }
        if anyFailed { throw ExitStatus.failure }
    }
}
