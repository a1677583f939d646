import Foundation
import Synchronization
import LogStore

/// The SQL engine of one LogStore: its tables (indexed record sets, each in a key space of the
/// store), their indexes, and the state of the one connection (an open transaction, the last
/// insert rowid).
///
/// Every layer reaches a store's tables through the same instance, `attached(to:)`, so a
/// transaction begun by one layer is seen by the others and indexes are built once.
///
/// ```swift
/// let db = try SQLDatabase.attached(to: store)
/// try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
/// let r = try db.execute("SELECT name FROM t WHERE id = ?", arguments: [7])
/// ```
///
/// Storage (FORMAT.md "DAO tables"): the catalog is the key space named `dao.catalog`, one
/// record per table; each table's rows are in their own key space (`dao.table.<name>`), keyed
/// by rowid, and statements read them from the store (no copy of a table in memory: only its
/// rowids in order and its index entries). The index checkpoint (`checkpoint()`, also written
/// when the store closes) lets attach skip reading the rows.
///
/// Thread-safe: statements run one at a time; while a transaction is open (BEGIN without
/// COMMIT or ROLLBACK yet), statements of other threads wait until it ends, so a transaction
/// belongs to the thread that began it.
public final class SQLDatabase: @unchecked Sendable {
    /// The store whose tables these are.
    public let store: LogStore

    /// Serializes statements; `transactionOwner` holds other threads off during a transaction.
    let condition = NSCondition()
    var transactionOwner: pthread_t?
    /// The thread running a `forEachRow` body while it holds `condition` (0: none). Atomic:
    /// every lock entry reads it before taking the lock, so that the body's own thread, which
    /// already holds it, is told apart from the others (which wait as usual).
    let streamingThread = Atomic<UInt>(0)
    /// How many rows the last `forEachRow` handed out while its query ran (for tests).
    @exclusivity(unchecked) var lastStreamedRows = 0

    // The state below is only touched with `condition` held (statements run one at a time), so
    // the hot fields skip the dynamic exclusivity checks, which cost on every statement.

    /// Tables by lower-cased name.
    @exclusivity(unchecked) var tables: [String: TableState] = [:]
    /// Tables that live only in memory and are never written to the store, by lower-cased
    /// name: a running statement's WITH tables (CommonTableExpressions.swift). They hide
    /// stored tables of the same name.
    @exclusivity(unchecked) var transientTables: [String: TableState] = [:]
    /// TEMP tables by lower-cased name (TemporaryTables.swift): in memory only, hiding stored
    /// tables of the same name.
    @exclusivity(unchecked) var temporaryTables: [String: TableState] = [:]
    /// Rows a statement with RETURNING collects as it changes them (Returning.swift).
    @exclusivity(unchecked) var rowCapture = RowCapture()
    /// Lower-cased names of the triggers running now, outermost first (Triggers.swift).
    @exclusivity(unchecked) var firingTriggers: [String] = []
    /// WITH tables declared by the running statement and not computed yet.
    @exclusivity(unchecked) var commonTables = CommonTableScope()
    /// Views by lower-cased name (Engine/SQLDatabase+Views.swift): persisted ones, TEMP ones.
    @exclusivity(unchecked) var views: [String: ViewDefinition] = [:]
    @exclusivity(unchecked) var tempViews: [String: ViewDefinition] = [:]
    /// Whether the views record is to be written at commit; views being expanded (cycles).
    @exclusivity(unchecked) var viewsDirty = false
    @exclusivity(unchecked) var viewsExpanding: Set<String> = []
    /// The schema version when `sqlite_sequence` was last made from the sequences
    /// (SchemaTables.swift), nil when it was not made since.
    @exclusivity(unchecked) var sequenceViewVersion: Int?
    /// `PRAGMA foreign_keys` and `PRAGMA busy_timeout` as last set (Pragmas.swift).
    @exclusivity(unchecked) var foreignKeysSetting = false
    @exclusivity(unchecked) var busyTimeoutSetting: Int64 = 0
    /// The settings that only echo (Pragmas.swift, `OpenPragmas`): `wal_autocheckpoint`,
    /// `journal_size_limit`, `temp_store`, `defer_foreign_keys`, `synchronous` as asked.
    @exclusivity(unchecked) var echoedPragmas = OpenPragmas()
    @exclusivity(unchecked) var catalogSpace: LogStore.KeySpace?
    /// Bumped by every schema change (cached resolutions are keyed by it).
    @exclusivity(unchecked) var schemaVersion = 0
    @exclusivity(unchecked) var explicitTransaction = false {
        // Savepoints live inside a transaction and end with it (COMMIT, ROLLBACK, RAISE).
        didSet { if !explicitTransaction { savepoints.removeAll() } }
    }
    /// Open savepoints, outermost first (Savepoints.swift).
    @exclusivity(unchecked) var savepoints: [Savepoint] = []
    @exclusivity(unchecked) var lastInsertRowIdValue: Int64 = 0
    /// Rows the last INSERT/UPDATE/DELETE changed, and all of them since attach (changes(), total_changes()).
    @exclusivity(unchecked) var lastChangesValue = 0
    @exclusivity(unchecked) var totalChangesValue = 0

