/// `INDEXED BY` / `NOT INDEXED` on a SELECT's table, and `REINDEX`.
extension SQLDatabase {
    /// Makes the access path follow the hint: NOT INDEXED scans the table in rowid order;
    /// INDEXED BY requires the named index of the table and runs only when the planner chose
    /// that index (SQLite would then read through it too, so rows come in the same order).
    /// - Throws: "no such index" when the table has no index of that name;
    ///   `DAOError.unsupported` when the planner chose another path (SQLite may still use the
    ///   index, scanning it whole: a refusal, never a different order).
    func apply(_ hint: IndexHint, _ table: TableState, _ path: inout AccessPath, _ ordered: inout Bool, _ noOrderBy: Bool) throws {
        switch hint {
        case .notIndexed:
            path = .fullScan(reverse: false)
            ordered = noOrderBy
        case .indexedBy(let name):
            let lowered = name.lowercased()
            guard let position = table.indexes.firstIndex(where: { $0.schema.name.lowercased() == lowered }) else {
                throw SQLExecutionError("no such index: \(name)")
            }
            guard case .indexRanges(let chosen, _, _) = path, chosen == position else {
                throw DAOError.unsupported("INDEXED BY an index the planner does not choose")
            }
        }
    }

    /// REINDEX, of everything, a collation, a table or an index. The indexes are kept in
    /// memory in step with the rows by every statement (and rebuilt from the rows when a store
    /// opens without a current index checkpoint), so there is nothing to rebuild: the name is
    /// checked as SQLite checks it.
    /// - Throws: "unable to identify the object to be reindexed" for an unknown name.
    func reindex(_ name: String?) throws {
        guard let name else { return }
        let lowered = name.lowercased()
        if ["binary", "nocase", "rtrim"].contains(lowered) { return }
        if (try? table(named: name)) != nil || indexNamed(name) != nil { return }
        throw SQLExecutionError("unable to identify the object to be reindexed")
    }
}
