/// Why a versioned open (`SQLDatabase.openVersion`) or a migration (`DatabaseMigrator`) did not
/// run. Whatever the case, the tables, their rows and the stored versions are as they were.
public enum SchemaVersionError: Error, Sendable, Equatable {
    /// The version asked for is below 1 (0 means "never versioned", as SQLite's user_version).
    case invalidVersion(Int)
    /// The store's tables are at `stored`, above the `requested` version, and no `onDowngrade`
    /// was given (SQLiteOpenHelper's default): an older app refuses a newer schema.
    case downgradeRefused(stored: Int, requested: Int)
    /// The named callback or migration ended the transaction it runs in (COMMIT or ROLLBACK):
    /// its changes are rolled back when they still can be; the version is not written.
    case transactionEnded(String)
    /// Two migrations were registered with this name.
    case duplicateMigration(String)
    /// `migrate(_:upTo:)` names a migration that was not registered.
    case noSuchMigration(String)
}

/// What a versioned open (`SQLDatabase.openVersion`) did.
public enum SchemaVersionChange: Sendable, Equatable {
    /// The tables were already at the version: no callback ran.
    case unchanged(version: Int)
    /// The store had no version: `onCreate` ran.
    case created(version: Int)
    /// The store was at a lower version: `onUpgrade` ran.
    case upgraded(from: Int, to: Int)
    /// The store was at a higher version: `onDowngrade` ran.
    case downgraded(from: Int, to: Int)
}
