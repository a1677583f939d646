import Foundation
import UnifiedStorage

/// The state of one `ustore shell`: the database, the output settings the dot-commands change,
/// and whether any statement failed. Input arrives line by line (`take(line:)`); statements
/// run when their `;` arrives.
final class ShellSession {
    let database: SQLDatabase
    var mode: OutputMode
    var headers: Bool
    var timer = false
    /// `.eqp on`: print each query's plan before its rows.
    var explainQueries = false
    /// Whether any statement or dot-command failed (the exit status of a piped session).
    private(set) var anyFailed = false
    /// Set by `.quit` / `.exit`.
    private(set) var quitRequested = false
    /// How deep `.read` is nested (a file that reads itself stops at a limit).
    private var readDepth = 0

    init(database: SQLDatabase, interactive: Bool) {
        self.database = database
        // As sqlite3: a table for people, plain `|`-separated values for scripts.
        mode = interactive ? .box : .list
        headers = interactive
    }

    /// Handles one input line of `source` (nil: standard input): a dot-command when no
    /// statement is being typed, else SQL added to `accumulator`, running what it completes.
    func take(line: String, into accumulator: inout StatementAccumulator, source: String?) {
        if !accumulator.isPending, line.drop(while: \.isWhitespace).hasPrefix(".") {
            _ = accumulator.add(line: "")   // keeps the line count of error positions right
            runDotCommand(line.trimmingCharacters(in: .whitespaces))
            return
        }
        for statement in accumulator.add(line: line) {
            run(statement, source: source)
        }
    }

    /// Runs what is left in `accumulator` at the end of its input (a last statement without `;`).
    func finish(_ accumulator: inout StatementAccumulator, source: String?) {
        if let statement = accumulator.takeRemainder() { run(statement, source: source) }
    }

    // MARK: Statements

    func run(_ statement: StatementAccumulator.Statement, source: String?) {
        let started = ProcessTimes.now()
        do {
            if let query = Self.explainedQuery(statement.text) {
                try printPlan(of: query)
            } else {
                if explainQueries, Self.isQuery(statement.text) { try printPlan(of: statement.text) }
                let result = try database.execute(statement.text)
                if result.isQuery {
                    for line in ResultFormatter.render(result, mode: mode, headers: headers) { try Output.line(line) }
                }
            }
        } catch {
            report(error, in: statement, source: source)
        }
        if timer { try? Output.line(ProcessTimes.now().since(started)) }
    }

    private func printPlan(of query: String) throws {
        let plan = try database.queryPlan(query)
        try Output.line("QUERY PLAN")
        let lines = plan.split(separator: "\n", omittingEmptySubsequences: false)
        for (number, line) in lines.enumerated() { try Output.line((number == lines.count - 1 ? "`--" : "|--") + line) }
    }

    /// The query of `EXPLAIN QUERY PLAN q` or `EXPLAIN q`; nil for other statements.
    static func explainedQuery(_ text: String) -> String? {
        let words = text.split(maxSplits: 3, whereSeparator: \.isWhitespace)
        guard let first = words.first, first.uppercased() == "EXPLAIN", words.count >= 2 else { return nil }
        if words.count >= 3, words[1].uppercased() == "QUERY", words[2].uppercased() == "PLAN" {
            return words.count == 4 ? String(words[3]) : ""
        }
        return String(text.drop(while: { !$0.isWhitespace }).drop(while: \.isWhitespace))
    }

    private static func isQuery(_ text: String) -> Bool {
        text.prefix(while: { !$0.isWhitespace && $0 != "(" }).uppercased() == "SELECT"
    }

    /// Prints `error` on stderr; a syntax error names its line and column in the input and
    /// shows that line with a caret under the column.
    private func report(_ error: Error, in statement: StatementAccumulator.Statement, source: String?) {
        anyFailed = true
        let place = source.map { "\($0):" } ?? ""
        guard case DAOError.syntax(let message, let line, let column) = error else {
            Output.error(place + "line \(statement.line): " + JSON.sqlErrorText(error), prefix: "Error: ")
            return
        }
        let inputLine = statement.line + line - 1
        let inputColumn = line == 1 ? statement.column + column - 1 : column
        Output.error(place + "line \(inputLine), column \(inputColumn): syntax error: \(message)", prefix: "Error: ")
        let lines = statement.text.split(separator: "\n", omittingEmptySubsequences: false)
        guard line >= 1, line <= lines.count else { return }
        let text = String(lines[line - 1])
        let caretColumn = line == 1 ? column - 1 + statement.column - 1 : column - 1
        let shown = line == 1 ? String(repeating: " ", count: statement.column - 1) + text : text
        Output.error("  " + shown, prefix: "")
        Output.error("  " + String(repeating: " ", count: max(caretColumn, 0)) + "^", prefix: "")
    }

