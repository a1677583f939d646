/// ALTER TABLE ... RENAME TO: the table's catalog key and name, its constraints' index names,
/// and the views and triggers that name it, as SQLite renames them.
extension SQLDatabase {
    /// Renames the table `from` to `to`. The views and triggers (the table's own and other
    /// tables') that name it are rewritten to the new name (`TableRenameRewriter`), as SQLite
    /// does; all of it is one schema change, undone together by ROLLBACK.
    /// - Throws: `DAOError.noSuchTable`; `SQLExecutionError` when `to` is taken or reserved, or
    ///   when a rewritten view or trigger does not parse ("error in view v: ..."). Nothing
    ///   changes when it throws.
    func renameTable(_ from: String, to: String) throws {
        let table = try self.table(named: from)
        let oldKey = from.lowercased(), newKey = to.lowercased()
        if tables[newKey] != nil || indexNamed(newKey) != nil {
            throw SQLExecutionError("there is already another table or index with this name: \(to)")
        }
        if newKey.hasPrefix("sqlite_") { throw SQLExecutionError("object name reserved for internal use: \(to)") }
        let viewChanges = try renamedViews(from, to: to)
        let triggerChanges = try renamedTriggers(from, to: to)

        let oldName = table.definition.name
        tables[oldKey] = nil
        tables[newKey] = table
        table.definition.name = to
        // The constraints' indexes are named after the table, as the catalog's CREATE TABLE
        // gives them at the next attach (and as SQLite renames them).
        Self.renameAutoindexes(of: table, from: oldName, to: to)
        for change in viewChanges { setView(change.new, key: change.key, temporary: change.temporary) }
        for change in triggerChanges { change.table.triggers[change.position] = change.new }
        // Foreign keys naming the table as their parent name it anew (SQLite rewrites them).
        var referring: [(TableState, [ForeignKey])] = []
        for other in tables.values where other.definition.foreignKeys.contains(where: { $0.parent.lowercased() == oldKey }) {
            referring.append((other, other.definition.foreignKeys))
            for index in other.definition.foreignKeys.indices where other.definition.foreignKeys[index].parent.lowercased() == oldKey {
                other.definition.foreignKeys[index].parent = to
            }
        }
        changeSchema([oldKey, newKey] + triggerChanges.map(\.table.name) + referring.map(\.0.name)) { [unowned self, unowned table] in
            for (other, keys) in referring { other.definition.foreignKeys = keys }
            self.tables[newKey] = nil
            self.tables[oldKey] = table
            table.definition.name = oldName
            Self.renameAutoindexes(of: table, from: to, to: oldName)
            for change in viewChanges { self.setView(change.old, key: change.key, temporary: change.temporary) }
            for change in triggerChanges { change.table.triggers[change.position] = change.old }
        }
    }

    private struct ViewChange {
        let key: String
        let temporary: Bool
        let old: ViewDefinition
        let new: ViewDefinition
    }

    private struct TriggerChange {
        let table: TableState
        let position: Int
        let old: CreateTriggerStatement
        let new: CreateTriggerStatement
    }

    private func setView(_ view: ViewDefinition, key: String, temporary: Bool) {
        if temporary {
            tempViews[key] = view
        } else {
            views[key] = view
            viewsDirty = true
        }
    }

    /// Every view whose text names the table, with the text rewritten and parsed again.
    private func renamedViews(_ from: String, to: String) throws -> [ViewChange] {
        var changes: [ViewChange] = []
        for (temporary, catalog) in [(false, views), (true, tempViews)] {
            for (key, view) in catalog.sorted(by: { $0.key < $1.key }) {
                guard let text = try TableRenameRewriter.rewrite(view.text, renaming: from, to: to) else { continue }
                guard case .createView(let create) = try? Parser.parse(text).0 else {
                    throw SQLExecutionError("error in view \(view.name) after rename: \(text)")
                }
                let new = ViewDefinition(name: create.name, columns: create.columns, select: create.select, text: text)
                changes.append(ViewChange(key: key, temporary: temporary, old: view, new: new))
            }
        }
        return changes
    }

    /// Every trigger (of any table) whose text names the table, rewritten and parsed again.
    private func renamedTriggers(_ from: String, to: String) throws -> [TriggerChange] {
        var changes: [TriggerChange] = []
        for table in tables.values.sorted(by: { $0.name.lowercased() < $1.name.lowercased() }) {
            for (position, trigger) in table.triggers.enumerated() {
                guard let text = try TableRenameRewriter.rewrite(trigger.sql, renaming: from, to: to) else { continue }
                guard case .createTrigger(let create) = try? Parser.parse(text).0 else {
                    throw SQLExecutionError("error in trigger \(trigger.name) after rename: \(text)")
                }
                changes.append(TriggerChange(table: table, position: position, old: trigger, new: create))
            }
        }
        return changes
    }

    /// Renames `sqlite_autoindex_<from>_...` to `sqlite_autoindex_<to>_...` in the table's
    /// definition and its index states.
    private static func renameAutoindexes(of table: TableState, from: String, to: String) {
        let prefix = "sqlite_autoindex_\(from)_"
        func renamed(_ index: IndexSchema) -> IndexSchema {
            guard index.isConstraint, index.name.hasPrefix(prefix) else { return index }
            var index = index
            index.name = "sqlite_autoindex_\(to)_" + index.name.dropFirst(prefix.count)
            return index
        }
        table.definition.indexes = table.definition.indexes.map(renamed)
        for position in table.indexes.indices { table.indexes[position].schema = renamed(table.indexes[position].schema) }
    }
}