    /// Entries of the undo log and of a table's overlay whose storage a commit keeps for the
    /// next statement; a larger one (a transaction of many rows) is freed at its commit, not
    /// held until the database goes.
    static let keptCapacity = 4096
    /// Rows above which a commit streams its batch to the store (`CommitBatch`); a variable
    /// so that tests can send small transactions down that path too.
    @exclusivity(unchecked) var streamedCommitThreshold = 4096
    /// The tables a commit writes, kept from one commit to the next (no allocation per statement).
    @exclusivity(unchecked) var commitTables: [TableState] = []
    /// Undo actions of the open transaction (or statement), newest last.
    @exclusivity(unchecked) var undoLog = UndoLog()
    /// Tables with rows in their overlay.
    @exclusivity(unchecked) var dirtyTables: [ObjectIdentifier: TableState] = [:]
    /// Catalog records to rewrite (or delete, when the table is gone) at commit, by name.
    @exclusivity(unchecked) var dirtyCatalog: Set<String> = []
    /// Whether the transaction changed the schema (`changeSchema`), not only an AUTOINCREMENT
    /// sequence (which also rewrites a catalog record, and which the index checkpoint's journal
    /// can carry on through).
    @exclusivity(unchecked) var schemaChangePending = false
    /// Row keys to delete at commit (tables dropped in this transaction).
    @exclusivity(unchecked) var pendingClears: [(space: LogStore.KeySpace, rowids: [Int64])] = []
    /// The schema versions record to write at commit (Migration/, FORMAT.md "DAO schema versions").
    @exclusivity(unchecked) var pendingVersionRecord: [UInt8]?

    /// Whether the store may hold the index checkpoint record (a commit journals its changes
    /// or deletes it: `CheckpointChange`).
    @exclusivity(unchecked) var checkpointRecordPresent = false
    /// The rows named in the checkpoint's journal so far; nil when commits cannot journal (no
    /// record, or one whose journal does not fit the tables: the next commit deletes it).
    @exclusivity(unchecked) var checkpointJournal: CheckpointJournal?
    /// What the commit under way does about the checkpoint record.
    @exclusivity(unchecked) var pendingCheckpointChange = CheckpointChange.none
    /// The journal record of the commit under way, reused from one commit to the next.
    @exclusivity(unchecked) var journalWriter = JournalRecordWriter()
    /// Rows the journal names at most (`CheckpointJournal.defaultLimit`; a variable for tests).
    @exclusivity(unchecked) var journalLimit = CheckpointJournal.defaultLimit
    /// Whether the checkpoint file and record describe the tables as they are.
    @exclusivity(unchecked) var checkpointCurrent = false
    @exclusivity(unchecked) var checkpointSpace: LogStore.KeySpace?
    /// The blocks of the checkpoint file the tables are served from, if any (checked as
    /// statements first touch them; `indexDamaged`).
    @exclusivity(unchecked) var servedBlocks: CheckpointBlocks?
    /// What attach did about the index checkpoint (FORMAT.md "DAO index checkpoint"): empty when
    /// it loaded the indexes from it (and replayed its journal) or there was none; otherwise why
    /// it rebuilt them from the rows.
    /// A block of the file found damaged later, when a statement first read it, is reported here
    /// too (the indexes were then rebuilt from the rows and the statement ran again).
    public internal(set) var indexReport: [String] = []

    /// Parsed statements by SQL text (its bytes: see `StatementText`).
    @exclusivity(unchecked) var statementCache: [StatementText: ParsedStatement] = [:]
    /// The statement parsed or found last, checked before `statementCache`: an app that runs
    /// one statement text over and over (an INSERT per row) passes the same string each time,
    /// and comparing it costs less than hashing it (~1k instructions a statement).
    @exclusivity(unchecked) var lastStatement: (sql: StatementText, parsed: ParsedStatement)?

