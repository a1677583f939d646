/// A typed data access object over one `DAORecord` type's table (OrmLite's `Dao<T, ID>`).
///
/// Made by `store.dao(for: User.self)`, which creates the table (and its unique columns and
/// indexes) when it does not exist. Statements are generated with `?` parameters and quoted
/// identifiers and run through the store's `SQLDatabase`; every column name a caller passes is
/// checked against the record's coding keys first (`DAOError.noSuchColumn` otherwise).
///
/// Rows map to records through `DAORowEncoder` / `DAORowDecoder`. Each call is one statement
/// (atomic); `callBatchTasks` groups calls into one transaction. Not thread-safe by itself;
/// the engine serializes statements.
public final class Dao<T: DAORecord> {
    let runner: any StatementRunner
    private let schema: TableSchema
    let columns: [DAOColumnProbe.Column]
    /// The record's column names (its coding keys).
    let columnNames: Set<String>
    private let selectList: String
    private let encoder = DAORowEncoder()
    let decoder = DAORowDecoder()

    /// The table's name.
    var tableName: String { schema.name }

    /// A Dao over `runner`'s table for `T`, created when missing.
    /// - Throws: `DAOError.unsupported` / `.noSuchColumn` when the schema does not fit the
    ///   record type, the engine's errors when the table cannot be created.
    init(runner: any StatementRunner) throws {
        self.runner = runner
        self.schema = T.table
        self.columns = try DAOColumnProbe.columns(of: T.self)
        self.columnNames = Set(columns.map(\.name))
        self.selectList = columns.map { SQLIdentifier.quoted($0.name) }.joined(separator: ", ")
        try validateSchema()
        try createTableIfMissing()
    }

    private func validateSchema() throws {
        for column in [schema.primaryKey] + schema.unique + schema.indexes.flatMap({ $0 }) where !columnNames.contains(column) {
            throw DAOError.noSuchColumn("\(schema.name).\(column) (not a coding key of \(T.self))")
        }
        if schema.indexes.contains(where: \.isEmpty) {
            throw DAOError.unsupported("an index of \(schema.name) with no columns")
        }
        if schema.generatedID, let key = columns.first(where: { $0.name == schema.primaryKey }), key.affinity != .integer {
            throw DAOError.unsupported("generated id \(schema.name).\(schema.primaryKey) must be an integer property")
        }
    }

    /// The CREATE TABLE and CREATE INDEX statements of the schema.
    var creationStatements: [String] {
        let table = SQLIdentifier.quoted(schema.name)
        let definitions = columns.map { column -> String in
            var definition = "\(SQLIdentifier.quoted(column.name)) \(column.affinity.rawValue)"
            if column.name == schema.primaryKey {
                definition += schema.generatedID ? " PRIMARY KEY AUTOINCREMENT" : " PRIMARY KEY"
            } else if schema.unique.contains(column.name) {
                definition += " UNIQUE"
            }
            return definition
        }
        var statements = ["CREATE TABLE IF NOT EXISTS \(table) (\(definitions.joined(separator: ", ")))"]
        for index in schema.indexes {
            let name = SQLIdentifier.quoted(([schema.name] + index + ["idx"]).joined(separator: "_"))
            let list = index.map(SQLIdentifier.quoted).joined(separator: ", ")
            statements.append("CREATE INDEX IF NOT EXISTS \(name) ON \(table) (\(list))")
        }
        return statements
    }

    private func createTableIfMissing() throws {
        for statement in creationStatements { _ = try runner.execute(statement, arguments: []) }
    }

    // MARK: - Writing

    /// Inserts `record`; with a generated id and a nil id, sets `record`'s id to the new rowid.
    /// - Throws: `DAOError.constraint` (duplicate key or unique value; the table is unchanged),
    ///   `EncodingError` when the record does not encode as a row.
    public func create(_ record: inout T) throws {
        var row = try encoder.encodeOrdered(record)
        let generates = schema.generatedID && (row.first { $0.column == schema.primaryKey }?.value ?? .null) == .null
        if generates { row.removeAll { $0.column == schema.primaryKey } }
        if row.isEmpty { row = [(schema.primaryKey, .null)] }
        let names = row.map { SQLIdentifier.quoted($0.column) }.joined(separator: ", ")
        let marks = Array(repeating: "?", count: row.count).joined(separator: ", ")
        let result = try runner.execute("INSERT INTO \(SQLIdentifier.quoted(schema.name)) (\(names)) VALUES (\(marks))",
                                        arguments: row.map(\.value))
        if generates {
            var filled = try encoder.encode(record)
            filled[schema.primaryKey] = .integer(result.lastInsertRowId)
            record = try decoder.decode(T.self, from: filled)
        }
    }

    /// Inserts `record` unless a row with its primary key exists; returns the stored record
    /// (the existing one, or `record` with its generated id filled in).
    /// - Throws: as `create(_:)`.
    @discardableResult
    public func createIfNotExists(_ record: T) throws -> T {
        let key = try primaryKeyValue(of: record)
        if key != .null, let existing = try queryForID(key) { return existing }
        var created = record
        try create(&created)
        return created
    }

    /// Updates the row with `record`'s primary key, or inserts `record` when there is none
    /// (or its id is nil). Returns whether it inserted and how many rows changed.
    /// - Throws: as `create(_:)` and `update(_:)`.
    @discardableResult
    public func createOrUpdate(_ record: T) throws -> (created: Bool, changed: Int) {
        try callBatchTasks {
            let key = try primaryKeyValue(of: record)
            if key != .null, try exists(key) {
                return (false, try update(record))
            }
            var created = record
            try create(&created)
            return (true, 1)
        }
    }

