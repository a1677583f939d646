/// The views and triggers that use a column ALTER TABLE renames or drops. SQLite checks them
/// after the change and refuses a drop that breaks one ("error in view v after drop column:
/// no such column: c"); a rename it rewrites them for, which this engine does not do for
/// columns yet, so it refuses a rename that would leave one naming the old column instead of
/// letting the view or trigger fail later.
extension SQLDatabase {
    enum ColumnChange {
        case rename, drop

        var words: String { self == .rename ? "rename" : "drop column" }
    }

    /// Checks, with the change applied (the statement's undo restores it when this throws),
    /// that every view still compiles and that no trigger's text names `column` where it may
    /// mean the changed table's column. For a drop, as SQLite: the table's own triggers (a
    /// trigger of another table that names the column is left to fail when it runs, as there).
    /// For a rename: those, and any trigger whose text also names the table.
    /// - Throws: `SQLExecutionError` "error in view v after drop column: ..." or "error in
    ///   trigger t after drop column: no such column: c" for a drop; `DAOError.unsupported` for
    ///   a rename.
    func checkDependents(of table: TableState, column: String, _ change: ColumnChange) throws {
        // The table's CHECK constraints (its definition now holds the change): SQLite rewrites
        // them on a rename, which this engine does not; a drop of a column one uses fails.
        let checkColumn = column.lowercased()
        for check in table.definition.checks {
            guard let tokens = try? Lexer.tokenize(check.text),
                  tokens.contains(where: { ($0.kind == .identifier || $0.kind == .quotedIdentifier) && $0.text.lowercased() == checkColumn }) else { continue }
            if change == .rename { throw DAOError.unsupported("RENAME COLUMN of a column a CHECK constraint uses") }
            throw SQLExecutionError("error in table \(table.name) after drop column: no such column: \(column)")
        }
        for view in (views.values.sorted { $0.name < $1.name } + tempViews.values.sorted { $0.name < $1.name }) {
            do {
                _ = try compileSelect(view.select)
            } catch {
                if change == .rename { throw DAOError.unsupported("RENAME COLUMN of a column that view \(view.name) uses") }
                throw SQLExecutionError("error in view \(view.name) after \(change.words): \(Self.message(of: error))")
            }
        }
        let columnName = column.lowercased(), tableName = table.name.lowercased()
        for owner in tables.values.sorted(by: { $0.name.lowercased() < $1.name.lowercased() }) where owner === table || change == .rename {
            for trigger in owner.triggers {
                guard let tokens = try? Lexer.tokenize(trigger.sql) else { continue }
                let isName = { (token: Token) in token.kind == .identifier || token.kind == .quotedIdentifier }
                guard let use = tokens.indices.first(where: { isName(tokens[$0]) && tokens[$0].text.lowercased() == columnName }) else { continue }
                if change == .rename {
                    guard owner === table || tokens.contains(where: { isName($0) && $0.text.lowercased() == tableName }) else { continue }
                    throw DAOError.unsupported("RENAME COLUMN of a column that trigger \(trigger.name) may use")
                }
                // SQLite names the reference as written: `new.c`, `old.c` or `c`.
                let qualified = use >= 2 && tokens[use - 1].kind == .symbol && tokens[use - 1].text == "." && isName(tokens[use - 2])
                let reference = qualified ? "\(tokens[use - 2].text).\(tokens[use].text)" : tokens[use].text
                throw SQLExecutionError("error in trigger \(trigger.name) after drop column: no such column: \(reference)")
            }
        }
    }

    /// An error's text as SQLite would print it.
    private static func message(of error: any Error) -> String {
        switch error {
        case let error as SQLExecutionError: return error.message
        case DAOError.noSuchColumn(let name): return "no such column: \(name)"
        case DAOError.noSuchTable(let name): return "no such table: \(name)"
        default: return "\(error)"
        }
    }
}
