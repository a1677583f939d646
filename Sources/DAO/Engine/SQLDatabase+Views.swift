import LogStore

/// A view: a named SELECT that queries use as a subquery in FROM.
struct ViewDefinition {
    let name: String
    /// Names given to its columns (nil: those of its query).
    let columns: [String]?
    let select: SelectStatement
    /// Its CREATE VIEW statement as written.
    let text: String
}

extension SQLDatabase {
    /// The view `name` (TEMP views first, as SQLite's temp schema; then the schema tables,
    /// SchemaTables.swift), or nil.
    func viewStatement(named name: String) throws -> ViewDefinition? {
        let key = name.lowercased()
        if let view = tempViews[key] ?? views[key] { return view }
        return key.hasPrefix("sqlite_") ? try schemaTable(named: key) : nil
    }

    /// CREATE [TEMP] VIEW: recorded (and, unless TEMP, written to the catalog at commit). As in
    /// SQLite, the query's tables are looked up when the view is used, not now.
    /// - Throws: `SQLExecutionError` when the name is taken or reserved.
    func createView(_ statement: CreateViewStatement) throws {
        let key = statement.name.lowercased()
        if views[key] != nil || tempViews[key] != nil {
            if statement.ifNotExists { return }
            throw SQLExecutionError("view \(statement.name) already exists")
        }
        if tables[key] != nil { throw SQLExecutionError("table \(statement.name) already exists") }
        if indexNamed(key) != nil { throw SQLExecutionError("index \(statement.name) already exists") }
        if key.hasPrefix("sqlite_") { throw SQLExecutionError("object name reserved for internal use: \(statement.name)") }
        let view = ViewDefinition(name: statement.name, columns: statement.columns, select: statement.select, text: statement.text)
        if statement.temporary {
            tempViews[key] = view
            changeSchema([]) { [unowned self] in self.tempViews[key] = nil }
        } else {
            views[key] = view
            viewsDirty = true
            changeSchema([]) { [unowned self] in self.views[key] = nil }
        }
    }

    /// DROP VIEW.
    /// - Throws: `SQLExecutionError` "no such view" (unless IF EXISTS) or when `name` is a table.
    func dropView(_ name: String, ifExists: Bool) throws {
        let key = name.lowercased()
        if let view = tempViews[key] {
            tempViews[key] = nil
            changeSchema([]) { [unowned self] in self.tempViews[key] = view }
        } else if let view = views[key] {
            views[key] = nil
            viewsDirty = true
            changeSchema([]) { [unowned self] in self.views[key] = view }
        } else if tables[key] != nil {
            throw SQLExecutionError("use DROP TABLE to delete table \(name)")
        } else if !ifExists {
            throw SQLExecutionError("no such view: \(name)")
        }
    }

    /// Reads the views record of the catalog (none in stores made before views).
    /// - Throws: `StoreError.corrupt` when it does not decode or holds other than CREATE VIEW.
    func loadViews(space: LogStore.KeySpace) throws {
        guard let value = try store.get(forKey: ViewCatalog.key, space: space) else { return }
        for text in try ViewCatalog.decode(value) {
            guard case .createView(let create) = try Parser.parse(text).0 else {
                throw StoreError.corrupt("DAO views record: not a CREATE VIEW: \(text)")
            }
            views[create.name.lowercased()] = ViewDefinition(name: create.name, columns: create.columns, select: create.select, text: text)
        }
    }

    /// Adds the views record (or its deletion when no view is left) to a commit's batch.
    func putViewsRecord(into batch: inout LogStore.WriteBatch) throws {
        let space = try catalogKeySpace()
        if views.isEmpty {
            batch.delete(forKey: ViewCatalog.key, space: space)
        } else {
            batch.put(ViewCatalog.encode(views.keys.sorted().compactMap { views[$0]?.text }), forKey: ViewCatalog.key, space: space)
        }
    }

    /// The tables (lower-cased) a query reads: those of its FROM clause, of the views it names
    /// and of its subqueries.
    func tablesRead(_ select: SelectStatement) -> Set<String> {
        var names = Set<String>()
        var expanded = Set<String>()
        func visit(_ select: SelectStatement) {
            var sources = select.table.map { [FromItem.Source.table($0)] } ?? []
            sources += select.from.map(\.source)
            for source in sources {
                switch source {
                case .table(let name):
                    let key = name.lowercased()
                    if tables[key] == nil, let view = tempViews[key] ?? views[key] {
                        if expanded.insert(key).inserted { visit(view.select) }
                    } else {
                        names.insert(key)
                    }
                case .subquery(let inner): visit(inner)
                }
            }
            var exprs = select.columns.compactMap { column -> Expr? in
                if case .expression(let expr) = column.kind { return expr }
                return nil
            }
            exprs += [select.whereClause, select.having].compactMap { $0 } + select.groupBy + select.orderBy.map(\.expr)
            exprs += select.from.compactMap(\.on)
            var plans: [(String, SubqueryPlan)] = []
            for expr in exprs { expr.collectSubqueries(into: &plans) }
            for (_, plan) in plans { visit(plan.statement) }
            for term in select.compound { visit(term.select) }
            for table in select.with?.tables ?? [] { visit(table.select) }
        }
        visit(select)
        return names
    }
}