    // MARK: Dot-commands

    static let help = """
        .exit / .quit            leave the shell
        .eqp on|off              print each query's plan before its rows
        .headers on|off          column names in column, csv and list modes
        .help                    this text
        .indexes ?TABLE?         index names (of TABLE)
        .mode MODE               box, column, csv, json, line or list
        .read FILE               run the statements and dot-commands of FILE
        .schema ?TABLE?          CREATE statements (of TABLE)
        .tables                  table names
        .timer on|off            time each statement
        EXPLAIN QUERY PLAN q;    how the engine reaches the rows of query q
        Statements end with ';' and may span lines; Ctrl-C drops the one being typed.
        """

    func runDotCommand(_ line: String) {
        let words = line.split(whereSeparator: \.isWhitespace).map(String.init)
        let name = words.first ?? "."
        let argument = words.count > 1 ? words[1] : nil
        do {
            switch name {
            case ".exit", ".quit": quitRequested = true
            case ".help": try Output.line(Self.help)
            case ".tables":
                let names = database.tableNames()
                if !names.isEmpty { try Output.line(names.joined(separator: "  ")) }
            case ".schema":
                for table in try tables(argument) {
                    for statement in database.schema(ofTable: table) ?? [] { try Output.line(statement + ";") }
                }
            case ".indexes", ".indices":
                for table in try tables(argument) {
                    for statement in (database.schema(ofTable: table) ?? []).dropFirst() {
                        if let index = Self.indexName(statement) { try Output.line(index) }
                    }
                }
            case ".mode":
                guard let argument, let mode = OutputMode(rawValue: argument.lowercased()) else {
                    throw ShellError("usage: .mode " + OutputMode.allCases.map(\.rawValue).joined(separator: "|"))
                }
                self.mode = mode
            case ".headers", ".header": headers = try Self.onOff(argument, name)
            case ".timer": timer = try Self.onOff(argument, name)
            case ".eqp": explainQueries = try Self.onOff(argument, name)
            case ".read":
                guard let argument else { throw ShellError("usage: .read FILE") }
                try read(file: argument)
            default:
                throw ShellError("unknown command or invalid arguments: \"\(name.dropFirst())\". Enter \".help\" for help")
            }
        } catch {
            anyFailed = true
            Output.error(describe(error), prefix: "Error: ")
        }
    }

    /// Runs every line of `path` as if typed (statements and dot-commands); errors name the file.
    func read(file path: String) throws {
        guard readDepth < 16 else { throw ShellError(".read nested too deeply (a file reading itself?)") }
        let text = try String(contentsOf: URL(fileURLWithPath: path), encoding: .utf8)
        readDepth += 1
        defer { readDepth -= 1 }
        var accumulator = StatementAccumulator()
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            take(line: String(line), into: &accumulator, source: path)
            if quitRequested { return }
        }
        finish(&accumulator, source: path)
    }

    private func tables(_ name: String?) throws -> [String] {
        guard let name else { return database.tableNames() }
        guard let table = database.tableNames().first(where: { $0.lowercased() == name.lowercased() }) else {
            throw ShellError("no such table: \(name)")
        }
        return [table]
    }

    private static func onOff(_ argument: String?, _ command: String) throws -> Bool {
        switch argument?.lowercased() {
        case "on", "yes", "1": return true
        case "off", "no", "0": return false
        default: throw ShellError("usage: \(command) on|off")
        }
    }

    /// The (unquoted) name in `CREATE [UNIQUE] INDEX name ON ...`.
    static func indexName(_ statement: String) -> String? {
        guard let start = statement.range(of: "INDEX "), let end = statement.range(of: " ON ", range: start.upperBound..<statement.endIndex) else { return nil }
        var name = String(statement[start.upperBound..<end.lowerBound])
        if name.count >= 2, let first = name.first, first == "\"" || first == "`" || first == "[" {
            name = String(name.dropFirst().dropLast()).replacingOccurrences(of: "\"\"", with: "\"")
        }
        return name
    }
}

/// A dot-command's error, printed as it is.
struct ShellError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Wall-clock, user and system time, for `.timer on`.
struct ProcessTimes {
    var real: Double
    var user: Double
    var system: Double

    static func now() -> ProcessTimes {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return ProcessTimes(real: Date().timeIntervalSinceReferenceDate, user: seconds(usage.ru_utime), system: seconds(usage.ru_stime))
    }

    /// `Run Time: real 0.001 user 0.000800 sys 0.000100`, as sqlite3 prints it.
    func since(_ start: ProcessTimes) -> String {
        String(format: "Run Time: real %.3f user %.6f sys %.6f", real - start.real, user - start.user, system - start.system)
    }
}
