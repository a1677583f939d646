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

    /// Reads the catalog and every table's rows, building rowid orders and indexes, in one
    /// sequential pass over the store's records.
    func loadCatalog() throws {
        guard let space = try existingSpace(named: "dao.catalog") else { return }
        catalogSpace = space
        // One pass: catalog records, and rows of the library's key spaces (2^31 and up) by
        // space; those of spaces no table owns are dropped afterwards.
        var catalogRecords: [([UInt8], [UInt8])] = []
        var bySpace: [LogStore.KeySpace: [StoredRow]] = [:]
        var transformed: [(LogStore.KeySpace, [UInt8])] = []
        try store.forEachRecord { record in
            guard record.isLive, !record.isTombstone, record.space >= 0x8000_0000, record.space != 0xFFFF_FFFF else { return }
            // Values stored compressed or encrypted (FORMAT.md record flags 0x08, 0x10, 0x20) are
            // read through `get` after the pass.
            if record.flags & 0x38 != 0 {
                transformed.append((record.space, record.key))
            } else if record.space == space {
                catalogRecords.append((record.key, record.value))
            } else if let rowid = RowCodec.rowid(key: record.key) {
                bySpace[record.space, default: []].append(StoredRow(rowid: rowid, bytes: record.value))
            }
        }
        for (recordSpace, key) in transformed {
            guard let value = try store.get(forKey: key, space: recordSpace) else { continue }
            if recordSpace == space {
                catalogRecords.append((key, value))
            } else if let rowid = RowCodec.rowid(key: key) {
                bySpace[recordSpace, default: []].append(StoredRow(rowid: rowid, bytes: value))
            }
        }
        for (key, value) in catalogRecords {
            let name = String(decoding: key, as: UTF8.self)
            let record = try CatalogCodec.decode(value, name: name)
            guard let createText = record.statements.first,
                  case .createTable(let create) = try Parser.parse(createText).0 else {
                throw StoreError.corrupt("DAO catalog record of table \(name): no CREATE TABLE")
            }
            var definition = try TableDefinition(create)
            for text in record.statements.dropFirst() {
                guard case .createIndex(let index) = try Parser.parse(text).0 else {
                    throw StoreError.corrupt("DAO catalog record of table \(name): not a CREATE INDEX: \(text)")
                }
                definition.indexes.append(try indexSchema(index, definition))
            }
            let table = TableState(definition: definition, space: record.space, spaceName: "")
            table.sequence = record.sequence
            tables[name] = table
            var rows = bySpace.removeValue(forKey: record.space) ?? []
            rows.sort { $0.rowid < $1.rowid }
            try buildIndexes(table, rows)
            table.rows = SortedChunks(sorted: rows)
        }
    }

    /// Fills the indexes of `table` from its rows, one index per thread (each decodes only its
    /// own columns), as attach does for every table.
    func buildIndexes(_ table: TableState, _ rows: [StoredRow]) throws {
        let count = table.indexes.count
        guard count > 0 else { return }
        let schemas = table.indexes.map(\.schema)
        let columnCount = table.definition.columns.count
        let defaults = table.definition.columns.map { column in
            column.defaultValue.flatMap { try? Evaluator.evaluate($0, RowContext(parameters: [])) } ?? .null
        }
        let alias = table.definition.rowidColumn
        var built = [[IndexEntry]](repeating: [], count: count)
        var failures = [Int64?](repeating: nil, count: count)
        built.withUnsafeMutableBufferPointer { builtBuffer in
            failures.withUnsafeMutableBufferPointer { failureBuffer in
                nonisolated(unsafe) let results = builtBuffer
                nonisolated(unsafe) let failed = failureBuffer
                DispatchQueue.concurrentPerform(iterations: count) { i in
                    let schema = schemas[i]
                    let wanted = Array(Set(schema.columns)).sorted()
                    var entries: [IndexEntry] = []
                    entries.reserveCapacity(rows.count)
                    for row in rows {
                        guard var values = row.bytes.withUnsafeBytes({ RowCodec.decode($0, columns: wanted) }) else {
                            failed[i] = row.rowid
                            return
                        }
                        if values.count < columnCount { values.append(contentsOf: defaults[values.count...]) }
                        if let alias { values[alias] = .integer(row.rowid) }
                        entries.append(IndexEntry(key: schema.columns.map { values[$0] }, rowid: row.rowid))
                    }
                    IndexBuilder.sort(&entries, descending: schema.descending)
                    results[i] = entries
                }
            }
        }
        if let rowid = failures.compactMap({ $0 }).first {
            throw StoreError.corrupt("DAO table \(table.name): row \(rowid) does not decode")
        }
        for i in 0..<count { table.indexes[i].entries = SortedChunks(sorted: built[i]) }
    }

    // MARK: DDL

    func indexSchema(_ statement: CreateIndexStatement, _ definition: TableDefinition) throws -> IndexSchema {
        let positions = try statement.columns.map { column -> Int in
            guard let position = definition.columnIndex(column.name) else { throw DAOError.noSuchColumn(column.name) }
            return position
        }
        return IndexSchema(name: statement.name, columns: positions, descending: statement.columns.map(\.descending),
                           unique: statement.unique, isConstraint: false)
    }

    /// Records a schema change to undo on rollback and to write at commit.
    func changeSchema(_ names: [String], undo: @escaping () -> Void) {
        schemaVersion += 1
        for name in names { dirtyCatalog.insert(name.lowercased()) }
        undoLog.append { [unowned self] in
            undo()
            self.schemaVersion += 1
        }
    }

    func createTable(_ statement: CreateTableStatement) throws {
        let key = statement.name.lowercased()
        if tables[key] != nil || indexNamed(key) != nil {
            if statement.ifNotExists && tables[key] != nil { return }
            throw DAOError.execution("\(tables[key] != nil ? "table" : "index") \(statement.name) already exists")
        }
        if key.hasPrefix("sqlite_") { throw DAOError.execution("object name reserved for internal use: \(statement.name)") }
        let definition = try TableDefinition(statement)
        let used = Set(tables.values.map(\.space))
        var candidate = "dao.table." + key
        var space = try store.space(named: candidate)
        var suffix = 2
        while used.contains(space) {
            candidate = "dao.table.\(key).\(suffix)"
            space = try store.space(named: candidate)
            suffix += 1
        }
        // A dropped table's rows were deleted in the batch that dropped it: the space is empty.
        let table = TableState(definition: definition, space: space, spaceName: candidate)
        tables[key] = table
        changeSchema([key]) { [unowned self] in self.tables[key] = nil }
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
        if indexNamed(statement.name) != nil || tables[statement.name.lowercased()] != nil {
            if statement.ifNotExists { return }
            throw DAOError.execution("index \(statement.name) already exists")
        }
        let schema = try indexSchema(statement, table.definition)
        var index = IndexState(schema: schema)
        var entries: [IndexEntry] = []
        for rowid in allRowids(table) {
            guard let row = try row(table, rowid) else { continue }
            entries.append(IndexEntry(key: index.key(of: row), rowid: rowid))
        }
        IndexBuilder.sort(&entries, descending: schema.descending)
        if schema.unique {
            for i in entries.indices.dropFirst() where index.compareKeys(entries[i - 1].key, entries[i].key) == 0
                && !entries[i].key.contains(where: { if case .null = $0 { return true }; return false }) {
                throw DAOError.constraint("UNIQUE constraint failed: " + schema.columns.map { "\(table.name).\(table.definition.columns[$0].name)" }.joined(separator: ", "))
            }
        }
        index.entries = SortedChunks(sorted: entries)
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
        guard let table = tables[key] else {
            if ifExists { return }
            throw DAOError.noSuchTable(name)
        }
        let rowids = allRowids(table) + table.overlay.keys
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
            throw DAOError.execution("no such index: \(name)")
        }
        guard !table.indexes[position].schema.isConstraint else {
            throw DAOError.execution("index associated with UNIQUE or PRIMARY KEY constraint cannot be dropped")
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
        if table.definition.columnIndex(column.name) != nil { throw DAOError.execution("duplicate column name: \(column.name)") }
        if column.primaryKey { throw DAOError.execution("Cannot add a PRIMARY KEY column") }
        if column.unique { throw DAOError.execution("Cannot add a UNIQUE column") }
        if column.notNull && column.defaultValue == nil { throw DAOError.execution("Cannot add a NOT NULL column with default value NULL") }
        let oldDefinition = table.definition
        table.definition.columns.append(ColumnSchema(name: column.name, typeName: column.typeName,
                                                     affinity: Affinity(declaredType: column.typeName), notNull: column.notNull,
                                                     defaultText: column.defaultText, defaultValue: column.defaultValue))
        table.definition.columnUnique.append(false)
        // Rows written before read the new column as its default (RowCodec rows are shorter).
        _ = try column.defaultValue.map { try Evaluator.evaluate($0, RowContext(parameters: [])) }
        changeSchema([table.name]) { [unowned table] in
            table.definition = oldDefinition
        }
    }

    func renameTable(_ from: String, to: String) throws {
        let table = try self.table(named: from)
        let oldKey = from.lowercased(), newKey = to.lowercased()
        if tables[newKey] != nil || indexNamed(newKey) != nil {
            throw DAOError.execution("there is already another table or index with this name: \(to)")
        }
        let oldName = table.definition.name
        tables[oldKey] = nil
        tables[newKey] = table
        table.definition.name = to
        changeSchema([oldKey, newKey]) { [unowned self, unowned table] in
            self.tables[newKey] = nil
            self.tables[oldKey] = table
            table.definition.name = oldName
        }
    }
}
