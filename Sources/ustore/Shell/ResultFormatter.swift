import Foundation
import UnifiedStorage

/// How the shell prints a query's rows (`.mode`).
enum OutputMode: String, CaseIterable {
    /// A table drawn with box characters, column names on top (sqlite3's `.mode box`).
    case box
    /// Columns padded to their widths, names underlined with dashes when headers are on.
    case column
    /// RFC 4180 comma-separated values, a row of names first when headers are on.
    case csv
    /// A JSON array of objects, one per row (blobs as `{"blob":"<base64>"}`).
    case json
    /// One `name = value` line per column, a blank line between rows.
    case line
    /// Values separated by `|`, names first when headers are on (sqlite3's default).
    case list
}

/// Renders query results as text in the shell's output modes.
enum ResultFormatter {
    /// The lines of `result` (a query's columns and rows) in `mode`; `headers` applies to the
    /// modes where names are optional (column, csv, list).
    static func render(_ result: SQLResult, mode: OutputMode, headers: Bool) -> [String] {
        let columns = result.columns
        let rows = result.rows.map { $0.map(displayText) }
        switch mode {
        case .box: return box(columns, rows)
        case .column: return column(columns, rows, headers: headers)
        case .csv:
            let body = rows.map { $0.map(csvField).joined(separator: ",") }
            return (headers ? [columns.map(csvField).joined(separator: ",")] : []) + body
        case .list:
            let body = rows.map { $0.joined(separator: "|") }
            return (headers ? [columns.joined(separator: "|")] : []) + body
        case .json:
            guard !result.rows.isEmpty else { return [] }
            let objects = result.rows.map { row in
                JSON.orderedObject(keys: uniqueNames(columns),
                                   members: Dictionary(zip(uniqueNames(columns), row.map(JSON.sqlValue)), uniquingKeysWith: { first, _ in first }))
                    .text
            }
            return ["[" + objects.joined(separator: ",\n") + "]"]
        case .line:
            let width = columns.map(\.count).max() ?? 0
            var lines: [String] = []
            for (index, row) in rows.enumerated() {
                if index > 0 { lines.append("") }
                for (name, value) in zip(columns, row) {
                    lines.append(String(repeating: " ", count: width - name.count) + name + " = " + value)
                }
            }
            return lines
        }
    }

    /// A value as the display modes show it: NULL as an empty field, reals as SQLite prints
    /// them (`2.0`, `0.5`), blobs as `x'hex'`.
    static func displayText(_ value: DAOValue) -> String {
        switch value {
        case .null: return ""
        case .integer(let v): return String(v)
        case .real(let v): return String(v)
        case .text(let v): return v
        case .blob(let v): return "x'" + v.map { String($0, radix: 16).leftPadded(to: 2, with: "0") }.joined() + "'"
        }
    }

    private static func box(_ columns: [String], _ rows: [[String]]) -> [String] {
        let widths = columnWidths(columns, rows, headers: true)
        func rule(_ left: String, _ middle: String, _ right: String) -> String {
            left + widths.map { String(repeating: "─", count: $0 + 2) }.joined(separator: middle) + right
        }
        func line(_ cells: [String]) -> String {
            "│" + zip(cells, widths).map { " " + $0.rightPadded(to: $1) + " " }.joined(separator: "│") + "│"
        }
        return [rule("┌", "┬", "┐"), line(columns), rule("├", "┼", "┤")] + rows.map(line) + [rule("└", "┴", "┘")]
    }

    private static func column(_ columns: [String], _ rows: [[String]], headers: Bool) -> [String] {
        let widths = columnWidths(columns, rows, headers: headers)
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { $0.rightPadded(to: $1) }.joined(separator: "  ").trimmingTrailingWhitespace()
        }
        let head = headers ? [line(columns), widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")] : []
        return head + rows.map(line)
    }

    private static func columnWidths(_ columns: [String], _ rows: [[String]], headers: Bool) -> [Int] {
        columns.indices.map { index in
            let cells = rows.map { $0[index].count }.max() ?? 0
            return max(cells, headers ? columns[index].count : 0)
        }
    }

    private static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Column names made unique (`a`, `a:1`, ...) so no JSON member is lost.
    private static func uniqueNames(_ columns: [String]) -> [String] {
        var seen: [String: Int] = [:]
        return columns.map { name in
            let count = seen[name, default: 0]
            seen[name] = count + 1
            return count == 0 ? name : "\(name):\(count)"
        }
    }
}

extension String {
    /// The string followed by spaces up to `width` characters.
    func rightPadded(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }

    /// The string preceded by `pad` up to `width` characters.
    func leftPadded(to width: Int, with pad: Character) -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}
