/// SQLite's schema tables, read-only: `sqlite_master` (also `sqlite_schema`) with a row per
/// table, index, view and trigger (`type, name, tbl_name, rootpage, sql`), `sqlite_temp_master`
/// (`sqlite_temp_schema`) for TEMP tables and views, and `sqlite_sequence` (`name, seq`) for
/// the AUTOINCREMENT tables that gave out a rowid. Apps and frameworks ask them whether a table
/// exists (Room's open check, FMDB's `tableExists`); they are answered as views made from the
/// catalog, so every query form works on them.
///
/// What differs from SQLite: `sql` is the catalog's canonical text (`CREATE TABLE "t" ("a"
/// INTEGER)`, FORMAT.md) rather than the text as written; rows come in name order, not
/// creation order; `rootpage` is a number from 2 up for tables and indexes, in the order listed
/// (there are no pages; code that tells a real table from a view by it still can), 0 for views
/// and triggers as in SQLite; the indexes of constraints are named
/// `sqlite_autoindex_<table>_pk`, `_u<i>`, `_c<k>` (SQLite numbers them `_1`, `_2`, ...).
extension SQLDatabase {
    static let schemaColumns = ["type", "name", "tbl_name", "rootpage", "sql"]

    /// The schema table `key` (lower-cased) as a view, or nil when `key` names none.
    /// - Throws: `SQLExecutionError` if the made text does not parse (not expected).
    func schemaTable(named key: String) throws -> ViewDefinition? {
        var rows: [[String]]
        let columns: [String]
        switch key {
        case "sqlite_master", "sqlite_schema":
            rows = schemaRows(tables.values, views.values, temporary: false)
            columns = Self.schemaColumns
        case "sqlite_temp_master", "sqlite_temp_schema":
            rows = schemaRows(temporaryTables.values, tempViews.values, temporary: true)
            // TEMP triggers of the main tables are in the temp schema, as in SQLite.
            for table in tables.values.sorted(by: { $0.name.lowercased() < $1.name.lowercased() }) {
                for trigger in table.triggers where trigger.temporary {
                    rows.append(["'trigger'", Self.literal(trigger.name), Self.literal(table.definition.name), "0", Self.literal(trigger.sql)])
                }
            }
            columns = Self.schemaColumns
        case "sqlite_sequence":
            sequenceViewVersion = schemaVersion
            rows = tables.values.filter { $0.definition.autoincrement && $0.sequence > 0 }
                .sorted { $0.name.lowercased() < $1.name.lowercased() }
                .map { [Self.literal($0.name), String($0.sequence)] }
            columns = ["name", "seq"]
        default:
            return nil
        }
        // One SELECT of literals per row, joined by UNION ALL; none: a SELECT of NULLs that
        // keeps no row.
        let text = rows.isEmpty
            ? "SELECT " + columns.map { _ in "NULL" }.joined(separator: ", ") + " WHERE 0"
            : rows.map { "SELECT " + $0.joined(separator: ", ") }.joined(separator: " UNION ALL ")
        guard case .select(let select) = try Parser.parse(text).0 else {
            throw SQLExecutionError("\(key): could not be made from the catalog")
        }
        return ViewDefinition(name: key, columns: columns, select: select, text: text)
    }

