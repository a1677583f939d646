import LogStore

/// The PRAGMAs apps and frameworks send when they open a database and check its schema
/// (SQLiteOpenHelper, Room, FMDB, GRDB), answered as SQLite answers them:
///
/// - `user_version` and `user_version = N`: the schema version `openVersion` keeps
///   (FORMAT.md "DAO schema versions"); a set is written with the statement (or its
///   transaction), as any change.
/// - `table_info(t)`, `table_xinfo(t)`, `index_list(t)`, `index_info(i)`, `index_xinfo(i)`:
///   the catalog's columns and indexes.
/// - `foreign_key_list(t)`: the table's FOREIGN KEY and REFERENCES clauses, numbered as SQLite
///   numbers them (the last declared is 0). They are kept, not enforced, as in SQLite with
///   `foreign_keys` off (its default): `foreign_keys` reads 0, setting it off is taken, and
///   setting it on is refused while any table has a foreign key (on with none is taken: there
///   is nothing to enforce; a table with one is then refused). `foreign_key_check` is empty
///   only when no table has a foreign key, and refused otherwise.
/// - `journal_mode [= ...]`: `wal` (the store is a log; readers never wait for a writer), what
///   SQLite answers too when a mode cannot be changed.
/// - `busy_timeout [= ms]`: kept and echoed; statements of other threads wait for a running one.
///
/// Every other pragma is refused (`DAOError.unsupported`), rather than ignored as SQLite
/// ignores unknown ones: most change how SQLite stores or syncs, which the store's options
/// decide here.
extension SQLDatabase {
    func runPragma(_ pragma: PragmaStatement) throws -> SQLResult {
        func rows(_ columns: [String], _ values: [[DAOValue]]) -> SQLResult {
            SQLResult(columns: columns, rows: values, isQuery: true)
        }
        func argument() throws -> String {
            guard let value = pragma.value, !pragma.assigns else { throw DAOError.unsupported("PRAGMA \(pragma.name) without an argument") }
            return value
        }
        switch pragma.name {
        case "user_version":
            guard pragma.assigns, let value = pragma.value else {
                return rows(["user_version"], [[.integer(try readVersionRecordLocked().version)]])
            }
            guard let version = Int32(value) else { throw SQLExecutionError("PRAGMA user_version: not a 32-bit integer: \(value)") }
            try setUserVersion(Int64(version))
            return SQLResult()
        case "table_info", "table_xinfo":
            let table = try self.table(named: try argument())
            return rows(["cid", "name", "type", "notnull", "dflt_value", "pk"] + (pragma.name == "table_xinfo" ? ["hidden"] : []),
                        tableInfo(table, hidden: pragma.name == "table_xinfo"))
        case "index_list":
            let table = try self.table(named: try argument())
            let listed = Array(table.definition.indexes.reversed())   // newest first, as SQLite
            return rows(["seq", "name", "unique", "origin", "partial"], listed.enumerated().map { seq, index in
                [.integer(Int64(seq)), .text(index.name), .integer(index.unique ? 1 : 0), .text(Self.origin(of: index)), .integer(0)]
            })
        case "index_info", "index_xinfo":
            guard let (table, position) = indexNamed(try argument()) else { return rows(["seqno", "cid", "name"], []) }
            let index = table.indexes[position].schema, columns = table.definition.columns
            guard pragma.name == "index_xinfo" else {
                return rows(["seqno", "cid", "name"], index.columns.enumerated().map { seqno, cid in
                    [.integer(Int64(seqno)), .integer(Int64(cid)), .text(columns[cid].name)]
                })
            }
            var values: [[DAOValue]] = zip(index.columns, index.descending).enumerated().map { seqno, key in
                [.integer(Int64(seqno)), .integer(Int64(key.0)), .text(columns[key.0].name), .integer(key.1 ? 1 : 0), .text("BINARY"), .integer(1)]
            }
            // The rowid every entry ends with.
            values.append([.integer(Int64(index.columns.count)), .integer(-1), .null, .integer(0), .text("BINARY"), .integer(0)])
            return rows(["seqno", "cid", "name", "desc", "coll", "key"], values)
        case "foreign_keys":
            guard pragma.assigns, let value = pragma.value else { return rows(["foreign_keys"], [[.integer(foreignKeysSetting ? 1 : 0)]]) }
            let on = try Self.boolean(value, pragma: pragma.name)
            if on, hasForeignKeys { throw DAOError.unsupported("foreign key enforcement (PRAGMA foreign_keys = ON with foreign keys declared)") }
            foreignKeysSetting = on
            return SQLResult()
        case "foreign_key_list":
            let keys = try self.table(named: try argument()).definition.foreignKeys
            var values: [[DAOValue]] = []
            for (id, key) in keys.reversed().enumerated() {
                for (seq, column) in key.columns.enumerated() {
                    values.append([.integer(Int64(id)), .integer(Int64(seq)), .text(key.parent), .text(column),
                                   key.parentColumns.map { .text($0[seq]) } ?? .null, .text(key.onUpdate), .text(key.onDelete), .text("NONE")])
                }
            }
            return rows(["id", "seq", "table", "from", "to", "on_update", "on_delete", "match"], values)
        case "foreign_key_check":
            if let name = pragma.value { _ = try self.table(named: name) }
            if hasForeignKeys { throw DAOError.unsupported("PRAGMA foreign_key_check with foreign keys declared") }
            return rows(["table", "rowid", "parent", "fkid"], [])
        case "journal_mode":
            return rows(["journal_mode"], [[.text("wal")]])
        case "busy_timeout":
            if let value = pragma.value {
                guard let milliseconds = Int64(value) else { throw SQLExecutionError("PRAGMA busy_timeout: not an integer: \(value)") }
                busyTimeoutSetting = max(0, milliseconds)
            }
            return rows(["timeout"], [[.integer(busyTimeoutSetting)]])
        default:
            throw DAOError.unsupported("PRAGMA \(pragma.name)")
        }
    }

