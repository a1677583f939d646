import Foundation
import LogStore

extension SQLDatabase {
    // MARK: Loading

    /// The key space registered under `name`, if any, read from the engine's `space/<name>`
    /// record (FORMAT.md "The engine's key space") without registering it. O(1), where
    /// `namedSpaces()` reads every key of the store.
    func existingSpace(named name: String) throws -> LogStore.KeySpace? {
        guard let value = try store.get(forKey: Array("space/\(name)".utf8), space: 0xFFFF_FFFF), value.count == 4 else { return nil }
        return LogStore.KeySpace(value[0]) | LogStore.KeySpace(value[1]) << 8 | LogStore.KeySpace(value[2]) << 16 | LogStore.KeySpace(value[3]) << 24
    }

    /// Reads the catalog, then the rows of every table in one sequential pass over the store's
    /// records, building rowid orders and indexes (rows are not kept: statements read them
    /// through the keydir).
    func loadCatalog() throws {
        guard let space = try existingSpace(named: "dao.catalog") else { return }
        catalogSpace = space
        var loaders: [LogStore.KeySpace: TableLoader] = [:]
        // A current checkpoint names the tables: their catalog records are read by key, not
        // by walking the store's whole keydir.
        let checkpoint = try readCheckpoint()
        var catalogRecords: [(key: [UInt8], value: [UInt8])] = []
        if let checkpoint {
            for part in checkpoint.tables {
                let key = Array(part.name.utf8)
                guard let value = try store.get(forKey: key, space: space) else { catalogRecords = []; break }
                catalogRecords.append((key, value))
            }
        }
        if checkpoint == nil || catalogRecords.count != checkpoint?.tables.count {
            catalogRecords = try store.entries(space: space)
        }
        try loadViews(space: space)
        for (key, value) in catalogRecords where key != SchemaVersionRecord.key && key != ViewCatalog.key {
            let name = String(decoding: key, as: UTF8.self)
            let record = try CatalogCodec.decode(value, name: name)
            guard let createText = record.statements.first,
                  case .createTable(let create) = try Parser.parse(createText).0 else {
                throw StoreError.corrupt("DAO catalog record of table \(name): no CREATE TABLE")
            }
            var definition = try TableDefinition(create)
            var triggers: [CreateTriggerStatement] = []
            for text in record.statements.dropFirst() {
                let parsed = try Parser.parse(text).0
                if case .createTrigger(let trigger) = parsed, value.first == CatalogCodec.formatWithTriggers {   // Triggers.swift
                    triggers.append(trigger)
                    continue
                }
                guard triggers.isEmpty, case .createIndex(let index) = parsed else {
                    throw StoreError.corrupt("DAO catalog record of table \(name): not a CREATE INDEX: \(text)")
                }
                definition.indexes.append(try indexSchema(index, definition))
            }
            let table = TableState(definition: definition, space: record.space, spaceName: "")
            table.sequence = record.sequence
            table.triggers = triggers
            tables[name] = table
            loaders[record.space] = TableLoader(table: table)
        }
        if let checkpoint, applyCheckpoint(checkpoint) { return }
        try loadRows(into: loaders)
    }

    /// Builds each loader's table (rowid order and indexes) from its rows in one pass over the
    /// store's records, then its pending rows (`overlay`: a rebuild inside a transaction sees
    /// the transaction's rows; at attach there are none).
    func loadRows(into loaders: [LogStore.KeySpace: TableLoader]) throws {
        guard !loaders.isEmpty else { return }
        for (space, loader) in loaders { loader.expectedRows = try store.keyCount(space: space) }
        // Values stored compressed or encrypted (FORMAT.md record flags 0x08, 0x10, 0x20) are
        // read through `withValue` after the pass.
        var transformed: [(TableLoader, [UInt8])] = []
        try store.forEachRecord { record in
            guard record.isLive, !record.isTombstone, let loader = loaders[record.space] else { return }
            if record.flags & 0x38 != 0 {
                transformed.append((loader, record.key))
            } else if let rowid = RowCodec.rowid(key: record.key), loader.table.overlay.isEmpty || loader.table.overlay[rowid] == nil {
                record.value.withUnsafeBytes { loader.add(rowid: rowid, bytes: $0) }
            }
        }
        for (loader, key) in transformed {
            guard let rowid = RowCodec.rowid(key: key), loader.table.overlay.isEmpty || loader.table.overlay[rowid] == nil else { continue }
            _ = try store.withValue(forKey: key, space: loader.table.space) { loader.add(rowid: rowid, bytes: $0) }
        }
        for loader in loaders.values {
            var cursor = PendingRows.Cursor()
            while try loader.table.overlay.next(&cursor, { rowid, bytes in
                if let bytes { loader.add(rowid: rowid, bytes: bytes) }
            }) {}
            try loader.finish()
        }
    }