    /// `UPDATE sqlite_sequence SET seq = ... [WHERE ...]` and `DELETE FROM sqlite_sequence
    /// [WHERE ...]`, the way apps reset an AUTOINCREMENT table's numbers: the rows the WHERE
    /// clause picks get the new `seq` (a delete: 0, so the next rowid is the largest one in the
    /// table plus one, as in SQLite after its row is gone). Undone with the statement.
    /// - Returns: nil when `table` is not `sqlite_sequence`; otherwise the change count.
    /// - Throws: `SQLExecutionError` when a new `seq` is not an integer; the WHERE clause's errors.
    func writeSequences(_ table: String, assignments: [(String, Expr)]?, whereClause: Expr?, _ context: RowContext) throws -> SQLResult? {
        // Every UPDATE and DELETE asks: the length first, so the others lower-case nothing.
        guard table.utf8.count == 15, table.lowercased() == "sqlite_sequence" else { return nil }
        var newValue: Expr = .literal(.integer(0))
        if let assignments {
            for (name, expr) in assignments {
                switch name.lowercased() {
                case "seq": newValue = expr
                case "name": throw DAOError.unsupported("UPDATE of sqlite_sequence.name")
                default: throw DAOError.noSuchColumn(name)
                }
            }
        }
        let picked = SelectStatement(distinct: false,
                                     columns: [ResultColumn(kind: .expression(.column(table: nil, name: "name")), alias: nil, text: "name"),
                                               ResultColumn(kind: .expression(newValue), alias: nil, text: "seq")],
                                     table: "sqlite_sequence", tableAlias: nil, whereClause: whereClause, groupBy: [], having: nil,
                                     orderBy: [], limit: nil, offset: nil)
        let rows = try runSelect(picked, context).values
        for row in rows {
            guard case .text(let name) = DAOValue(row[0]), let state = tables[name.lowercased()] else { continue }
            guard case .integer(let sequence) = SQLValues.apply(.integer, to: row[1]) else {
                throw SQLExecutionError("sqlite_sequence.seq: not an integer")
            }
            setSequence(of: state, to: sequence)
        }
        return SQLResult(changes: rows.count, lastInsertRowId: lastInsertRowIdValue)
    }

    /// Sets an AUTOINCREMENT table's sequence with the running statement: its catalog record
    /// is written at commit, the statement's undo puts the old value back.
    func setSequence(of table: TableState, to sequence: Int64) {
        let old = table.sequence
        table.sequence = sequence
        dirtyCatalog.insert(table.name.lowercased())
        undoLog.append(.action { [unowned self, unowned table] in
            table.sequence = old
            self.sequenceMoved()
        })
        sequenceMoved()
    }

    /// After an AUTOINCREMENT sequence moved: statements compiled with `sqlite_sequence`'s rows
    /// as they were (since the last schema change) are compiled again. Costs nothing while
    /// nobody reads the table: the schema version moves at most once per reading.
    func sequenceMoved() {
        guard sequenceViewVersion == schemaVersion else { return }
        sequenceViewVersion = nil
        schemaVersion += 1
    }

    /// The rows of `sqlite_master` for these tables and views, as SQL literals.
    private func schemaRows(_ tables: some Collection<TableState>, _ views: some Collection<ViewDefinition>, temporary: Bool) -> [[String]] {
        var rows: [[String]] = []
        var page = 1
        func nextPage() -> String {
            page += 1
            return String(page)
        }
        // SQLite makes the table `sqlite_sequence` with the first AUTOINCREMENT table.
        if tables.contains(where: { $0.definition.autoincrement && !$0.isTransient }) {
            rows.append(["'table'", "'sqlite_sequence'", "'sqlite_sequence'", nextPage(), "'CREATE TABLE sqlite_sequence(name,seq)'"])
        }
        for table in tables.sorted(by: { $0.name.lowercased() < $1.name.lowercased() }) {
            let definition = table.definition
            let name = Self.literal(definition.name)
            rows.append(["'table'", name, name, nextPage(), Self.literal(definition.createSQL)])
            for index in definition.indexes {
                rows.append(["'index'", Self.literal(index.name), name, nextPage(),
                             index.isConstraint ? "NULL" : Self.literal(definition.createIndexSQL(index))])
            }
            for trigger in table.triggers where trigger.temporary == temporary {
                rows.append(["'trigger'", Self.literal(trigger.name), name, "0", Self.literal(trigger.sql)])
            }
        }
        for view in views.sorted(by: { $0.name.lowercased() < $1.name.lowercased() }) {
            let name = Self.literal(view.name)
            rows.append(["'view'", name, name, "0", Self.literal(view.text)])
        }
        return rows
    }

    /// `text` as an SQL string literal.
    private static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
