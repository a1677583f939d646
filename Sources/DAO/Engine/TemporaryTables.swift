/// TEMP tables (`CREATE TEMP TABLE`): tables that live in memory for the SQLDatabase's
/// lifetime (until its store closes) and are never written to the store or its catalog. Their
/// rows stay in the table's overlay (`TableState.isTransient`), which commits skip; statements
/// on them are atomic like any other (the undo log restores the overlay), and a TEMP table
/// hides a stored table of the same name, as SQLite's temp schema does.
extension SQLDatabase {
    /// CREATE TEMP TABLE.
    /// - Throws: "table x already exists" when a TEMP table has that name (a stored table of
    ///   the same name is allowed, as in SQLite); what CREATE TABLE throws for its columns.
    func createTemporaryTable(_ statement: CreateTableStatement) throws {
        let key = statement.name.lowercased()
        if temporaryTables[key] != nil {
            if statement.ifNotExists { return }
            throw SQLExecutionError("table \(statement.name) already exists")
        }
        if key.hasPrefix("sqlite_") { throw SQLExecutionError("object name reserved for internal use: \(statement.name)") }
        if statement.columns.contains(where: \.autoincrement) { throw DAOError.unsupported("AUTOINCREMENT in a TEMP table") }
        let table = TableState(definition: try TableDefinition(statement), space: try catalogKeySpace(), spaceName: "")
        table.isTransient = true
        temporaryTables[key] = table
        schemaVersion += 1
        undoLog.append(.action { [unowned self] in
            self.temporaryTables[key] = nil
            self.schemaVersion += 1
        })
    }

    /// DROP TABLE of a TEMP table; false when there is none of that name.
    func dropTemporaryTable(_ key: String) -> Bool {
        guard let table = temporaryTables[key] else { return false }
        temporaryTables[key] = nil
        schemaVersion += 1
        undoLog.append(.action { [unowned self] in
            self.temporaryTables[key] = table
            self.schemaVersion += 1
        })
        return true
    }

    /// ALTER TABLE is refused on a TEMP table (it would otherwise reach a stored table of the
    /// same name).
    func refuseTemporary(_ name: String) throws {
        if temporaryTables[name.lowercased()] != nil { throw DAOError.unsupported("ALTER TABLE on a TEMP table") }
    }
}
