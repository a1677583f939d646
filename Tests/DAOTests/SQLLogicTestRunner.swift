@testable import DAO
import COpenSSL
import Foundation

/// One record of a sqllogictest file (format: ../shared/sqllogictest/README.md), with the line
/// it starts on. Records whose `skipif`/`onlyif` conditions exclude SQLite are dropped by the
/// parser (this engine counts as `sqlite`).
enum SQLLogicRecord: Equatable {
    case statement(expectOK: Bool, sql: String, line: Int)
    /// `types` has one letter a column (I, R, T); `sort` is nosort, rowsort or valuesort;
    /// `expected` is the lines after `----` (values one a line, or one "N values hashing to H").
    case query(types: String, sort: String, label: String?, sql: String, expected: [String], line: Int)
    case hashThreshold(Int)
    case halt
}

/// Reads the text of a sqllogictest file into records.
enum SQLLogicParser {
    /// The records of `text`; `skipped` counts the records left out by skipif/onlyif.
    /// Unknown record kinds are an error naming the line.
    static func parse(_ text: String) throws -> (records: [SQLLogicRecord], skipped: Int) {
        // "\r\n" is one Character, a newline like "\n" (some corpus files have CRLF lines).
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map(String.init)
        var records: [SQLLogicRecord] = []
        var skipped = 0
        var i = 0
        while i < lines.count {
            // Skip blank lines and comment lines between records.
            if lines[i].trimmingCharacters(in: .whitespaces).isEmpty || lines[i].hasPrefix("#") { i += 1; continue }
            var runs = true
            // Conditions: "skipif <db> [# comment]" / "onlyif <db> [# comment]".
            while i < lines.count, let (keyword, database) = condition(lines[i]) {
                if keyword == "skipif", database == "sqlite" { runs = false }
                if keyword == "onlyif", database != "sqlite" { runs = false }
                i += 1
            }
            guard i < lines.count else { break }
            let start = i + 1
            let words = lines[i].split(whereSeparator: \.isWhitespace).map(String.init)
            i += 1
            switch words.first {
            case "statement":
                var sql: [String] = []
                while i < lines.count, !lines[i].trimmingCharacters(in: .whitespaces).isEmpty { sql.append(lines[i]); i += 1 }
                guard words.count >= 2, words[1] == "ok" || words[1] == "error" else {
                    throw SQLLogicError.format("line \(start): statement needs ok or error")
                }
                if runs { records.append(.statement(expectOK: words[1] == "ok", sql: sql.joined(separator: "\n"), line: start)) }
            case "query":
                var sql: [String] = []
                while i < lines.count, !lines[i].trimmingCharacters(in: .whitespaces).isEmpty, lines[i] != "----" {
                    sql.append(lines[i]); i += 1
                }
                var expected: [String] = []
                if i < lines.count, lines[i] == "----" {
                    i += 1
                    while i < lines.count, !lines[i].isEmpty { expected.append(lines[i]); i += 1 }
                }
                guard words.count >= 2 else { throw SQLLogicError.format("line \(start): query needs its types") }
                let sort = words.count >= 3 ? words[2] : "nosort"
                guard ["nosort", "rowsort", "valuesort"].contains(sort) else {
                    throw SQLLogicError.format("line \(start): unknown sort mode \(sort)")
                }
                if runs {
                    records.append(.query(types: words[1], sort: sort, label: words.count >= 4 ? words[3] : nil,
                                          sql: sql.joined(separator: "\n"), expected: expected, line: start))
                }
            case "hash-threshold":
                guard words.count >= 2, let n = Int(words[1]) else {
                    throw SQLLogicError.format("line \(start): hash-threshold needs a number")
                }
                if runs { records.append(.hashThreshold(n)) }
                continue
            case "halt":
                if runs { records.append(.halt) }
                continue
            default:
                throw SQLLogicError.format("line \(start): unknown record \(lines[start - 1])")
            }
            if !runs { skipped += 1 }
        }
        return (records, skipped)
    }

    private static func condition(_ line: String) -> (String, String)? {
        let words = line.split(whereSeparator: \.isWhitespace)
        guard words.count >= 2, words[0] == "skipif" || words[0] == "onlyif" else { return nil }
        return (String(words[0]), String(words[1]))
    }
}

enum SQLLogicError: Error, CustomStringConvertible {
    case format(String)
    var description: String { if case .format(let m) = self { return m }; return "" }
}

/// What running records gave: passed, failed (with why), refused (by the construct the engine
/// names in `DAOError.unsupported`), and skipped (excluded for SQLite by skipif/onlyif).
struct SQLLogicOutcome {
    struct Failure: CustomStringConvertible {
        let file: String
        let line: Int
        let sql: String
        let reason: String
        var description: String { "\(file):\(line): \(reason)\n    \(sql.replacingOccurrences(of: "\n", with: " "))" }
    }

