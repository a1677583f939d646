/// VACUUM and ANALYZE, which apps and their frameworks send to keep a database in shape.
extension SQLDatabase {
    /// `VACUUM [schema]`: SQLite rebuilds its file without the space deleted and replaced rows
    /// left; the store's compaction (`LogStore.compact()`) does that for its segments: it
    /// rewrites the live records and drops the rest.
    /// - Throws: "cannot VACUUM from within a transaction", "unknown database x" for a schema
    ///   other than main and temp (as SQLite), what the compaction throws.
    func vacuum(_ schema: String?) throws {
        if let schema, !["main", "temp"].contains(schema.lowercased()) { throw SQLExecutionError("unknown database \(schema)") }
        guard !explicitTransaction else { throw SQLExecutionError("cannot VACUUM from within a transaction") }
        try store.compact()
    }

    /// `ANALYZE [[schema.]table-or-index]`: SQLite gathers statistics (sqlite_stat1) that its
    /// planner then reads. This planner estimates as SQLite does without them (an equality
    /// finds 10 rows, a range a share of the table), so there is nothing to gather and no
    /// statistics table is made; the name is checked as SQLite checks it.
    /// - Throws: "unknown database x", "no such table: x" for a name that is neither a table
    ///   nor an index (nor, alone, a schema).
    func analyze(schema: String?, name: String?) throws {
        if let schema, !["main", "temp"].contains(schema.lowercased()) { throw SQLExecutionError("unknown database \(schema)") }
        guard let name else { return }
        if schema == nil, ["main", "temp"].contains(name.lowercased()) { return }
        if try tableIfExists(named: name) != nil || indexNamed(name) != nil { return }
        throw SQLExecutionError("no such table: \(name)")
    }
}
