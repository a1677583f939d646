import Foundation
import LogStore

/// Table setup and management: the table versions, the initializer, upgrade blocks, and the
/// schema calls of the proxy.
///
/// Each config table's version (the config version "x.y" its schema is at) is kept by the
/// engine: `SQLDatabase` in the store's schema versions record, with the versioned open's version
/// and the migrator's applied migrations (Migration/SQLDatabase+ConfigVersions.swift; an older
/// store's `TableVersions` table is moved into it); other engines (SQLite in tests) in the
/// `TableVersions` table (`SQLStatementRunner.configVersion(ofTable:)`).
extension DAOProxy {
    /// The table older builds (and engines without the versions record) keep versions in.
    static let versionsTable = "TableVersions"

    /// Sets `table` up on `db`'s store once per proxy: reads its stored version, resets or
    /// upgrades it when the config's version is newer, runs the initializer, records the version.
    /// All of it is one transaction: a failing upgrade block leaves table and version as they
    /// were. Inside a transaction of the caller's the setup joins it and is done again on the
    /// next call (the caller may roll it back).
    /// - Throws: the engine's errors; an upgrade block's error after telling the handler
    ///   `upgradeFailed`.
    func ensureSetUp(_ db: any SQLStatementRunner, table: String) throws {
        let id = ObjectIdentifier(db)
        if state.withLock({ $0.initialized[id]?.tables.contains(table) ?? false }) { return }
        let joined = db.ownsTransaction
        // The engine's transaction is taken before the lock: a thread holding the lock never
        // waits for another's transaction, so two first calls cannot deadlock.
        try inTransaction(db) {
            setupLock.lock()
            defer { setupLock.unlock() }
            if state.withLock({ $0.initialized[id]?.tables.contains(table) ?? false }) { return }
            // A call from the event handler during the setup (same thread, the lock is
            // recursive) goes on without setting up again.
            guard state.withLock({ $0.settingUp.insert(table).inserted }) else { return }
            defer { _ = state.withLock { $0.settingUp.remove(table) } }
            try setUp(db, table: table)
        }
        if joined { return }
        state.withLock { state in
            var entry = state.initialized[id] ?? (runner: db, tables: [])
            entry.tables.insert(table)
            state.initialized[id] = entry
        }
    }

    private func setUp(_ db: any SQLStatementRunner, table: String) throws {
        let handler = eventHandler
        let renderer = SQLRenderer(config: config, tableName: table, encrypt: nil)
        let empty = ArgumentScope(arguments: [:], globals: globalArguments)
        let versioned = !table.isEmpty && config.version != nil
        let stored = versioned ? try db.configVersion(ofTable: table) : nil
        var recordVersion = stored == nil
        if let from = stored, let to = config.version, let fromNumber = VersionNumber(from), let toNumber = VersionNumber(to),
           fromNumber < toNumber {
            if handler?(.shouldUpgrade(table: table, from: from, to: to)) ?? true {
                let tooOld = config.upgradeMinVersion.flatMap(VersionNumber.init).map { fromNumber < $0 } ?? false
                if config.resetOnUpgrade || tooOld {
                    if try tableExists(table, db: db) {
                        _ = try db.execute("DROP TABLE \(table)")
                        _ = handler?(.tableDeleted(table))
                    }
                } else {
                    for upgrade in config.upgrades {
                        guard let version = VersionNumber(upgrade.toVersion), fromNumber < version, version <= toNumber else { continue }
                        do {
                            var run = Run()
                            _ = try execute(try renderer.render(upgrade.statements, scope: empty), on: db, run: &run)
                        } catch {
                            _ = handler?(.upgradeFailed(table: table, message: "upgrade to \(upgrade.toVersion): \(error)"))
                            throw error
                        }
                    }
                }
                recordVersion = true
            }
        }
        if let initializer = config.initializer, let method = config.methods[initializer]?.first {
            let existed = table.isEmpty ? true : try tableExists(table, db: db)
            var run = Run()
            _ = try execute(try renderer.render(method.statements, scope: empty), on: db, run: &run)
            if !existed, try tableExists(table, db: db) { _ = handler?(.tableCreated(table)) }
        }
        // In the setup's transaction: the version changes with the schema or not at all. A
        // version kept as it was is recorded again (an older store's table moves into the record).
        if versioned, let version = recordVersion ? config.version : stored {
            try db.setConfigVersion(version, ofTable: table)
        }
    }

    /// Forgets that `table` was set up (after it was dropped), on every store.
    private func forgetSetUp(_ table: String) {
        state.withLock { state in
            for key in state.initialized.keys { state.initialized[key]?.tables.remove(table) }
        }
    }

    // MARK: Schema calls

    /// Whether table `name` exists in the store.
    /// - Throws: `StoreError` when the store cannot be read.
    public func tableExists(_ name: String) throws -> Bool {
        try tableExists(name, db: database())
    }

    func tableExists(_ name: String, db: any SQLStatementRunner) throws -> Bool {
        if let tables = try? tableDefinitions(db) { return tables.contains { $0.name.lowercased() == name.lowercased() } }
        do {
            _ = try db.execute("SELECT * FROM \(name) LIMIT 0")
            return true
        } catch DAOError.noSuchTable {
            return false
        }
    }

    /// The CREATE TABLE statement of the proxy's table (its column names when the engine does not
    /// keep the statement), or "" when the table does not exist.
    /// - Throws: the engine's errors.
    public func schema() throws -> String {
        let db = try database()
        let table = tableName
        if let tables = try? tableDefinitions(db) {
            return tables.first { $0.name.lowercased() == table.lowercased() }?.sql ?? ""
        }
        guard try tableExists(table, db: db) else { return "" }
        let columns = try db.execute("SELECT * FROM \(table) LIMIT 0").columns
        return "\(table) (\(columns.joined(separator: ", ")))"
    }

    /// The config version ("1.1") the proxy's table's schema is at in the store, as its last
    /// setup recorded it; nil when the table was never set up or its config keeps no version.
    /// On a LogStore it is kept in the store's schema versions record (FORMAT.md "DAO schema
    /// versions"), the one the versioned open and `DatabaseMigrator` use.
    /// - Throws: the engine's errors (`StoreError` when the store cannot be read).
    public func storedVersion() throws -> String? {
        try database().configVersion(ofTable: tableName)
    }

    /// Drops the proxy's table and forgets its version; the next call sets it up again.
    /// - Throws: the engine's errors.
    public func deleteTable() throws {
        let db = try database()
        try drop(tableName, db: db)
    }

    /// Drops every table of the store whose name `pattern` matches (NSRegularExpression, a
    /// match anywhere in the name), except `TableVersions`.
    /// - Throws: `DAOError.unsupported` when the engine cannot list tables; the regex's error.
    public func deleteTables(matchingRegex pattern: String) throws {
        let regex = try NSRegularExpression(pattern: pattern)
        let db = try database()
        for table in try tableDefinitions(db).map(\.name) where table != Self.versionsTable {
            let range = NSRange(table.startIndex..<table.endIndex, in: table)
            if regex.firstMatch(in: table, range: range) != nil { try drop(table, db: db) }
        }
    }

    private func drop(_ table: String, db: any SQLStatementRunner) throws {
        let existed = try tableExists(table, db: db)
        _ = try db.execute("DROP TABLE IF EXISTS \(table)")
        try db.setConfigVersion(nil, ofTable: table)
        forgetSetUp(table)
        if existed { _ = eventHandler?(.tableDeleted(table)) }
    }

    func tableDefinitions(_ db: any SQLStatementRunner) throws -> [(name: String, sql: String)] {
        try db.tableDefinitions()
    }
}
