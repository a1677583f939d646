import Foundation
import UnifiedStorage

/// The JSON lines of `ustore sql`, members in the documented order ("ok" first).
extension JSON {
    /// `{"ok":true,"rows":[...]}` for a query, `{"ok":true,"changes":N,"lastInsertRowId":M}`
    /// for any other statement.
    static func sqlResult(_ result: SQLResult) -> JSON {
        if result.isQuery {
            let rows = result.rows.enumerated().map { r, row in
                JSON.array(row.enumerated().map { c, value in
                    // A repaired text (it holds U+FFFD): its exact bytes when they differ.
                    if case .text(let text) = value, text.unicodeScalars.contains("\u{FFFD}"),
                       let bytes = result.textBytes(row: r, column: c), !bytes.elementsEqual(text.utf8) {
                        return .object(["text": .string(KeyBytes.base64(bytes))])
                    }
                    return JSON.sqlValue(value)
                })
            }
            return .ordered(["ok": .bool(true), "rows": .array(rows)])
        }
        return .ordered(["ok": .bool(true), "changes": .int(result.changes), "lastInsertRowId": .integer(result.lastInsertRowId)])
    }

    /// One SQL value: integer, real (always with a point or exponent), string, null, or
    /// `{"blob":"<base64>"}`. (`sqlResult` writes a text that is not valid UTF-8 as
    /// `{"text":"<base64>"}`.)
    static func sqlValue(_ value: DAOValue) -> JSON {
        switch value {
        case .null: return .null
        case .integer(let v): return .integer(v)
        case .real(let v): return .real(v)
        case .text(let v): return .string(v)
        case .blob(let v): return .object(["blob": .string(KeyBytes.base64(v))])
        }
    }

    /// `{"ok":false,"error":"..."}`.
    static func sqlError(_ error: Error) -> JSON {
        .ordered(["ok": .bool(false), "error": .string(sqlErrorText(error))])
    }

    /// A one-line message for a statement's error.
    static func sqlErrorText(_ error: Error) -> String {
        switch error {
        case DAOError.unsupported(let what): return "unsupported: \(what)"
        case DAOError.syntax(let message, let line, let column): return "syntax error at line \(line), column \(column): \(message)"
        case DAOError.constraint(let message): return message
        case DAOError.noSuchTable(let name): return "no such table: \(name)"
        case DAOError.noSuchColumn(let name): return "no such column: \(name)"
        default: return describe(error)
        }
    }
}