    /// Whether any table declares a foreign key.
    var hasForeignKeys: Bool { tables.values.contains { !$0.definition.foreignKeys.isEmpty } }

    /// `table_info`'s rows: a column's declared type as written, NOT NULL, its DEFAULT's text,
    /// and its place in the primary key (1-based; the rowid alias is 1).
    private func tableInfo(_ table: TableState, hidden: Bool) -> [[DAOValue]] {
        let definition = table.definition
        let keyNames = (definition.primaryKey?.map { $0.name.lowercased() })
            ?? (definition.rowidColumn ?? definition.columnPrimaryKey).map { [definition.columns[$0].name.lowercased()] } ?? []
        return definition.columns.enumerated().map { cid, column in
            let pk = keyNames.firstIndex(of: column.name.lowercased()).map { $0 + 1 } ?? 0
            // SQLite 3.37+ spells the six standard type names in capitals, others as written.
            let upper = column.typeName.uppercased()
            let type = ["INT", "INTEGER", "REAL", "TEXT", "BLOB", "ANY"].contains(upper) ? upper : column.typeName
            var row: [DAOValue] = [.integer(Int64(cid)), .text(column.name), .text(type), .integer(column.notNull ? 1 : 0),
                                   column.defaultText.map { .text($0) } ?? .null, .integer(Int64(pk))]
            if hidden { row.append(.integer(0)) }
            return row
        }
    }

    /// `index_list`'s origin: `c` for CREATE INDEX, `pk` for a PRIMARY KEY, `u` for UNIQUE.
    private static func origin(of index: IndexSchema) -> String {
        guard index.isConstraint else { return "c" }
        return index.name.hasSuffix("_pk") ? "pk" : "u"
    }

    /// SQLite's boolean pragma values: 1/0, on/off, true/false, yes/no.
    private static func boolean(_ value: String, pragma: String) throws -> Bool {
        switch value.lowercased() {
        case "1", "on", "true", "yes": return true
        case "0", "off", "false", "no": return false
        default: throw SQLExecutionError("PRAGMA \(pragma): not a boolean: \(value)")
        }
    }

    /// Writes `version` as the schema version with the running statement (or transaction).
    private func setUserVersion(_ version: Int64) throws {
        var record = try readVersionRecordLocked()
        record.version = version
        let old = pendingVersionRecord
        pendingVersionRecord = record.encoded()
        undoLog.append(.action { [unowned self] in self.pendingVersionRecord = old })
    }
}
