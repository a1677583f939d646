import Foundation

/// What a DAO proxy needs of an SQL engine: run one statement, say whether a transaction is
/// open, and list the tables. `SQLDatabase` is the product's; tests also run proxies on SQLite
/// through it.
protocol SQLStatementRunner: AnyObject {
    /// Runs one statement with `?` parameters bound in order.
    func execute(_ sql: String, arguments: [DAOValue]) throws -> SQLResult
    /// Whether a transaction (BEGIN without COMMIT or ROLLBACK yet) is open and belongs to the
    /// calling thread: its statements then join it; another thread's make the caller wait.
    var ownsTransaction: Bool { get }
    /// The tables and their CREATE TABLE text.
    func tableDefinitions() throws -> [(name: String, sql: String)]
    /// Reclaims the space of deleted data.
    func vacuum() throws
    /// The config version an XML config's setup recorded for `table` ("1.1"); nil when none did.
    func configVersion(ofTable table: String) throws -> String?
    /// Records the config version of `table` (nil forgets it): in the transaction the calling
    /// thread has open, otherwise in a transaction of its own.
    func setConfigVersion(_ version: String?, ofTable table: String) throws
}

extension SQLStatementRunner {
    @discardableResult
    func execute(_ sql: String) throws -> SQLResult {
        try execute(sql, arguments: [])
    }

    /// SQLite's VACUUM, for engines that offer it.
    func vacuum() throws {
        _ = try execute("VACUUM")
    }

    /// From the `TableVersions` table, for engines without the schema versions record (SQLite
    /// in tests): `CREATE TABLE IF NOT EXISTS TableVersions (name TEXT PRIMARY KEY, version
    /// TEXT NOT NULL)`, one row per config table.
    func configVersion(ofTable table: String) throws -> String? {
        guard try tableDefinitions().contains(where: { $0.name.lowercased() == DAOProxy.versionsTable.lowercased() }) else { return nil }
        let rows = try execute("SELECT version FROM \(DAOProxy.versionsTable) WHERE name = ?", arguments: [.text(table)]).rows
        if case .text(let version)? = rows.first?.first { return version }
        return nil
    }

    /// Into the `TableVersions` table (see `configVersion(ofTable:)`).
    func setConfigVersion(_ version: String?, ofTable table: String) throws {
        if let version {
            _ = try execute("CREATE TABLE IF NOT EXISTS \(DAOProxy.versionsTable) (name TEXT PRIMARY KEY, version TEXT NOT NULL)")
            _ = try execute("INSERT OR REPLACE INTO \(DAOProxy.versionsTable) (name, version) VALUES (?, ?)",
                            arguments: [.text(table), .text(version)])
        } else if try tableDefinitions().contains(where: { $0.name.lowercased() == DAOProxy.versionsTable.lowercased() }) {
            _ = try execute("DELETE FROM \(DAOProxy.versionsTable) WHERE name = ?", arguments: [.text(table)])
        }
    }

    /// From `sqlite_master`, for engines that offer it.
    func tableDefinitions() throws -> [(name: String, sql: String)] {
        let result = try execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
        return result.rows.compactMap { row in
            guard case .text(let name)? = row.first else { return nil }
            if case .text(let sql)? = row.dropFirst().first { return (name, sql) }
            return (name, "")
        }
    }
}

extension SQLDatabase: SQLStatementRunner {
    var ownsTransaction: Bool {
        withStateLock {
            guard explicitTransaction, let owner = transactionOwner else { return false }
            return pthread_equal(owner, pthread_self()) != 0
        }
    }

    /// Compacts the store (its dropped tables and deleted rows take no more space).
    func vacuum() throws {
        try store.compact()
    }

    /// The tables with the canonical CREATE TABLE text of the catalog.
    func tableDefinitions() throws -> [(name: String, sql: String)] {
        withStateLock { tables.values.map { ($0.name, $0.definition.createSQL) }.sorted { $0.0 < $1.0 } }
    }
}