    /// The row context of the running statement, reused from one statement to the next (its row
    /// buffer and compiled LIKE patterns stay allocated).
    let context = RowContext(parameters: [])

    /// Diagnostics for tests: the access path of the last statement and rows it read.
    /// The access path of the last statement, kept as it is: its text is made only when asked.
    @exclusivity(unchecked) var lastAccess: (path: AccessPath, ordered: Bool)?
    var lastPlan: String { lastAccess.map { $0.path.description + ($0.ordered ? " ORDERED" : "") } ?? "" }
    @exclusivity(unchecked) var rowsVisited = 0
    /// Full scans that ran with a prefilter (`ScanPrefilter`) and the rows those kept, for tests.
    @exclusivity(unchecked) var prefilteredScans = 0
    @exclusivity(unchecked) var prefilterKeptRows = 0

    private init(store: LogStore) {
        self.store = store
        pendingSpillPath = store.options.readOnly ? nil : store.directory.path + "/" + PendingRows.fileName
        context.database = self
    }

    /// The database of `store`, created on first use (loading the table catalog and building or
    /// loading the indexes).
    /// - Throws: `StoreError` when the store is closed or its catalog cannot be read;
    ///   `StoreError.corrupt` when a catalog record or row does not decode.
    /// - Complexity: the first call reads the index checkpoint when it is current (O(index
    ///   bytes)); otherwise every row of every table: O(rows × indexes × log rows).
    public static func attached(to store: LogStore) throws -> SQLDatabase {
        try DatabaseRegistry.shared.database(for: store) {
            let database = SQLDatabase(store: store)
            try database.loadCatalog()
            // Found through the registry, not captured: a weak capture would give the database
            // a side table (see `RowContext.database`), a strong one a cycle through the store.
            let storeID = ObjectIdentifier(store)
            store.closeHooks.add { DatabaseRegistry.shared.existingDatabase(storeID: storeID)?.checkpointAtClose() }
            return database
        }
    }

    /// Runs one statement of the subset (API.md "DAO" 2), binding `?` parameters in order.
    /// A statement is atomic: when it throws, the tables are as they were before it.
    /// - Throws: `DAOError` (`syntax` with line and column, `unsupported` naming the construct,
    ///   `constraint`, `noSuchTable`, `noSuchColumn`, `execution`) or `StoreError` from the store.
    @discardableResult
    public func execute(_ sql: String, arguments: [DAOValue] = []) throws -> SQLResult {
        try withStatementLock {
            let parsed = try parsedStatement(sql)
            return try runPublishing(parsed, parameters: arguments.map(SQLValue.init))
        }
    }

    /// Runs one statement binding `:name` parameters by name (without the colon).
    /// - Throws: as `execute(_:arguments:)`.
    @discardableResult
    public func execute(_ sql: String, named arguments: [String: DAOValue]) throws -> SQLResult {
        try withStatementLock {
            let parsed = try parsedStatement(sql)
            return try runPublishing(parsed, parameters: parsed.bind(named: arguments))
        }
    }

    /// Parses `sql` once for running many times with different arguments.
    /// - Throws: `DAOError.syntax` or `.unsupported` as `execute` would.
    public func prepare(_ sql: String) throws -> SQLStatement {
        let parsed = try withStatementLock { try parsedStatement(sql) }
        return SQLStatement(database: self, parsed: parsed)
    }

    /// Whether a transaction (BEGIN without COMMIT or ROLLBACK yet) is open.
    public var inTransaction: Bool {
        withStateLock { explicitTransaction }
    }

    /// The rowid of the last row inserted through this database (SQLite's last_insert_rowid()).
    public var lastInsertRowId: Int64 {
        withStateLock { lastInsertRowIdValue }
    }

    /// Names of the tables, sorted.
    public func tableNames() -> [String] {
        withStateLock { tables.values.map(\.name).sorted() }
    }

    /// The CREATE TABLE statement of a table as the catalog keeps it (canonical form), then its
    /// CREATE INDEX statements; nil when there is no such table.
    public func schema(ofTable name: String) -> [String]? {
        withStateLock {
            guard let table = tables[name.lowercased()] else { return nil }
            let definition = table.definition
            return [definition.createSQL] + definition.indexes.filter { !$0.isConstraint }.map(definition.createIndexSQL)
        }
    }

    // MARK: Locking

    /// Whether this thread is running a `forEachRow` body (and so holds `condition`).
    var isStreamingHere: Bool {
        let thread = streamingThread.load(ordering: .acquiring)
        return thread != 0 && thread == Self.currentThreadID
    }

