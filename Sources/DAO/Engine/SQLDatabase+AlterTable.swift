import LogStore

/// ALTER TABLE ... RENAME COLUMN and ALTER TABLE ... DROP COLUMN, with SQLite 3.40's rules and
/// messages (its alter.c). ADD COLUMN and RENAME TO are in SQLDatabase+Schema.swift.
///
/// Rows are stored by column position (RowCodec), so a rename only changes the definition (the
/// catalog's CREATE TABLE and CREATE INDEX texts name columns, and are rewritten at commit),
/// while a drop rewrites every row without the dropped value, as SQLite does. The rewritten
/// rows go into the transaction's write batch with the new catalog record: one atomic write,
/// so a crash leaves the table wholly as it was or wholly altered (no catalog format change).
extension SQLDatabase {
    /// ALTER TABLE `tableName` RENAME [COLUMN] `from` TO `to`.
    /// - Throws: `DAOError.noSuchTable`, `DAOError.noSuchColumn` (SQLite: `no such column: "a"`),
    ///   `SQLExecutionError` for a name another column has. Indexes and PRIMARY KEY / UNIQUE
    ///   constraints that name the column follow it (they refer to columns by position).
    /// - Complexity: O(columns + indexes); no row is read or written.
    func renameColumn(_ tableName: String, _ from: String, to: String) throws {
        let table = try self.table(named: tableName)
        guard let position = table.definition.columnIndex(from) else { throw DAOError.noSuchColumn("\"\(from)\"") }
        if let other = table.definition.columnIndex(to), other != position {
            throw SQLExecutionError("error in table \(table.name) after rename: duplicate column name: \(to.lowercased())")
        }
        let oldDefinition = table.definition
        let oldName = table.definition.columns[position].name
        func renamed(_ columns: [IndexedColumn]) -> [IndexedColumn] {
            columns.map { column in
                var column = column
                if column.name.lowercased() == oldName.lowercased() { column.name = to }
                return column
            }
        }
        table.definition.columns[position].name = to
        table.definition.primaryKey = table.definition.primaryKey.map(renamed)
        table.definition.uniques = table.definition.uniques.map(renamed)
        func renamedNames(_ names: [String]) -> [String] { names.map { $0.lowercased() == oldName.lowercased() ? to : $0 } }
        for index in table.definition.foreignKeys.indices {
            table.definition.foreignKeys[index].columns = renamedNames(table.definition.foreignKeys[index].columns)
        }
        for index in table.definition.checks.indices where table.definition.checks[index].column?.lowercased() == oldName.lowercased() {
            table.definition.checks[index].column = to
        }
        // Foreign keys of any table naming this one's column as their parent column follow it,
        // as in SQLite (the table's own, when it refers to itself, included).
        let parentKey = table.name.lowercased()
        var referring: [(TableState, TableDefinition)] = []
        for other in tables.values where other.definition.foreignKeys.contains(where: { $0.parent.lowercased() == parentKey && $0.parentColumns != nil }) {
            referring.append((other, other === table ? oldDefinition : other.definition))
            for index in other.definition.foreignKeys.indices where other.definition.foreignKeys[index].parent.lowercased() == parentKey {
                other.definition.foreignKeys[index].parentColumns = other.definition.foreignKeys[index].parentColumns.map(renamedNames)
            }
        }
        changeSchema([table.name] + referring.map(\.0.name)) { [unowned table] in
            for (other, definition) in referring where other !== table { other.definition = definition }
            table.definition = oldDefinition
        }
        try checkDependents(of: table, column: oldName, .rename)
    }