    // MARK: DDL

    func indexSchema(_ statement: CreateIndexStatement, _ definition: TableDefinition) throws -> IndexSchema {
        let positions = try statement.columns.map { column -> Int in
            guard let position = definition.columnIndex(column.name) else { throw DAOError.noSuchColumn(column.name) }
            return position
        }
        return IndexSchema(name: statement.name, columns: positions, descending: statement.columns.map(\.descending),
                           unique: statement.unique, isConstraint: false,
                           collations: definition.collations(of: statement.columns, at: positions))
    }

    /// Records a schema change to undo on rollback and to write at commit.
    func changeSchema(_ names: [String], undo: @escaping () -> Void) {
        schemaVersion += 1
        schemaChangePending = true
        for name in names { dirtyCatalog.insert(name.lowercased()) }
        undoLog.append(.action { [unowned self] in
            undo()
            self.schemaVersion += 1
        })
    }

    func createTable(_ statement: CreateTableStatement) throws {
        let key = statement.name.lowercased()
        if views[key] != nil || tempViews[key] != nil { throw SQLExecutionError("view \(statement.name) already exists") }
        if tables[key] != nil || indexNamed(key) != nil {
            if statement.ifNotExists && tables[key] != nil { return }
            throw SQLExecutionError("\(tables[key] != nil ? "table" : "index") \(statement.name) already exists")
        }
        if key.hasPrefix("sqlite_") { throw SQLExecutionError("object name reserved for internal use: \(statement.name)") }
        let definition = try TableDefinition(statement)
        if foreignKeysSetting, !definition.foreignKeys.isEmpty {
            throw DAOError.unsupported("foreign key enforcement (a FOREIGN KEY while PRAGMA foreign_keys is ON)")
        }
        // Spaces of tables dropped in this transaction are not reused: their rows are deleted
        // only by the commit's batch, and statements read rows from the store.
        let used = Set(tables.values.map(\.space)).union(pendingClears.map(\.space))
        var candidate = "dao.table." + key
        var space = try store.space(named: candidate)
        var suffix = 2
        while used.contains(space) {
            candidate = "dao.table.\(key).\(suffix)"
            space = try store.space(named: candidate)
            suffix += 1
        }
        // A table dropped in an earlier commit had its rows deleted in that batch: the space is empty.
        let table = TableState(definition: definition, space: space, spaceName: candidate)
        tables[key] = table
        changeSchema([key]) { [unowned self] in self.tables[key] = nil }
        // A CHECK that names a column the table lacks fails here, as in SQLite (the undo above
        // takes the table away again).
        if !definition.checks.isEmpty { _ = try resolvedChecks(table) }
    }

    func indexNamed(_ name: String) -> (TableState, Int)? {
        let lowered = name.lowercased()
        for table in tables.values {
            if let position = table.indexes.firstIndex(where: { $0.schema.name.lowercased() == lowered }) { return (table, position) }
        }
        return nil
    }

    func createIndex(_ statement: CreateIndexStatement) throws {
        let table = try self.table(named: statement.table)
        if table.isTransient { throw DAOError.unsupported("index on a TEMP table") }
        if indexNamed(statement.name) != nil || tables[statement.name.lowercased()] != nil {
            if statement.ifNotExists { return }
            throw SQLExecutionError("index \(statement.name) already exists")
        }
        let schema = try indexSchema(statement, table.definition)
        var index = IndexState(schema: schema)
        var builder = IndexBuilder(descending: schema.descending, collations: schema.collations)
        for rowid in allRowids(table) {
            guard let row = try row(table, rowid) else { continue }
            builder.add(index.key(of: row), rowid: rowid)
        }
        let order = builder.sortedOrder()
        if schema.unique && builder.hasDuplicateKey(order) {
            throw DAOError.constraint("UNIQUE constraint failed: " + schema.columns.map { "\(table.name).\(table.definition.columns[$0].name)" }.joined(separator: ", "))
        }
        index.entries = builder.chunks(order)
        let oldDefinition = table.definition
        table.indexes.append(index)
        table.definition.indexes.append(schema)
        changeSchema([table.name]) { [unowned table] in
            table.indexes.removeLast()
            table.definition = oldDefinition
        }
    }

