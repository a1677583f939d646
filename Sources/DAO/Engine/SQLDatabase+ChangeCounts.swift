extension SQLDatabase {
    /// Records what changes() and total_changes() report after `statement` (as SQLite does at
    /// the end of a statement): INSERT, UPDATE and DELETE set the last count (0 when they fail)
    /// and add to the total; other statements leave both.
    func noteChanges(of statement: Statement, _ count: Int) {
        switch statement {
        case .insert, .update, .delete:
            lastChangesValue = count
            totalChangesValue &+= count
        default:
            break
        }
    }
}
