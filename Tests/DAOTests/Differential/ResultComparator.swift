@testable import DAO

/// Compares two engines' outcomes for one statement under its `Comparison`; returns why they
/// differ, or nil when they agree.
enum ResultComparator {
    static func difference(_ reference: Outcome, _ candidate: Outcome, _ comparison: Comparison, sql: String,
                           looseColumns: Set<Int> = [], evaluatesNoRow: Bool = false) -> String? {
        if KnownVersionDifference.summation(reference, candidate, sql: sql) { return nil }
        if limitedQuery(comparison), !evaluatesNoRow, overflowOnOneSide(reference, candidate) {
            // With LIMIT, which rows get evaluated (and so whether a row that overflows, like
            // abs(-9223372036854775808), is reached) depends on an order the statement leaves open.
            return nil
        }
        switch (reference, candidate) {
        case (.failed, .failed):
            return nil
        case (.failed(let message), _):
            return "SQLite fails (\(message)), ours succeeds"
        case (_, .failed(let message)):
            return "SQLite succeeds, ours fails (\(message))"
        case (.wrote(let c1, let r1), .wrote(let c2, let r2)):
            let keyword = sql.prefix { $0.isLetter }.uppercased()
            guard keyword == "INSERT" || keyword == "REPLACE" || keyword == "UPDATE" || keyword == "DELETE" else { return nil }
            if c1 != c2 { return "changes: SQLite \(c1), ours \(c2)" }
            // last_insert_rowid only where this statement set it.
            if (keyword == "INSERT" || keyword == "REPLACE"), c1 > 0, r1 != r2 { return "lastInsertRowId: SQLite \(r1), ours \(r2)" }
            return nil
        case (.rows(let expected), .rows(let actual)):
            return rowsDifference(expected, actual, comparison, looseColumns: looseColumns)
        default:
            return "different kinds of outcome"
        }
    }

    static func limitedQuery(_ comparison: Comparison) -> Bool {
        switch comparison {
        case .countOnly, .orderedGroups(_, cut: true, _): return true
        default: return false
        }
    }

    static func overflowOnOneSide(_ a: Outcome, _ b: Outcome) -> Bool {
        switch (a, b) {
        case (.failed(let message), .rows), (.rows, .failed(let message)): return message.lowercased().contains("overflow")
        default: return false
        }
    }

    static func rowsDifference(_ expected: [[SQLValue]], _ actual: [[SQLValue]], _ comparison: Comparison,
                               looseColumns: Set<Int> = []) -> String? {
        func key(_ row: [SQLValue]) -> String {
            row.enumerated().map { looseColumns.contains($0.offset) ? sortKey($0.element) : Canonical.key($0.element) }.joined(separator: "|")
        }
        func sameMultiset(_ a: [[SQLValue]], _ b: [[SQLValue]]) -> Bool { a.map(key).sorted() == b.map(key).sorted() }
        if expected.count != actual.count { return "row count: SQLite \(expected.count), ours \(actual.count)" }
        switch comparison {
        case .write, .multiset:
            return sameMultiset(expected, actual) ? nil : "rows differ (as multisets)"
        case .countOnly:
            return nil
        case .orderedGroups(let keys, let cut, let foldedTexts):
            let g1 = groups(expected, keys, foldedTexts: foldedTexts), g2 = groups(actual, keys, foldedTexts: foldedTexts)
            if g1.map(\.key) != g2.map(\.key) { return "order differs (ORDER BY keys in a different sequence)" }
            for (index, (a, b)) in zip(g1, g2).enumerated() {
                if a.rows.count != b.rows.count { return "order differs (group \(index) size)" }
                let edge = index == 0 || index == g1.count - 1
                if cut && edge { continue }
                if !sameMultiset(a.rows, b.rows) { return "rows differ within ORDER BY group \(index)" }
            }
            return nil
        }
    }

    static func sameMultiset(_ a: [[SQLValue]], _ b: [[SQLValue]]) -> Bool {
        a.map(Canonical.key).sorted() == b.map(Canonical.key).sorted()
    }

    /// A spelling equal for values ORDER BY treats as equal (0 and -0.0 and 0.0, 3 and 3.0),
    /// so ties of different storage classes fall into one group; rows inside a group are still
    /// compared exactly.
    static func sortKey(_ value: SQLValue) -> String {
        switch value {
        case .integer(let i): return "n\(i)"
        case .real(let d):
            if let exact = Int64(exactly: d) { return "n\(exact)" }
            return Canonical.key(value)
        default: return Canonical.key(value)
        }
    }

    /// Consecutive rows with equal ORDER BY key values.
    /// `foldedTexts`: a text's key is the same for its NOCASE and RTRIM equals (groups coarser
    /// than any collation makes; rows inside a group are still compared exactly).
    static func groups(_ rows: [[SQLValue]], _ keys: [Int], foldedTexts: Bool = false) -> [(key: String, rows: [[SQLValue]])] {
        func key(_ value: SQLValue) -> String {
            guard foldedTexts else { return sortKey(value) }
            return sortKey(Collation.nocase.fold(Collation.rtrim.fold(value)))
        }
        var result: [(key: String, rows: [[SQLValue]])] = []
        for row in rows {
            let key = keys.map { $0 < row.count ? key(row[$0]) : "?" }.joined(separator: "|")
            if let last = result.last, last.key == key {
                result[result.count - 1].rows.append(row)
            } else {
                result.append((key, [row]))
            }
        }
        return result
    }
}