    /// Writes every column of `record` to the row with its primary key; returns the rows
    /// changed (0 when there is no such row).
    /// - Throws: `DAOError.constraint` for a nil primary key or a unique violation.
    @discardableResult
    public func update(_ record: T) throws -> Int {
        let row = try encoder.encode(record, columns: columns.map(\.name))
        let key = row[schema.primaryKey] ?? .null
        guard key != .null else {
            throw DAOError.constraint("\(schema.name).\(schema.primaryKey) is NULL: a record needs its primary key to be updated")
        }
        var assignments = columns.filter { $0.name != schema.primaryKey }.map(\.name)
        if assignments.isEmpty { assignments = [schema.primaryKey] }
        let set = assignments.map { "\(SQLIdentifier.quoted($0)) = ?" }.joined(separator: ", ")
        let arguments = assignments.map { row[$0] ?? .null } + [key]
        return try runner.execute("UPDATE \(SQLIdentifier.quoted(schema.name)) SET \(set) WHERE \(SQLIdentifier.quoted(schema.primaryKey)) = ?",
                                  arguments: arguments).changes
    }

    /// Deletes the row with `record`'s primary key; returns the rows deleted (0 or 1).
    /// - Throws: the engine's errors.
    @discardableResult
    public func delete(_ record: T) throws -> Int {
        let key = try primaryKeyValue(of: record)
        guard key != .null else { return 0 }
        return try deleteByID(key)
    }

    /// Deletes the row whose primary key is `id`; returns the rows deleted (0 or 1).
    /// - Throws: the engine's errors.
    @discardableResult
    public func deleteByID(_ id: some DAOValueConvertible) throws -> Int {
        try runner.execute("DELETE FROM \(SQLIdentifier.quoted(schema.name)) WHERE \(SQLIdentifier.quoted(schema.primaryKey)) = ?",
                           arguments: [id.daoValue]).changes
    }

    // MARK: - Reading

    /// The record whose primary key is `id`, nil when there is none.
    /// - Throws: the engine's errors, `DecodingError` when the row does not decode.
    public func queryForID(_ id: some DAOValueConvertible) throws -> T? {
        try records("SELECT \(selectList) FROM \(SQLIdentifier.quoted(schema.name)) WHERE \(SQLIdentifier.quoted(schema.primaryKey)) = ?",
                    [id.daoValue]).first
    }

    /// Every record of the table, in primary-key order.
    /// - Throws: as `queryForID(_:)`.
    public func queryForAll() throws -> [T] {
        try records("SELECT \(selectList) FROM \(SQLIdentifier.quoted(schema.name)) ORDER BY \(SQLIdentifier.quoted(schema.primaryKey))", [])
    }

    /// The records whose `column` equals `value` (`IS NULL` for nil).
    /// - Throws: `DAOError.noSuchColumn` for a column that is not a coding key; as `queryForID(_:)`.
    public func queryForEq(_ column: String, _ value: (any DAOValueConvertible)?) throws -> [T] {
        try queryBuilder().where { $0.eq(column, value) }.query()
    }

    /// How many records the table holds.
    /// - Throws: the engine's errors.
    public func countOf() throws -> Int {
        try count("SELECT count(*) FROM \(SQLIdentifier.quoted(schema.name))", [])
    }

    /// Runs `body` in one transaction: BEGIN before it, COMMIT after it, ROLLBACK when it throws
    /// (and the error is rethrown). Inside an open transaction, `body` simply joins it.
    /// - Throws: `body`'s error, or the engine's errors from BEGIN / COMMIT.
    public func callBatchTasks<R>(_ body: () throws -> R) throws -> R {
        if runner.inTransaction { return try body() }
        _ = try runner.execute("BEGIN", arguments: [])
        do {
            let result = try body()
            _ = try runner.execute("COMMIT", arguments: [])
            return result
        } catch {
            if runner.inTransaction { _ = try? runner.execute("ROLLBACK", arguments: []) }
            throw error
        }
    }

    /// A query builder over this table.
    public func queryBuilder() -> QueryBuilder<T> {
        QueryBuilder(dao: self)
    }

    // MARK: - Helpers for the query builder

    /// The SELECT list of every column, in probe order.
    var selectColumns: String { selectList }

    /// Runs a query selecting `selectColumns` and decodes its rows.
    func records(_ sql: String, _ arguments: [DAOValue]) throws -> [T] {
        let names = columns.map(\.name)
        let result = try runner.execute(sql, arguments: arguments)
        return try result.rows.indices.map { try decoder.decode(T.self, columns: names, rowAt: $0, of: result) }
    }

    /// Runs a `SELECT count(*)` and returns its one value.
    func count(_ sql: String, _ arguments: [DAOValue]) throws -> Int {
        guard case .integer(let n)? = try runner.execute(sql, arguments: arguments).rows.first?.first else {
            throw DAOError.unsupported("count(*) returned no integer")
        }
        return Int(n)
    }

    private func exists(_ key: DAOValue) throws -> Bool {
        try count("SELECT count(*) FROM \(SQLIdentifier.quoted(schema.name)) WHERE \(SQLIdentifier.quoted(schema.primaryKey)) = ?", [key]) > 0
    }

    private func primaryKeyValue(of record: T) throws -> DAOValue {
        try encoder.encode(record)[schema.primaryKey] ?? .null
    }
}