    func allRowids(_ table: TableState) -> [Int64] { table.allRowids }

    func dropTable(_ name: String, ifExists: Bool) throws {
        let key = name.lowercased()
        if dropTemporaryTable(key) { return }
        guard let table = tables[key] else {
            if views[key] != nil || tempViews[key] != nil { throw SQLExecutionError("use DROP VIEW to delete view \(name)") }
            if ifExists { return }
            throw DAOError.noSuchTable(name)
        }
        let rowids = allRowids(table) + table.overlay.slots.rowids
        tables[key] = nil
        pendingClears.append((space: table.space, rowids: rowids))
        changeSchema([key]) { [unowned self] in
            self.tables[key] = table
            self.pendingClears.removeLast()
        }
    }

    func dropIndex(_ name: String, ifExists: Bool) throws {
        guard let (table, position) = indexNamed(name) else {
            if ifExists { return }
            throw SQLExecutionError("no such index: \(name)")
        }
        guard !table.indexes[position].schema.isConstraint else {
            throw SQLExecutionError("index associated with UNIQUE or PRIMARY KEY constraint cannot be dropped")
        }
        let removed = table.indexes.remove(at: position)
        let oldDefinition = table.definition
        table.definition.indexes.removeAll { $0.name == removed.schema.name }
        changeSchema([table.name]) { [unowned table] in
            table.indexes.insert(removed, at: position)
            table.definition = oldDefinition
        }
    }

    func addColumn(_ tableName: String, _ column: ColumnDefinition) throws {
        let table = try self.table(named: tableName)
        if table.definition.columnIndex(column.name) != nil { throw SQLExecutionError("duplicate column name: \(column.name)") }
        if column.primaryKey { throw SQLExecutionError("Cannot add a PRIMARY KEY column") }
        if column.unique { throw SQLExecutionError("Cannot add a UNIQUE column") }
        if !column.checks.isEmpty { throw DAOError.unsupported("CHECK in ALTER TABLE ADD COLUMN") }
        if column.references != nil, foreignKeysSetting {
            throw DAOError.unsupported("foreign key enforcement (a FOREIGN KEY while PRAGMA foreign_keys is ON)")
        }
        // The rows already there read the new column as its default (SQLite refuses what they
        // could not read: only when there are rows; the transaction's own count).
        if table.rowids.count > 0 {
            if column.notNull && !Self.hasNonNullDefault(column.defaultValue) {
                throw SQLExecutionError("Cannot add a NOT NULL column with default value NULL")
            }
            if let value = column.defaultValue, !Self.isPlainValue(value) {
                throw SQLExecutionError("Cannot add a column with non-constant default")
            }
        }
        let oldDefinition = table.definition
        table.definition.columns.append(ColumnSchema(name: column.name, typeName: column.typeName,
                                                     affinity: Affinity(declaredType: column.typeName), notNull: column.notNull,
                                                     notNullConflict: column.notNullConflict,
                                                     defaultText: column.defaultText, defaultValue: column.defaultValue,
                                                     collation: column.collation ?? .binary))
        table.definition.columnUnique.append(false)
        table.definition.columnUniqueConflicts.append(nil)
        // The new column's REFERENCES goes after the other columns' (SQLite inserts the column's
        // text after the last column, before the table constraints).
        if let references = column.references {
            table.definition.foreignKeys.insert(references, at: table.definition.foreignKeys.filter(\.onColumn).count)
        }
        changeSchema([table.name]) { [unowned table] in
            table.definition = oldDefinition
        }
    }

    /// Whether a DEFAULT is a value SQLite can read for rows written before the column was
    /// added (`sqlite3ValueFromExpr`): a literal, optionally signed (`-5`, `+5`, `-'5'`, TRUE,
    /// x'01'); not an expression such as `(1+2)` or `CURRENT_TIMESTAMP`.
    static func isPlainValue(_ expr: Expr) -> Bool {
        switch expr {
        case .literal: return true
        case .unary(.negate, let operand), .unary(.plus, let operand): return isPlainValue(operand)
        default: return false
        }
    }

    /// Whether a DEFAULT clause is there and is not a literal NULL.
    static func hasNonNullDefault(_ expr: Expr?) -> Bool {
        guard let expr else { return false }
        if case .literal(.null) = expr { return false }
        return true
    }
}