    /// This thread's pthread identity as a number (never 0).
    static var currentThreadID: UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }

    /// Runs `body` holding `condition`, or, on the thread of a `forEachRow` body (which holds
    /// it already), without taking it again: reading the database's state from that body is
    /// safe, and locking again would deadlock.
    func withStateLock<T>(_ body: () throws -> T) rethrows -> T {
        if isStreamingHere { return try body() }
        condition.lock()
        defer { condition.unlock() }
        return try body()
    }

    func withStatementLock<T>(_ body: () throws -> T) throws -> T {
        // A statement inside a `forEachRow` body would reuse the running query's state.
        if isStreamingHere { throw SQLExecutionError("cannot run a statement inside the body of forEachRow; collect the rows first") }
        condition.lock()
        defer { condition.unlock() }
        let me = pthread_self()
        while let owner = transactionOwner, pthread_equal(owner, me) == 0 { condition.wait() }
        // Tables answer from memory; a closed store must still refuse, as every handle does.
        if DatabaseRegistry.isClosed(store) {
            explicitTransaction = false
            transactionOwner = nil
            condition.broadcast()
            throw StoreError.closed
        }
        let result = try body()
        if explicitTransaction {
            transactionOwner = me
        } else if transactionOwner != nil {
            transactionOwner = nil
            condition.broadcast()
        }
        return result
    }

    func parsedStatement(_ sql: String) throws -> ParsedStatement {
        let key = StatementText(sql)
        if let last = lastStatement, last.sql == key { return last.parsed }
        if let cached = statementCache[key] {
            lastStatement = (key, cached)
            return cached
        }
        let (statement, count, names) = try Parser.parse(sql)
        let parsed = ParsedStatement(statement: statement, parameterCount: count, parameterNames: names)
        if statementCache.count >= 512 { statementCache.removeAll(keepingCapacity: true) }
        statementCache[key] = parsed
        lastStatement = (key, parsed)
        return parsed
    }

    // MARK: Running a statement atomically

    /// `run`, with the result's rows moved into its public `rows` (SQLResult.publish()).
    func runPublishing(_ parsed: ParsedStatement, parameters: [SQLValue]) throws -> SQLResult {
        var result = try run(parsed, parameters: parameters)
        result.publish()
        return result
    }

    func run(_ parsed: ParsedStatement, parameters: [SQLValue], sink: RowSink? = nil) throws -> SQLResult {
        switch parsed.statement {
        case .begin:
            guard !explicitTransaction else { throw SQLExecutionError("cannot start a transaction within a transaction") }
            explicitTransaction = true
            return SQLResult(lastInsertRowId: lastInsertRowIdValue)
        case .commit:
            guard explicitTransaction else { throw SQLExecutionError("cannot commit - no transaction is active") }
            try store.checkNoFailedSync()
            try commit()
            explicitTransaction = false
            return SQLResult(lastInsertRowId: lastInsertRowIdValue)
        case .rollback:
            guard explicitTransaction else { throw SQLExecutionError("cannot rollback - no transaction is active") }
            rollback(to: 0)
            explicitTransaction = false
            return SQLResult(lastInsertRowId: lastInsertRowIdValue)
        case .savepoint(let name):
            openSavepoint(name)   // Savepoints.swift
            return SQLResult(lastInsertRowId: lastInsertRowIdValue)
        case .release(let name):
            try releaseSavepoint(name)
            return SQLResult(lastInsertRowId: lastInsertRowIdValue)
        case .rollbackTo(let name):
            try rollbackToSavepoint(name)
            return SQLResult(lastInsertRowId: lastInsertRowIdValue)
        default:
            // A statement that may write fails up front when the store refuses writes: after a
            // failed fsync a rolled-back batch may still be on disk, so even a statement that
            // finds nothing to change in memory (a DELETE of that batch's row) must not succeed.
            if !parsed.statement.isSelect { try store.checkNoFailedSync() }
            let mark = undoLog.count
            let savedRowId = lastInsertRowIdValue
            do {
                var result = try runStatement(parsed.statement, parameters: parameters, cache: parsed.compiled, sink: sink)
                // A block of the index checkpoint the statement touched failed its check: what
                // it read there is not the tables', so neither its result nor its changes count.
                if indexDamaged { throw IndexDamage() }
                if !explicitTransaction { try commit() }
                noteChanges(of: parsed.statement, result.changes)
                result.lastInsertRowId = lastInsertRowIdValue
                return result
            } catch let failure as FailResolution where !indexDamaged {   // RAISE(FAIL): the changes so far stay (Triggers.swift)
                try keepChanges(after: failure, mark: mark)
            } catch {
                rollback(to: mark)
                noteChanges(of: parsed.statement, 0)
                lastInsertRowIdValue = savedRowId
                if !explicitTransaction { discardPending() }
                // Whatever the statement threw may come from the damaged block's placeholders:
                // rebuild the tables from the rows, then run it again on them (no chunk reads
                // from the file any more, so this happens at most once).
                if indexDamaged {
                    try rebuildAfterIndexDamage()
                    sink?.restart()
                    return try run(parsed, parameters: parameters, sink: sink)
                }
                throw error
            }
        }
    }

    /// Thrown inside `run` when a statement touched a damaged checkpoint block (never escapes).
    struct IndexDamage: Error {}

    func runStatement(_ statement: Statement, parameters: [SQLValue], cache: CompiledBox? = nil, sink: RowSink? = nil) throws -> SQLResult {
        let context = self.context
        context.parameters = parameters
        context.statementTime = nil
        context.rowid = 0
        context.database = self
        if !context.subqueries.isEmpty { context.subqueries = SubqueryCache() }
        switch statement {
        case .select(let select): return try runSelect(select, context, cache: cache, sink: sink)
        // WITH before a write (CommonTableExpressions.swift): the statement without it, run with
        // its tables visible.
        // (`let` bindings: every write passes these cases, and only one with a WITH is copied.)
        case .insert(let insert) where insert.with != nil:
            var inner = insert
            inner.with = nil
            return try runWithCommonTables(insert.with, writing: insert.table, .insert(inner), parameters: parameters, sink: sink)
        case .update(let update) where update.with != nil:
            var inner = update
            inner.with = nil
            return try runWithCommonTables(update.with, writing: update.table, .update(inner), parameters: parameters, sink: sink)
        case .delete(let delete) where delete.with != nil:
            var inner = delete
            inner.with = nil
            return try runWithCommonTables(delete.with, writing: delete.table, .delete(inner), parameters: parameters, sink: sink)
        case .insert(let insert) where insert.returning != nil:   // Returning.swift
            return try returning(insert.returning ?? [], of: insert.table, capturing: .inserted) { try runInsert(insert, context, cache: cache) }
        case .update(let update) where update.returning != nil:
            return try returning(update.returning ?? [], of: update.table, capturing: .updated) { try runUpdate(update, context) }
        case .delete(let delete) where delete.returning != nil:
            return try returning(delete.returning ?? [], of: delete.table, capturing: .deleted) { try runDelete(delete, context) }
        case .insert(let insert): return try runInsert(insert, context, cache: cache)
        case .update(let update): return try runUpdate(update, context)
        case .delete(let delete): return try runDelete(delete, context)
        case .createTable(let create) where create.temporary: try createTemporaryTable(create); return SQLResult()
        case .createTable(let create): try createTable(create); return SQLResult()
        case .createIndex(let create): try createIndex(create); return SQLResult()
        case .createView(let create): try createView(create); return SQLResult()
        case .dropView(let name, let ifExists): try dropView(name, ifExists: ifExists); return SQLResult()
        case .dropTable(let name, let ifExists): try dropTable(name, ifExists: ifExists); return SQLResult()
        case .dropIndex(let name, let ifExists): try dropIndex(name, ifExists: ifExists); return SQLResult()
        case .addColumn(let table, let column): try refuseTemporary(table); try addColumn(table, column); return SQLResult()
        case .renameTable(let from, let to): try refuseTemporary(from); try renameTable(from, to: to); return SQLResult()
        case .renameColumn(let table, let from, let to): try refuseTemporary(table); try refuseTriggers(table); try renameColumn(table, from, to: to); return SQLResult()
        case .dropColumn(let table, let column): try refuseTemporary(table); try dropColumn(table, column); return SQLResult()
        case .reindex(let name): try reindex(name); return SQLResult()
        case .vacuum(let schema): try vacuum(schema); return SQLResult()   // SQLDatabase+Maintenance.swift
        case .analyze(let schema, let name): try analyze(schema: schema, name: name); return SQLResult()
        case .createTrigger(let create): try createTrigger(create); return SQLResult()   // Triggers.swift
        case .dropTrigger(let name, let ifExists): try dropTrigger(name, ifExists: ifExists); return SQLResult()
        case .pragma(let pragma): return try runPragma(pragma)   // Pragmas.swift
        case .begin, .commit, .rollback, .savepoint, .release, .rollbackTo: return SQLResult()
        }
    }

    /// Undoes in-memory changes back to `mark` (newest first).
    func rollback(to mark: Int) {
        var failed: [TableState] = []
        while undoLog.count > mark, let entry = undoLog.removeLast() { undo(entry, failed: &failed) }
        if !failed.isEmpty { rebuildAfterFailedUndo(failed) }
        if mark == 0 { discardPending() }
    }

    func discardPending() {
        undoLog.removeAll(keepingCapacity: undoLog.count <= Self.keptCapacity)
        for table in dirtyTables.values where !table.isTransient { table.overlay.removeAll(keepingCapacity: false) }
        dirtyTables.removeAll()
        dirtyCatalog.removeAll()
        schemaChangePending = false
        pendingClears.removeAll()
        pendingVersionRecord = nil
        viewsDirty = false
    }

    /// Writes the pending rows and catalog records as one atomic batch.
    func commit() throws {
        if dirtyTables.isEmpty && dirtyCatalog.isEmpty && pendingClears.isEmpty && pendingVersionRecord == nil && !viewsDirty {
            undoLog.removeAll(keepingCapacity: undoLog.count <= Self.keptCapacity)
            return
        }
        // Named before a streamed write: naming a new space writes to the store, which the
        // streamed batch's chunks, made under its write lock, must not do.
        if !dirtyCatalog.isEmpty || pendingVersionRecord != nil || viewsDirty { _ = try catalogKeySpace() }
        commitTables.removeAll(keepingCapacity: true)
        for table in dirtyTables.values where !table.isTransient { commitTables.append(table) }   // TEMP tables stay in memory
        let records = CommitBatch(database: self, clears: pendingClears, tables: commitTables)
        pendingCheckpointChange = checkpointChange(forCommitOf: commitTables)
        do {
            if records.rowCount > streamedCommitThreshold {
                // A big transaction: its rows go to the store a chunk at a time (CommitBatch).
                // Its indexes give back the slack their inserts left first: the write needs
                // room (the table's keydir grows in it).
                for table in commitTables {
                    for i in table.indexes.indices { table.indexes[i].entries.shrinkToFit() }
                }
                var cursor = CommitBatch.Cursor()
                try store.write(streaming: { batch, chunk in
                    if chunk == 0 { cursor = CommitBatch.Cursor() }
                    return try records.fill(&batch, cursor: &cursor, limit: 4096)
                })
            } else {
                var batch = LogStore.WriteBatch()
                batch.reserveCapacity(records.rowCount + dirtyCatalog.count + 4)
                try records.addAll(to: &batch)
                if batch.count > 0 { try store.write(batch) }
            }
        } catch {
            pendingCheckpointChange = .none
            rollback(to: 0)
            throw error
        }
        checkpointChangeWritten()
        checkpointCurrent = false
        // `PRAGMA synchronous = FULL` on a store that does not sync each write (tested first: it
        // is false unless asked for), when the commit wrote to the store.
        let syncAfter = syncsEachCommit
            && (!commitTables.isEmpty || !pendingClears.isEmpty || !dirtyCatalog.isEmpty || pendingVersionRecord != nil || viewsDirty)
        notifyCommitted(dirtyTables.values, schema: dirtyCatalog)   // observation (Observation/)
        undoLog.removeAll(keepingCapacity: undoLog.count <= Self.keptCapacity)
        for table in dirtyTables.values where !table.isTransient { table.overlay.removeAll(keepingCapacity: table.overlay.count <= Self.keptCapacity) }
        dirtyTables.removeAll(keepingCapacity: true)
        commitTables.removeAll(keepingCapacity: true)
        dirtyCatalog.removeAll()
        schemaChangePending = false
        pendingClears.removeAll()
        pendingVersionRecord = nil
        viewsDirty = false
        // The commit is in the store; a failed sync throws here (and the store refuses later writes).
        if syncAfter { try store.sync() }
    }

    /// Adds the commit's catalog, schema-version, views and checkpoint records (CommitBatch).
    func addCatalogRecords(to batch: inout LogStore.WriteBatch) throws {
        if !dirtyCatalog.isEmpty {
            let space = try catalogKeySpace()
            for name in dirtyCatalog.sorted() {
                if let table = tables[name] {
                    batch.put(CatalogCodec.encode(table), forKey: Array(name.utf8), space: space)
                } else {
                    batch.delete(forKey: Array(name.utf8), space: space)
                }
            }
        }
        if let pendingVersionRecord {
            batch.put(pendingVersionRecord, forKey: SchemaVersionRecord.key, space: try catalogKeySpace())
        }
        if viewsDirty { try putViewsRecord(into: &batch) }
        // The checkpoint's journal record, or the record's delete, in the same atomic batch.
        addCheckpointChange(to: &batch)
    }

    func catalogKeySpace() throws -> LogStore.KeySpace {
        if let catalogSpace { return catalogSpace }
        let space = try store.space(named: "dao.catalog")
        catalogSpace = space
        return space
    }

    // MARK: Rows

    /// The row `rowid` of `table` as the statement sees it (its own writes included), decoded
    /// from the store's record (or the statement's pending bytes); nil if absent. With
    /// `columns` (sorted positions), only those are decoded; the others read as NULL.
    func row(_ table: TableState, _ rowid: Int64, columns: [Int]? = nil) throws -> [SQLValue]? {
        if let columns, columns.isEmpty {
            guard table.contains(rowid: rowid) else { return nil }
            var values = [SQLValue].filled(.null, count: table.definition.columns.count)
            rowsVisited += 1
            if let alias = table.definition.rowidColumn { values[alias] = .integer(rowid) }
            return values
        }
        let found = try table.withBytes(of: rowid, in: store) { buffer in
            columns.map { RowCodec.decode(buffer, columns: $0) } ?? RowCodec.decode(buffer)
        }
        guard let decoded = found else { return nil }
        rowsVisited += 1
        guard var values = decoded else {
            throw StoreError.corrupt("DAO table \(table.name): row \(rowid) does not decode")
        }
        complete(&values, table: table, rowid: rowid)
        return values
    }

    /// Decodes row `rowid` into `values` in place (one slot per column; columns not asked for
    /// are left as they are, NULL when the caller started from NULLs). False when absent.
    func load(_ table: TableState, _ rowid: Int64, columns: [Int]?, into values: inout [SQLValue]) throws -> Bool {
        if values.count != table.definition.columns.count {
            values = [SQLValue].filled(.null, count: table.definition.columns.count)
        }
        let stored: Int?
        if columns?.isEmpty == true {
            // No column needed: only whether the row exists (the rowid order says).
            guard table.contains(rowid: rowid) else { return false }
            stored = values.count
        } else {
            // The columns go to the read's closure as a buffer: captured as the array, it was
            // retained and released around every row read.
            func read(_ list: UnsafeBufferPointer<Int>?) throws -> Int?? {
                try table.withBytes(of: rowid, in: store) { RowCodec.decode($0, columnList: list, into: &values) }
            }
            let found = try columns.map { try $0.withUnsafeBufferPointer { try read($0) } } ?? read(nil)
            guard let found else { return false }
            guard let found else { throw StoreError.corrupt("DAO table \(table.name): row \(rowid) does not decode") }
            stored = found
        }
        rowsVisited += 1
        if let stored, stored < values.count {
            // Columns added after the row was written read as their defaults.
            let definitions = table.definition.columns
            for index in stored..<values.count where columns.map({ $0.contains(index) }) ?? true {
                values[index] = definitions[index].addedColumnValue
            }
        }
        if let alias = table.definition.rowidColumn { values[alias] = .integer(rowid) }
        return true
    }

    /// Fills the rowid alias and the columns added after the row was written (their defaults).
    func complete(_ values: inout [SQLValue], table: TableState, rowid: Int64) {
        let columns = table.definition.columns
        if values.count < columns.count {
            for index in values.count..<columns.count {
                values.append(columns[index].addedColumnValue)
            }
        }
        if let alias = table.definition.rowidColumn { values[alias] = .integer(rowid) }
    }

    func markDirty(_ table: TableState) {
        let id = ObjectIdentifier(table)
        if dirtyTables[id] == nil {
            // The first change of the table in this transaction: may its rows spill? Not in a
            // store that encrypts (now: a rekey may have added a key since it was opened).
            table.overlay.spillPath = table.isTransient || store.hasWriteKey ? nil : pendingSpillPath
            dirtyTables[id] = table
        }
    }

    /// Where a table's pending rows spill past `PendingRows.memoryBudget` (FORMAT.md
    /// "Directory layout"): nil for a read-only store. A store with a write key never gets it
    /// (`markDirty`): its rows must not reach the disk in plaintext outside its records.
    let pendingSpillPath: String?

    func insertRow(_ table: TableState, rowid: Int64, row: [SQLValue]) {
        let previous = table.overlay[rowid]
        let skipped = table.definition.rowidColumn
        table.overlay.set(rowid) { RowCodec.encode(row, skipping: skipped, appendingTo: &$0) }
        markDirty(table)
        table.insertRowid(rowid)
        table.insertIntoIndexes(rowid: rowid, row: row)
        if rowCapture.mode != .none { rowCapture.inserted(table, rowid, row) }
        undoLog.append(.insertedRow(table, rowid: rowid, previous: previous))
    }

    func deleteRow(_ table: TableState, rowid: Int64, row: [SQLValue]) {
        let previous = table.overlay[rowid]
        table.overlay.setDeleted(rowid)
        markDirty(table)
        table.removeRowid(rowid)
        table.removeFromIndexes(rowid: rowid, row: row)
        if rowCapture.mode != .none { rowCapture.deleted(table, rowid, row) }
        undoLog.append(.deletedRow(table, rowid: rowid, previous: previous))
    }

    func table(named name: String) throws -> TableState {
        guard let table = try tableIfExists(named: name) else { throw DAOError.noSuchTable(name) }
        return table
    }

    /// The table a name stands for: a WITH table of the running statement, then a TEMP table,
    /// then a stored one; nil when none (it may be a view).
    /// - Throws: what computing a WITH table throws.
    func tableIfExists(named name: String) throws -> TableState? {
        if !transientTables.isEmpty || !commonTables.isEmpty, let table = try transientTable(named: name.lowercased()) { return table }
        if !temporaryTables.isEmpty, let table = temporaryTables[name.lowercased()] { return table }
        return tables[name.lowercased()]
    }
}

