import LogStore

/// The XML configs' table versions (DAOProxy's setup and `<upgrade>` blocks) kept in the schema
/// versions record (FORMAT.md "DAO schema versions", format 0x02), beside the versioned open's
/// version and the migrator's applied migrations: one record, written in the same batch as the
/// setup's schema and row changes.
///
/// Stores of older builds kept them in a `TableVersions` table (FORMAT.md "XML DAO configs"):
/// read from there while the record has no entry, and moved into the record (the table dropped)
/// by the first setup that records a version, in that setup's transaction.
extension SQLDatabase {
    /// The XML configs' table versions: the config version ("1.1") each config table's schema
    /// is at, by table name, as the store records them (an older store's `TableVersions` rows
    /// included until they are moved into the record).
    /// - Throws: `StoreError` from the store, `.corrupt` when the record does not decode.
    public func configTableVersions() throws -> [String: String] {
        var versions = try legacyConfigVersions()
        for (table, version) in try readVersionRecord().configVersions { versions[table] = version }
        return versions
    }

    func configVersion(ofTable table: String) throws -> String? {
        if let version = try readVersionRecord().configVersions[table] { return version }
        return try legacyConfigVersions()[table]
    }

    func setConfigVersion(_ version: String?, ofTable table: String) throws {
        func updated(_ record: SchemaVersionRecord) throws -> SchemaVersionRecord? {
            var result = record
            let legacy = try legacyConfigVersions()
            for (name, value) in legacy where result.configVersions[name] == nil { result.configVersions[name] = value }
            if hasLegacyConfigVersionsTable { try execute("DROP TABLE \(DAOProxy.versionsTable)") }
            result.configVersions[table] = version
            return result == record && legacy.isEmpty ? nil : result
        }
        if ownsTransaction {
            guard let record = try updated(try readVersionRecord()) else { return }
            let bytes = record.encoded()
            try withStatementLock { pendingVersionRecord = bytes }
        } else {
            try inSchemaTransaction("recording the config version of \(table)") { record in ((), try updated(record)) }
        }
    }

    private var hasLegacyConfigVersionsTable: Bool {
        (try? withStatementLock { tables[DAOProxy.versionsTable.lowercased()] != nil }) ?? false
    }

    /// The rows of an older build's `TableVersions` table; empty when there is none.
    private func legacyConfigVersions() throws -> [String: String] {
        guard hasLegacyConfigVersionsTable else { return [:] }
        var versions: [String: String] = [:]
        for row in try execute("SELECT name, version FROM \(DAOProxy.versionsTable)").rows {
            if case .text(let name)? = row.first, case .text(let version)? = row.dropFirst().first { versions[name] = version }
        }
        return versions
    }
}
