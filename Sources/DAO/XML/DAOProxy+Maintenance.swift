import Foundation

/// The maintenance calls of APDAOProtocol (mpaas-docs functions/DAO/proxy.md) beyond API.swift's.
extension DAOProxy {
    /// `deleteTablesWithRegex:autovacuum:progress:`: drops every table whose name `pattern`
    /// matches (as `deleteTables(matchingRegex:)`), telling `progress` the percentage done
    /// (0 to 100, after each table; 100 at the end even when none matched), then, when
    /// `autovacuum`, reclaims the space (`vacuumDatabase()`). The manual: "Make sure you delete
    /// tables operated by this proxy only".
    /// - Throws: as `deleteTables(matchingRegex:)`, and the store's error from the vacuum.
    public func deleteTables(matchingRegex pattern: String, autovacuum: Bool, progress: ((Float) -> Void)?) throws {
        let regex = try NSRegularExpression(pattern: pattern)
        let db = try database()
        let tables = try tableDefinitions(db).map(\.name).filter { table in
            table != Self.versionsTable
                && regex.firstMatch(in: table, range: NSRange(table.startIndex..<table.endIndex, in: table)) != nil
        }
        for (index, table) in tables.enumerated() {
            try deleteTables(matchingRegex: "^" + NSRegularExpression.escapedPattern(for: table) + "$")
            progress?(Float(index + 1) * 100 / Float(tables.count))
        }
        if tables.isEmpty { progress?(100) }
        if autovacuum { try vacuumDatabase() }
    }

    /// `vacuumDatabase`: reclaims the space of deleted rows and tables (compacts the store).
    /// - Throws: the store's error.
    public func vacuumDatabase() throws {
        try database().vacuum()
    }

    /// `prepareParallelConnection:`: kept so ported code compiles; does nothing. The source
    /// opens extra SQLite connections for `parallel="true"` selects; here every proxy of a store
    /// shares its one engine, which runs a select without waiting for the store's writes to
    /// reach disk (a select does wait while another thread holds a transaction open).
    public func prepareParallelConnection(_ autoclose: TimeInterval) {}
}

extension DAOProxy {
    /// `daoTransaction:` (transaction.md): `beginTransaction()`, `commit()` or `rollback()` of
    /// the store this proxy's tables are in, so `.begin`, many calls, then `.commit` (or
    /// `.rollback` when one failed) makes them one transaction.
    /// - Throws: the engine's error (`.begin` inside an open transaction, `.commit` or
    ///   `.rollback` with none open).
    public func daoTransaction(_ action: DAOTransaction) throws {
        switch action {
        case .begin: try beginTransaction()
        case .commit: try commit()
        case .rollback: try rollback()
        }
    }
}