    var passed = 0
    var failures: [Failure] = []
    var refused: [String: Int] = [:]
    var skipped = 0

    var failed: Int { failures.count }
    var refusedTotal: Int { refused.values.reduce(0, +) }

    mutating func add(_ other: SQLLogicOutcome) {
        passed += other.passed
        failures += other.failures
        skipped += other.skipped
        for (construct, n) in other.refused { refused[construct, default: 0] += n }
    }

    /// The counts as a few lines of text (refused sorted by count, most first).
    var summary: String {
        var text = "passed \(passed), failed \(failed), refused \(refusedTotal), skipped (skipif/onlyif) \(skipped)\n"
        for (construct, n) in refused.sorted(by: { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }) {
            text += "  refused \(construct): \(n)\n"
        }
        return text
    }
}

/// Runs sqllogictest files on fresh stores through `SQLDatabase` and compares the results as
/// SQLite's own runner prints them.
enum SQLLogicRunner {
    /// Runs the file at `url` on a new store; at most `limit` records (conditions' skipped
    /// records not counted) when given.
    static func run(file url: URL, name: String, limit: Int? = nil) throws -> SQLLogicOutcome {
        let text = try String(contentsOf: url, encoding: .utf8)
        let records: [SQLLogicRecord], skipped: Int
        do { (records, skipped) = try SQLLogicParser.parse(text) } catch {
            throw SQLLogicError.format("\(name): \(error)")
        }
        let temporary = try TemporaryStore()
        let database = try SQLDatabase.attached(to: temporary.store)
        var outcome = SQLLogicOutcome()
        outcome.skipped = skipped
        var hashThreshold = 0
        var labels: [String: String] = [:]
        // SQL of statements the engine refused: a later "no such table" naming an object they
        // create is a consequence of that refusal, counted under it.
        var refusedStatements: [(sql: String, construct: String)] = []
        var count = 0

        func classify(_ error: Error, sql: String, line: Int) -> String? {
            if case DAOError.unsupported(let construct) = error {
                outcome.refused[construct, default: 0] += 1
                return nil
            }
            if case DAOError.noSuchTable(let table) = error,
               let cause = refusedStatements.first(where: { $0.sql.lowercased().contains(table.lowercased()) }) {
                outcome.refused["\(cause.construct) (object not created)", default: 0] += 1
                return nil
            }
            return "\(error)"
        }

        for record in records {
            if let limit, count >= limit { break }
            switch record {
            case .halt:
                return outcome
            case .hashThreshold(let n):
                hashThreshold = n
            case .statement(let expectOK, let sql, let line):
                count += 1
                do {
                    // Like sqlite3_exec, a statement record may hold several statements; as with
                    // `ustore sql --file`, one ends at a semicolon that ends a line.
                    for statement in statements(of: sql) { _ = try database.execute(statement) }
                    if expectOK { outcome.passed += 1 } else {
                        outcome.failures.append(.init(file: name, line: line, sql: sql, reason: "statement error expected, it succeeded"))
                    }
                } catch {
                    if case DAOError.unsupported(let construct) = error { refusedStatements.append((sql, construct)) }
                    if let reason = classify(error, sql: sql, line: line) {
                        if expectOK {
                            outcome.failures.append(.init(file: name, line: line, sql: sql, reason: "statement ok expected: \(reason)"))
                        } else {
                            outcome.passed += 1
                        }
                    }
                }
            case .query(let types, let sort, let label, let sql, let expected, let line):
                count += 1
                let rows: [[SQLValue]]
                do {
                    rows = try database.execute(sql).exactRows   // text as its bytes
                } catch {
                    if let reason = classify(error, sql: sql, line: line) {
                        outcome.failures.append(.init(file: name, line: line, sql: sql, reason: "query failed: \(reason)"))
                    }
                    continue
                }
                if let mismatch = compare(rows: rows, types: types, sort: sort, label: label, expected: expected,
                                          hashThreshold: hashThreshold, labels: &labels) {
                    outcome.failures.append(.init(file: name, line: line, sql: sql, reason: mismatch))
                } else {
                    outcome.passed += 1
                }
            }
        }
        return outcome
    }

    /// The statements of a statement record: split after lines that end with a semicolon.
    static func statements(of sql: String) -> [String] {
        var result: [String] = []
        var current: [Substring] = []
        for line in sql.split(separator: "\n", omittingEmptySubsequences: false) {
            current.append(line)
            if line.trimmingCharacters(in: .whitespaces).hasSuffix(";") {
                result.append(current.joined(separator: "\n")); current = []
            }
        }
        if current.contains(where: { !$0.trimmingCharacters(in: .whitespaces).isEmpty }) {
            result.append(current.joined(separator: "\n"))
        }
        return result
    }

