import DAO
import LogStore

extension SharedPreferences {
    /// `[APUserPreferences daoTransaction:]` (mpaas-docs functions/DAO/transaction.md): begins,
    /// commits or rolls back a transaction over the DAO tables of this preferences' store. The
    /// page: a proxy made with `userDependent: true` works on `userPreferences`' store (false:
    /// `commonPreferences`'), so this equals the proxy's own `daoTransaction(_:)`; the calling
    /// thread's proxy calls on that store between `.begin` and `.commit` form one transaction.
    /// Key-value writes are not part of it.
    /// - Throws: `StoreError` when the store is closed or failed to open; the engine's error
    ///   (`.begin` inside an open transaction, `.commit` or `.rollback` with none open).
    public func daoTransaction(_ action: DAOTransaction) throws {
        let database = try SQLDatabase.attached(to: store())
        switch action {
        case .begin: _ = try database.execute("BEGIN")
        case .commit: _ = try database.execute("COMMIT")
        case .rollback: _ = try database.execute("ROLLBACK")
        }
    }
}