/// A statement parsed once: its tree and its parameter slots. A class: the cache hands it out
/// on every run, and copying the tree's fields (a struct) cost ~600 instructions a statement.
final class ParsedStatement: Sendable {
    let statement: Statement
    let parameterCount: Int
    let parameterNames: [String: Int]
    /// Its resolution against the schema, reused while the schema is unchanged.
    let compiled = CompiledBox()

    init(statement: Statement, parameterCount: Int, parameterNames: [String: Int]) {
        self.statement = statement
        self.parameterCount = parameterCount
        self.parameterNames = parameterNames
    }

    func bind(named arguments: [String: DAOValue]) -> [SQLValue] {
        var values = [SQLValue].filled(.null, count: parameterCount)
        for (name, slot) in parameterNames {
            if let value = arguments[name] { values[slot] = SQLValue(value) }
        }
        return values
    }
}

/// A statement parsed once and run many times with different arguments (`SQLDatabase.prepare`).
public struct SQLStatement: Sendable {
    let database: SQLDatabase
    let parsed: ParsedStatement

    /// Runs the statement binding `?` parameters in order.
    /// - Throws: as `SQLDatabase.execute(_:arguments:)`.
    @discardableResult
    public func execute(arguments: [DAOValue] = []) throws -> SQLResult {
        try database.withStatementLock { try database.runPublishing(parsed, parameters: arguments.map(SQLValue.init)) }
    }

