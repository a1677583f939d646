import LogStore

/// Named schema migrations of a store's tables, in the shape of GRDB's `DatabaseMigrator`:
/// register them in order, then `migrate` runs those not applied yet, each once, in
/// registration order, each in one transaction (one atomic write batch of the store) together
/// with the record that it was applied (FORMAT.md "DAO schema versions", the same record as
/// `SQLDatabase.openVersion`'s version). A migration that throws, or a crash before its batch is
/// on disk, leaves its changes and its record out; the ones before it stay applied.
///
/// ```swift
/// var migrator = DatabaseMigrator()
/// migrator.registerMigration("v1") { db in
///     try db.execute("CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
/// }
/// migrator.registerMigration("v2") { db in
///     try db.execute("ALTER TABLE player ADD COLUMN score INTEGER NOT NULL DEFAULT 0")
/// }
/// try migrator.migrate(SQLDatabase.attached(to: store))
/// ```
///
/// Not `Sendable`: the migrations are closures; build the migrator where it runs.
public struct DatabaseMigrator {
    private var registered: [(name: String, migrate: (SQLDatabase) throws -> Void)] = []
    private var duplicate: String?

    /// For development: when the store holds an applied migration that is not registered (one
    /// renamed, removed or replaced since), `migrate` first drops every table and forgets every
    /// applied migration, in one transaction, then runs them all. Off by default. It cannot see
    /// a changed body of a migration that kept its name: rename it to have it run again.
    public var eraseDatabaseOnSchemaChange = false

    /// An empty migrator.
    public init() {}

    /// Adds the migration `name`, run after those registered before it.
    /// A name registered twice makes `migrate` throw `SchemaVersionError.duplicateMigration`
    /// (this call does not throw, so registrations read as a list).
    /// - Parameter migrate: runs the migration's statements on the database it gets; it must
    ///   not COMMIT or ROLLBACK.
    public mutating func registerMigration(_ name: String, migrate: @escaping (SQLDatabase) throws -> Void) {
        if duplicate == nil, registered.contains(where: { $0.name == name }) { duplicate = name }
        registered.append((name, migrate))
    }

    /// The names of the registered migrations, in registration order.
    public var migrations: [String] { registered.map(\.name) }

    /// Runs every registered migration not applied yet, in registration order.
    /// - Throws: `SchemaVersionError.duplicateMigration`; what a migration throws (it and the
    ///   ones after it are then not applied; those before stay applied); `.transactionEnded`;
    ///   the engine's and the store's errors.
    /// - Complexity: one read of the versions record, then one transaction per migration run.
    public func migrate(_ database: SQLDatabase) throws {
        try migrate(database, upToIndex: registered.count)
    }

    /// Runs the registered migrations up to and including `target` that are not applied yet.
    /// - Throws: `SchemaVersionError.noSuchMigration` when `target` is not registered; as
    ///   `migrate(_:)` otherwise.
    public func migrate(_ database: SQLDatabase, upTo target: String) throws {
        guard let index = registered.firstIndex(where: { $0.name == target }) else {
            throw SchemaVersionError.noSuchMigration(target)
        }
        try migrate(database, upToIndex: index + 1)
    }

    /// The names of the registered migrations the store has applied, in registration order.
    /// - Throws: `StoreError` from the store, `.corrupt` when the record does not decode.
    public func appliedMigrations(_ database: SQLDatabase) throws -> [String] {
        let applied = Set(try database.readVersionRecord().appliedMigrations)
        return migrations.filter(applied.contains)
    }

    /// Whether every registered migration has been applied.
    /// - Throws: as `appliedMigrations(_:)`.
    public func hasCompletedMigrations(_ database: SQLDatabase) throws -> Bool {
        try appliedMigrations(database).count == Set(migrations).count
    }

    private func migrate(_ database: SQLDatabase, upToIndex end: Int) throws {
        if let duplicate { throw SchemaVersionError.duplicateMigration(duplicate) }
        var applied = Set(try database.readVersionRecord().appliedMigrations)
        if eraseDatabaseOnSchemaChange, !applied.isSubset(of: Set(migrations)) {
            try database.inSchemaTransaction("erasing the database") { record in
                for name in database.tableNames() { try database.execute("DROP TABLE \(SQLIdentifier.quoted(name))") }
                var erased = record
                erased.appliedMigrations = []
                erased.configVersions = [:]   // the XML configs' tables are gone too
                return ((), erased)
            }
            applied = []
        }
        for (name, body) in registered.prefix(end) where !applied.contains(name) {
            try database.inSchemaTransaction("migration \(name)") { record in
                // Read again inside the transaction: another migrator may have applied it.
                guard !record.appliedMigrations.contains(name) else { return ((), nil) }
                try body(database)
                var updated = record
                updated.appliedMigrations.append(name)
                return ((), updated)
            }
        }
    }
}