    /// ALTER TABLE `tableName` DROP [COLUMN] `name`: removes the column and rewrites every row
    /// without it (added columns' defaults are stored as values, as SQLite's rewrite does).
    /// - Throws: `DAOError.noSuchTable`, `DAOError.noSuchColumn`; `SQLExecutionError` with
    ///   SQLite's message when the column is in the PRIMARY KEY, has a UNIQUE constraint, is the
    ///   only column, or is named by a table UNIQUE constraint or an index.
    ///   Nothing changes when it throws.
    /// - Complexity: O(rows × columns); the rewritten rows are held in memory until the commit
    ///   writes them (like any statement's pending rows).
    func dropColumn(_ tableName: String, _ name: String) throws {
        let table = try self.table(named: tableName)
        let definition = table.definition
        guard let position = definition.columnIndex(name) else { throw DAOError.noSuchColumn("\"\(name)\"") }
        let column = definition.columns[position].name
        let lowered = column.lowercased()
        let inPrimaryKey = definition.columnPrimaryKey == position
            || definition.primaryKey?.contains { $0.name.lowercased() == lowered } == true
        if inPrimaryKey || definition.columnUnique[position] {
            throw SQLExecutionError("cannot drop \(inPrimaryKey ? "PRIMARY KEY" : "UNIQUE") column: \"\(column)\"")
        }
        if definition.columns.count <= 1 {
            throw SQLExecutionError("cannot drop column \"\(column)\": no other columns exist")
        }
        if definition.uniques.contains(where: { $0.contains { $0.name.lowercased() == lowered } }) {
            throw SQLExecutionError("error in table \(table.name) after drop column: no such column: \(column)")
        }
        if let index = definition.indexes.first(where: { !$0.isConstraint && $0.columns.contains(position) }) {
            throw SQLExecutionError("error in index \(index.name) after drop column: no such column: \(column)")
        }

        // The rows without the column, read with the old definition (rowid alias and added
        // columns' defaults filled in) before it changes.
        let newDefinition: TableDefinition
        do {
            newDefinition = try Self.definition(definition, dropping: position)
        } catch let error as SQLExecutionError where !error.message.hasPrefix("error in table") {
            // A FOREIGN KEY naming the column: SQLite's message.
            throw SQLExecutionError("error in table \(table.name) after drop column: \(error.message)")
        }
        guard table.indexes.count == newDefinition.indexes.count else {
            throw SQLExecutionError("error in table \(table.name) after drop column: \(table.indexes.count) indexes, \(newDefinition.indexes.count) in its definition")
        }
        var rewritten: [(Int64, [UInt8])] = []
        rewritten.reserveCapacity(table.rowids.count)
        for rowid in allRowids(table) {
            guard var values = try row(table, rowid) else { continue }
            values.remove(at: position)
            rewritten.append((rowid, RowCodec.encode(values, skipping: newDefinition.rowidColumn)))
        }

        let oldSlots = table.overlay.slots
        let oldIndexes = table.indexes
        for (rowid, bytes) in rewritten { table.overlay.set(rowid, bytes: bytes) }
        markDirty(table)
        table.definition = newDefinition
        // Index entries hold values, not positions: only their schemas change (same order).
        for i in table.indexes.indices { table.indexes[i].schema = newDefinition.indexes[i] }
        changeSchema([table.name]) { [unowned table] in
            table.definition = definition
            table.indexes = oldIndexes
            table.overlay.slots = oldSlots
        }
        try checkDependents(of: table, column: column, .drop)
    }

    /// `definition` without column `position` (which no key or index names), as the catalog
    /// will read it back: its CREATE TABLE text parsed again (constraint index names follow
    /// column positions), then its explicit indexes with later positions shifted down by one.
    /// - Throws: `SQLExecutionError` if the text does not parse back (not expected).
    static func definition(_ definition: TableDefinition, dropping position: Int) throws -> TableDefinition {
        var shortened = definition
        shortened.columns.remove(at: position)
        shortened.columnUnique.remove(at: position)
        if position < shortened.columnUniqueConflicts.count { shortened.columnUniqueConflicts.remove(at: position) }
        shortened.columnPrimaryKey = definition.columnPrimaryKey.map { $0 > position ? $0 - 1 : $0 }
        guard case .createTable(let create) = try Parser.parse(shortened.createSQL).0 else {
            throw SQLExecutionError("error in table \(definition.name) after drop column")
        }
        var result = try TableDefinition(create)
        for var index in definition.indexes where !index.isConstraint {
            index.columns = index.columns.map { $0 > position ? $0 - 1 : $0 }
            result.indexes.append(index)
        }
        guard result.indexes.count == definition.indexes.count else {
            throw SQLExecutionError("error in table \(definition.name) after drop column")
        }
        return result
    }
}