    /// Runs the statement binding `:name` parameters by name.
    @discardableResult
    public func execute(named arguments: [String: DAOValue]) throws -> SQLResult {
        try database.withStatementLock { try database.runPublishing(parsed, parameters: parsed.bind(named: arguments)) }
    }

    /// The number of parameter slots of the statement.
    public var parameterCount: Int { parsed.parameterCount }
}

/// The one database per store.
final class DatabaseRegistry: @unchecked Sendable {
    static let shared = DatabaseRegistry()
    private let lock = NSLock()
    private var databases: [ObjectIdentifier: SQLDatabase] = [:]

    /// Whether `store` was closed (any call then throws).
    static func isClosed(_ store: LogStore) -> Bool {
        store.isClosed
    }

    /// The database of the store whose identifier is `storeID`, if one was attached. Called
    /// by that store while it closes: the store is alive, so no other store has its identifier.
    func existingDatabase(storeID: ObjectIdentifier) -> SQLDatabase? {
        lock.lock()
        defer { lock.unlock() }
        guard let database = databases[storeID], ObjectIdentifier(database.store) == storeID else { return nil }
        return database
    }

    func database(for store: LogStore, create: () throws -> SQLDatabase) throws -> SQLDatabase {
        lock.lock()
        defer { lock.unlock() }
        if let existing = databases[ObjectIdentifier(store)], existing.store === store { return existing }
        // Forget databases of closed stores (a closed store throws on any read).
        for (key, database) in databases where DatabaseRegistry.isClosed(database.store) { databases[key] = nil }
        let database = try create()
        databases[ObjectIdentifier(store)] = database
        return database
    }
}