    /// Nil when `rows` print as `expected`; otherwise what differs.
    static func compare(rows: [[SQLValue]], types: String, sort: String, label: String?, expected: [String],
                        hashThreshold: Int, labels: inout [String: String]) -> String? {
        let columns = Array(types)
        if let first = rows.first, first.count != columns.count {
            return "\(first.count) columns, the record declares \(columns.count)"
        }
        var printed = rows.map { row in row.enumerated().map { format($0.element, as: columns[$0.offset]) } }
        var values: [String]
        switch sort {
        case "rowsort":
            printed.sort { a, b in
                for (x, y) in zip(a, b) where x != y { return x.utf8.lexicographicallyPrecedes(y.utf8) }
                return false
            }
            values = printed.flatMap { $0 }
        case "valuesort":
            values = printed.flatMap { $0 }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        default:
            values = printed.flatMap { $0 }
        }
        let hash = md5Hex(values.map { $0 + "\n" }.joined())
        if let label {
            if let earlier = labels[label], earlier != hash { return "label \(label): hash \(hash), earlier \(earlier)" }
            labels[label] = hash
        }
        // Above the threshold the result is its hash line (the format's hash-threshold).
        if hashThreshold > 0, values.count > hashThreshold, expected.count != 1 || hashLine(expected[0]) == nil {
            return "\(values.count) values hashing to \(hash), expected \(expected.count) values"
        }
        if expected.count == 1, let (n, expectedHash) = hashLine(expected[0]) {
            if n == values.count, expectedHash == hash { return nil }
            return "\(values.count) values hashing to \(hash), expected \(expected[0])"
        }
        if values == expected { return nil }
        // Some generators put a row's values on one line, separated by spaces.
        if values.joined(separator: " ").split(separator: " ") == expected.joined(separator: " ").split(separator: " ") {
            return nil
        }
        let shown = values.count > 12 ? Array(values.prefix(12)) + ["..."] : values
        return "got \(shown), expected \(expected.count > 12 ? Array(expected.prefix(12)) + ["..."] : expected)"
    }

    /// A value as SQLite's sqllogictest driver prints it for a column of type `letter`.
    static func format(_ value: SQLValue, as letter: Character) -> String {
        if case .null = value { return "NULL" }
        switch letter {
        case "I":
            switch value {
            case .integer(let i): return String(i)
            case .real(let r): return String(SQLValues.saturatingInteger(r))
            default:
                if case .integer(let i) = SQLValues.castInteger(value) { return String(i) }
                return "0"
            }
        case "R":
            let r: Double
            if case .real(let x) = SQLValues.castReal(value) { r = x } else { r = 0 }
            return fixed3(r)
        default:
            let bytes = SQLiteText.bytes(of: value) ?? []
            if bytes.isEmpty { return "(empty)" }
            return String(decoding: bytes.map { $0 < 0x20 || $0 > 0x7E ? UInt8(ascii: "@") : $0 }, as: UTF8.self)
        }
    }

    /// "%.3f" as SQLite's own printf (sqlite3_snprintf, which the corpus's driver used) writes
    /// it: at most 16 significant digits, zeros after them.
    static func fixed3(_ r: Double) -> String {
        guard r.isFinite, abs(r) >= 1e13 else { return String(format: "%.3f", r == 0 ? 0.0 : r) }
        // d.ddddddddddddddde+X: the 16 digits SQLite keeps, rounded as it rounds them.
        let scientific = String(format: "%.15e", r)
        guard let e = scientific.firstIndex(of: "e"), let exponent = Int(scientific[scientific.index(after: e)...]) else {
            return String(format: "%.3f", r)
        }
        let digits = Array(scientific[..<e].filter(\.isNumber))
        let integerCount = exponent + 1
        let padded = digits + Array(repeating: Character("0"), count: max(0, integerCount + 3 - digits.count))
        return (r < 0 ? "-" : "") + String(padded[..<integerCount]) + "." + String(padded[integerCount..<(integerCount + 3)])
    }

    private static func hashLine(_ line: String) -> (Int, String)? {
        let words = line.split(separator: " ")
        guard words.count == 5, words[1] == "values", words[2] == "hashing", words[3] == "to",
              let n = Int(words[0]) else { return nil }
        return (n, String(words[4]))
    }

    /// The lowercase hex MD5 of the UTF-8 of `text` (OpenSSL's).
    static func md5Hex(_ text: String) -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        var bytes = Array(text.utf8)
        let ok = bytes.withUnsafeMutableBytes { buffer in
            EVP_Digest(buffer.baseAddress, buffer.count, &digest, &length, EVP_md5(), nil)
        }
        guard ok == 1 else { return "md5-failed" }
        return digest.prefix(Int(length)).map { String(format: "%02x", $0) }.joined()
    }
}
