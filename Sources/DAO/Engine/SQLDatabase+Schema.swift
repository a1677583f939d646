import LogStore

extension SQLDatabase {
    // MARK: Loading

    /// Reads the catalog and every table's rows, building rowid orders and indexes.
    /// - Complexity: one sequential pass over the store's records, then a sort per index.
    func loadCatalog() throws {
        guard let space = try store.namedSpaces()["dao.catalog"] else { return }
        catalogSpace = space
        var bySpace: [LogStore.KeySpace: TableState] = [:]
        for (key, value) in try store.entries(space: space) {
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
            bySpace[record.space] = table
        }
        try loadRows(bySpace)
    }

    /// Reads the rows of every table in one pass over the store's records (file order, live
    /// records only) and builds each table's rowid order and indexes.
    func loadRows(_ bySpace: [LogStore.KeySpace: TableState]) throws {
        guard !bySpace.isEmpty else { return }
        final class Loading {
            var rows: [StoredRow] = []
            var indexEntries: [[IndexEntry]]
            let wanted: [Int]
            init(_ table: TableState) {
                indexEntries = Array(repeating: [], count: table.indexes.count)
                wanted = Array(Set(table.indexes.flatMap(\.schema.columns))).sorted()
            }
        }
        var loading: [LogStore.KeySpace: Loading] = [:]
        for (space, table) in bySpace { loading[space] = Loading(table) }
        // Values stored compressed or encrypted (FORMAT.md record flags 0x08, 0x10, 0x20) are
        // read through `get` after the pass.
        var transformed: [(LogStore.KeySpace, [UInt8])] = []
        var failure: Error?
        func add(_ table: TableState, _ state: Loading, rowid: Int64, bytes: [UInt8]) throws {
            state.rows.append(StoredRow(rowid: rowid, bytes: bytes))
            guard !table.indexes.isEmpty else { return }
            try bytes.withUnsafeBytes { try addToIndexes(table, state, rowid: rowid, value: $0) }
        }
        func addToIndexes(_ table: TableState, _ state: Loading, rowid: Int64, value: UnsafeRawBufferPointer) throws {
            guard var values = RowCodec.decode(value, columns: state.wanted) else {
                throw StoreError.corrupt("DAO table \(table.name): row \(rowid) does not decode")
            }
            complete(&values, table: table, rowid: rowid)
            for i in table.indexes.indices {
                state.indexEntries[i].append(IndexEntry(key: table.indexes[i].key(of: values), rowid: rowid))
            }
        }
        try store.forEachRecord { record in
            guard failure == nil, record.isLive, !record.isTombstone, let table = bySpace[record.space],
                  let state = loading[record.space] else { return }
            guard let rowid = RowCodec.rowid(key: record.key) else {
                failure = StoreError.corrupt("DAO table \(table.name): row key of \(record.key.count) bytes")
                return
            }
            if record.flags & 0x38 != 0 {
                transformed.append((record.space, record.key))
                return
            }
            do {
                try add(table, state, rowid: rowid, bytes: record.value)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        for (space, key) in transformed {
            guard let table = bySpace[space], let state = loading[space], let rowid = RowCodec.rowid(key: key),
                  let value = try store.get(forKey: key, space: space) else { continue }
            try add(table, state, rowid: rowid, bytes: value)
        }
        for (space, table) in bySpace {
            guard let state = loading[space] else { continue }
            state.rows.sort { $0.rowid < $1.rowid }
            table.rows = SortedChunks(sorted: state.rows)
            state.rows = []
            for i in table.indexes.indices {
                let descending = table.indexes[i].schema.descending
                IndexBuilder.sort(&state.indexEntries[i], descending: descending)
                table.indexes[i].entries = SortedChunks(sorted: state.indexEntries[i])
                state.indexEntries[i] = []
            }
        }
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
        // A space left by an earlier table of this name may still hold rows written outside
        // the catalog (never by this engine); clear it so the new table starts empty.
        let leftovers = try store.keys(space: space)
        if !leftovers.isEmpty { pendingClears.append((space: space, rowids: leftovers.compactMap(RowCodec.rowid(key:)))) }
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
