/// SAVEPOINT, RELEASE and ROLLBACK TO, as SQLite runs them: nested points inside a transaction
/// that a transaction's changes can be rolled back to, each a mark in the undo log.
///
/// A SAVEPOINT outside a transaction begins one (as BEGIN DEFERRED), and releasing that
/// outermost savepoint commits it, as COMMIT would (one atomic batch of the store). ROLLBACK TO
/// undoes every change made since the savepoint, in memory (nothing was written yet), and keeps
/// the savepoint and the transaction open; RELEASE forgets the savepoint and those after it and
/// keeps their changes in the transaction.
struct Savepoint {
    /// As written; matched case-insensitively.
    let name: String
    /// The undo log's length when it was opened.
    let mark: Int
    /// Whether it began the transaction (then releasing it commits).
    let beganTransaction: Bool
}

extension SQLDatabase {
    func openSavepoint(_ name: String) {
        let began = !explicitTransaction
        explicitTransaction = true
        savepoints.append(Savepoint(name: name, mark: undoLog.count, beganTransaction: began))
    }

    /// - Throws: `SQLExecutionError` "no such savepoint: name"; what COMMIT throws when the
    ///   savepoint began the transaction (the transaction stays open then, as after a failed
    ///   COMMIT).
    func releaseSavepoint(_ name: String) throws {
        let position = try savepointPosition(name)
        if savepoints[position].beganTransaction {
            try store.checkNoFailedSync()
            try commit()
            explicitTransaction = false
        } else {
            savepoints.removeSubrange(position...)
        }
    }

    /// - Throws: `SQLExecutionError` "no such savepoint: name".
    func rollbackToSavepoint(_ name: String) throws {
        let position = try savepointPosition(name)
        rollback(to: savepoints[position].mark)
        savepoints.removeSubrange((position + 1)...)
    }

    /// The newest open savepoint named `name`.
    private func savepointPosition(_ name: String) throws -> Int {
        let key = name.lowercased()
        guard let position = savepoints.lastIndex(where: { $0.name.lowercased() == key }) else {
            throw SQLExecutionError("no such savepoint: \(name)")
        }
        return position
    }
}
