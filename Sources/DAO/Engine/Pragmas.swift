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
/// - `synchronous [= 0|1|2|3|OFF|NORMAL|FULL|EXTRA]` (Android's SQLiteConnection sets it at
///   every open): reads the level the store gives: 2 (FULL) with `.fsyncEachWrite`, 1 (NORMAL:
///   a power loss loses at most the recent commits, and leaves a prefix) with `.groupCommit` or
///   the default mode's background syncer, 0 with no syncer, or what was asked when that is
///   more. Asking for FULL or EXTRA where the store gives less is honoured: every commit of
///   this database is then synced (`LogStore.sync()`) before it returns.
/// - The settings an open sequence reads and writes and that change nothing here:
///   `page_size` (4096; a set is taken, as SQLite takes one on a database in WAL mode, and
///   changes nothing), `encoding` (UTF-8), `wal_autocheckpoint`, `journal_size_limit`,
///   `temp_store` (TEMP objects live in memory whatever it says), `defer_foreign_keys`
///   (foreign keys are not enforced), and `optimize` (nothing to do).
/// - `wal_checkpoint[(mode)]`: writes the index checkpoint (`checkpoint()`), then answers
///   `0|0|0` (not busy; nothing left in a log to copy); inside a transaction `1|-1|-1`, as
///   SQLite answers when it cannot checkpoint.
/// - `integrity_check`, `quick_check`: `LogStore.verify()` (every record's checksum, every key
///   pointing at a valid record): `ok`, or one row per problem.
/// - `recursive_triggers`: 0; setting it on is refused (a trigger does not fire itself).
/// - `database_list`: the one schema, `main`, with the store's folder as its file.
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
                [.integer(Int64(seqno)), .integer(Int64(key.0)), .text(columns[key.0].name), .integer(key.1 ? 1 : 0),
                 .text(index.collations[seqno].name), .integer(1)]
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
        case "synchronous":
            guard pragma.assigns, let value = pragma.value else {
                return rows(["synchronous"], [[.integer(max(storeSynchronousLevel, echoedPragmas.synchronous ?? 0))]])
            }
            echoedPragmas.synchronous = try Self.synchronousLevel(value)
            return SQLResult()
        case "page_size":
            if pragma.value != nil { return SQLResult() }
            return rows(["page_size"], [[.integer(4096)]])
        case "encoding":
            if pragma.value != nil { return SQLResult() }
            return rows(["encoding"], [[.text("UTF-8")]])
        case "wal_autocheckpoint", "journal_size_limit":
            let isLimit = pragma.name == "journal_size_limit"
            if let value = pragma.value {
                guard let number = Int64(value) else { throw SQLExecutionError("PRAGMA \(pragma.name): not an integer: \(value)") }
                if isLimit { echoedPragmas.journalSizeLimit = max(-1, number) } else { echoedPragmas.walAutocheckpoint = max(0, number) }
            }
            return rows([pragma.name], [[.integer(isLimit ? echoedPragmas.journalSizeLimit : echoedPragmas.walAutocheckpoint)]])
        case "temp_store":
            guard pragma.assigns, let value = pragma.value else { return rows(["temp_store"], [[.integer(echoedPragmas.tempStore)]]) }
            switch value.lowercased() {
            case "0", "default": echoedPragmas.tempStore = 0
            case "1", "file": echoedPragmas.tempStore = 1
            case "2", "memory": echoedPragmas.tempStore = 2
            default: throw SQLExecutionError("PRAGMA temp_store: not DEFAULT, FILE or MEMORY: \(value)")
            }
            return SQLResult()
        case "defer_foreign_keys":
            guard pragma.assigns, let value = pragma.value else {
                return rows(["defer_foreign_keys"], [[.integer(echoedPragmas.deferForeignKeys ? 1 : 0)]])
            }
            echoedPragmas.deferForeignKeys = try Self.boolean(value, pragma: pragma.name)
            return SQLResult()
        case "recursive_triggers":
            guard pragma.assigns, let value = pragma.value else { return rows(["recursive_triggers"], [[.integer(0)]]) }
            if try Self.boolean(value, pragma: pragma.name) { throw DAOError.unsupported("PRAGMA recursive_triggers = ON") }
            return SQLResult()
        case "optimize":
            return SQLResult()
        case "database_list":
            // One schema, the store (Android's `getAttachedDbs` and `isDatabaseIntegrityOk` read this).
            return rows(["seq", "name", "file"], [[.integer(0), .text("main"), .text(store.directory.path)]])
        case "wal_checkpoint":
            if let mode = pragma.value, !["passive", "full", "restart", "truncate"].contains(mode.lowercased()) {
                throw SQLExecutionError("PRAGMA wal_checkpoint: unknown mode \(mode)")
            }
            if explicitTransaction { return rows(["busy", "log", "checkpointed"], [[.integer(1), .integer(-1), .integer(-1)]]) }
            try checkpointLocked()
            return rows(["busy", "log", "checkpointed"], [[.integer(0), .integer(0), .integer(0)]])
        case "integrity_check", "quick_check":
            var limit = 100
            if let value = pragma.value {
                if let number = Int(value) {
                    limit = number > 0 ? number : 100
                } else {
                    _ = try self.table(named: value)   // a table to check: the whole store is checked
                }
            }
            let problems = try store.verify().problems
            return rows([pragma.name], problems.isEmpty ? [[.text("ok")]] : problems.prefix(limit).map { [.text($0)] })
        default:
            throw DAOError.unsupported("PRAGMA \(pragma.name)")
        }
    }

    /// The `synchronous` level the store gives by itself: FULL (2) when each write is synced,
    /// NORMAL (1) when a bounded loss window is (group commit, the default mode's syncer), OFF
    /// (0) when nothing is synced before close or `sync()`.
    var storeSynchronousLevel: Int64 {
        let options = store.options
        switch options.durability {
        case .fsyncEachWrite: return 2
        case .groupCommit: return 1
        case .processCrashSafe: return options.maxUnsyncedInterval != nil || options.maxUnsyncedBytes != nil ? 1 : 0
        }
    }

    /// Whether every commit is to be synced before it returns: `PRAGMA synchronous` asked for
    /// FULL or EXTRA and the store does not sync each write by itself.
    var syncsEachCommit: Bool { (echoedPragmas.synchronous ?? 0) >= 2 && storeSynchronousLevel < 2 }

    /// A `synchronous` value: 0-3 or OFF, NORMAL, FULL, EXTRA.
    private static func synchronousLevel(_ value: String) throws -> Int64 {
        switch value.lowercased() {
        case "0", "off": return 0
        case "1", "normal": return 1
        case "2", "full": return 2
        case "3", "extra": return 3
        default: throw SQLExecutionError("PRAGMA synchronous: not OFF, NORMAL, FULL or EXTRA: \(value)")
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

/// The pragmas a framework's open sequence sets that are kept only to be read back
/// (`SQLDatabase.runPragma`), with SQLite's defaults; and `synchronous` as last asked.
struct OpenPragmas {
    var walAutocheckpoint: Int64 = 1000
    var journalSizeLimit: Int64 = -1
    var tempStore: Int64 = 0
    var deferForeignKeys = false
    /// nil until set.
    var synchronous: Int64?
}
