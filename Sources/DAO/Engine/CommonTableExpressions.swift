/// The WITH tables a running statement declared and has not read yet, by lower-cased name,
/// and those being computed (a read of one of those is a circular reference).
struct CommonTableScope {
    var pending: [String: CommonTableExpression] = [:]
    var computing: Set<String> = []

    var isEmpty: Bool { pending.isEmpty }
}

extension SQLDatabase {
    /// Runs `select` (its WITH clause removed) with the tables of `with` visible by name.
    ///
    /// A WITH table is computed the first time a statement reads it (as SQLite, a table that
    /// is never read is never run, so it cannot fail) into a transient table
    /// (`TableState.isTransient`: rows only in memory, never written to the store), which is
    /// then read like any table (FROM name, where a single table goes). A table whose SELECT
    /// reads itself is recursive and is computed as SQLite documents it (a queue of rows, each
    /// run through the recursive SELECTs), whether or not the clause says RECURSIVE.
    /// The tables are dropped when `select` ends, even when it throws.
    func runWithClause(_ with: WithClause, _ select: SelectStatement, _ context: RowContext) throws -> (SQLResult, [Affinity], [Collation]) {
        try withCommonTables(with) { try runSelectReportingAffinities(select, context) }
    }

    /// Runs `body` with the tables of `with` visible by name (computed on their first read, as
    /// `runWithClause` says), and drops them when it ends, even when it throws.
    func withCommonTables<T>(_ with: WithClause, _ body: () throws -> T) throws -> T {
        let savedTables = transientTables, savedScope = commonTables
        defer {
            transientTables = savedTables
            commonTables = savedScope
        }
        for cte in with.tables {
            let key = cte.name.lowercased()
            commonTables.pending[key] = cte
            transientTables[key] = nil   // an inner WITH hides an outer one of the same name
        }
        return try body()
    }

    /// `WITH ... INSERT | UPDATE | DELETE`: the statement run with the WITH tables visible to
    /// its SELECT, subqueries and WHERE, compiled afresh each time (its WITH tables are
    /// computed again on each run, so nothing compiled against them is kept).
    /// - Throws: `DAOError.unsupported` when a WITH table has the name of the stored table the
    ///   statement writes (SQLite writes the stored table then; here the name would find the
    ///   WITH table), `DAOError.noSuchTable` when there is no stored table of that name (as
    ///   SQLite), what the statement throws.
    func runWithCommonTables(_ with: WithClause?, writing target: String, _ statement: Statement, parameters: [SQLValue],
                             sink: RowSink?) throws -> SQLResult {
        guard let with else { return try runStatement(statement, parameters: parameters, cache: nil, sink: sink) }
        if with.tables.contains(where: { $0.name.lowercased() == target.lowercased() }) {
            guard try tableIfExists(named: target) != nil else { throw DAOError.noSuchTable(target) }
            throw DAOError.unsupported("WITH table named as the table the statement writes")
        }
        return try withCommonTables(with) { try runStatement(statement, parameters: parameters, cache: nil, sink: sink) }
    }

    /// The transient table `name` (lower-cased) when the running statement has one: a WITH
    /// table (computed now on its first read) or a TEMP table.
    /// - Throws: what computing the WITH table throws; `circular reference` when it reads
    ///   itself other than as a recursive table.
    func transientTable(named key: String) throws -> TableState? {
        if let table = transientTables[key] { return table }
        guard let cte = commonTables.pending[key] else { return nil }
        if commonTables.computing.contains(key) { throw SQLExecutionError("circular reference: \(cte.name)") }
        commonTables.computing.insert(key)
        defer { commonTables.computing.remove(key) }
        // Its own context: it may be computed while another SELECT is between rows.
        let context = RowContext(parameters: self.context.parameters)
        // Subqueries in its FROM (and a window function's) run against this database.
        context.database = self
        let table: TableState
        if cte.select.readsTable(key) {
            table = try computeRecursive(cte, key, context)
        } else {
            let (result, affinities, collations) = try runSelectReportingAffinities(cte.select, context)
            table = try transientTable(for: cte, columns: result.columns, affinities: affinities, collations: collations)
            for row in result.values { appendTransientRow(table, row) }
        }
        transientTables[key] = table
        return table
    }

    /// A recursive WITH table: the initial SELECTs' rows enter a queue; each row taken from
    /// the queue is a row of the result (after OFFSET, until LIMIT) and is the whole content
    /// of the table while the recursive SELECTs run once for it, their rows joining the queue
    /// (with UNION, only rows never queued before). ORDER BY makes the queue a priority queue.
    private func computeRecursive(_ cte: CommonTableExpression, _ key: String, _ context: RowContext) throws -> TableState {
        let select = cte.select
        var cores = [select.core] + select.compound.map(\.select)
        let operators = select.compound.map(\.op)
        guard let firstRecursive = cores.firstIndex(where: { $0.readsTable(key) }), firstRecursive > 0,
              cores[firstRecursive...].allSatisfy({ $0.readsTable(key) }) else {
            throw DAOError.unsupported("recursive WITH table whose first SELECT reads itself")
        }
        let recursiveOperator = operators[firstRecursive - 1]
        guard recursiveOperator == .union || recursiveOperator == .unionAll,
              operators[firstRecursive...].allSatisfy({ $0 == recursiveOperator }) else {
            throw DAOError.unsupported("recursive WITH table joined by \(recursiveOperator.name)")
        }
        for core in cores[firstRecursive...] {
            if core.distinct || !core.groupBy.isEmpty || core.having != nil {
                throw DAOError.unsupported("DISTINCT or aggregate in a recursive SELECT")
            }
            // The table read from inside a FROM subquery (whose rows a run keeps) would never
            // change: SQLite refuses both.
            for item in core.from {
                if item.windows != nil { throw SQLExecutionError("cannot use window functions in recursive queries") }
                if case .subquery(let inner) = item.source, inner.readsTable(key) { throw SQLExecutionError("circular reference: \(cte.name)") }
            }
        }
        // The initial part: the SELECTs before the first recursive one.
        var initial = cores[0]
        initial.compound = Array(select.compound[..<(firstRecursive - 1)])
        let (start, affinities, collations) = try runSelectReportingAffinities(initial, context)
        let result = try transientTable(for: cte, columns: start.columns, affinities: affinities, collations: collations)
        // The table the recursive SELECTs read: the one row taken from the queue.
        let current = try transientTable(for: cte, columns: start.columns, affinities: affinities, collations: collations)
        transientTables[key] = current
        defer { transientTables[key] = nil }

        let distinct = recursiveOperator == .union
        var queued = Set<ValueKey>()
        var queue = RecursionQueue(order: try recursiveOrder(select, columns: start.columns.count))
        func enqueue(_ row: [SQLValue]) {
            if distinct, !queued.insert(ValueKey(values: row)).inserted { return }
            queue.push(row)
        }
        for row in start.values { enqueue(row) }
        let limit = try integerClause(select.limit, context)
        var offset = max(try integerClause(select.offset, context) ?? 0, 0)
        var produced: Int64 = 0
        if let limit, limit == 0 { return result }
        let boxes = cores[firstRecursive...].map { _ in CompiledBox() }
        for index in firstRecursive..<cores.count { cores[index].orderBy = []; cores[index].limit = nil; cores[index].offset = nil }
        while let row = queue.pop() {
            if offset > 0 {
                offset -= 1
            } else {
                appendTransientRow(result, row)
                produced += 1
                if let limit, limit > 0, produced >= limit { break }
            }
            current.rowids = SortedChunks<Int64>()
            current.overlay.removeAll(keepingCapacity: true)
            appendTransientRow(current, row)
            for (box, core) in zip(boxes, cores[firstRecursive...]) {
                let rows = try runSelect(core, context, cache: box).values
                guard rows.first.map({ $0.count == start.columns.count }) ?? true else {
                    throw SQLExecutionError("SELECTs to the left and right of \(recursiveOperator.name) do not have the same number of result columns")
                }
                for next in rows { enqueue(next) }
            }
        }
        return result
    }

    /// The queue order of a recursive WITH table's ORDER BY: result positions and directions.
    private func recursiveOrder(_ select: SelectStatement, columns: Int) throws -> [(Int, Bool)] {
        var order: [(Int, Bool)] = []
        for (index, term) in select.orderBy.enumerated() {
            guard case .literal(.integer(let k)) = term.expr else {
                if case .column(nil, let name) = term.expr, let position = aliasPosition(name, select.core, Resolver(table: nil)) {
                    order.append((position, term.descending))
                    continue
                }
                throw DAOError.unsupported("ORDER BY expression of a recursive WITH table")
            }
            guard k >= 1, Int(k) <= columns else {
                throw SQLExecutionError("\(ordinal(index + 1)) ORDER BY term out of range - should be between 1 and \(columns)")
            }
            order.append((Int(k) - 1, term.descending))
        }
        return order
    }

    /// An empty transient table with the columns of a WITH table: its column list, or the
    /// SELECT's column names (SQLite's `name:1` for a repeated one), with the affinities of
    /// the first SELECT's expressions.
    func transientTable(for cte: CommonTableExpression, columns: [String], affinities: [Affinity],
                        collations: [Collation] = []) throws -> TableState {
        if let names = cte.columns, names.count != columns.count {
            throw SQLExecutionError("table \(cte.name) has \(columns.count) values for \(names.count) columns")
        }
        var seen = Set<String>()
        var definitions: [ColumnDefinition] = []
        for (index, written) in (cte.columns ?? columns).enumerated() {
            var name = written
            var count = 0
            while !seen.insert(name.lowercased()).inserted {
                count += 1
                name = "\(written):\(count)"
            }
            let typeName: String
            switch index < affinities.count ? affinities[index] : .blob {
            case .integer: typeName = "INTEGER"
            case .text: typeName = "TEXT"
            case .real: typeName = "REAL"
            case .numeric: typeName = "NUMERIC"
            case .blob: typeName = ""
            }
            var definition = ColumnDefinition(name: name, typeName: typeName)
            if index < collations.count { definition.collation = collations[index] }
            definitions.append(definition)
        }
        let definition = try TableDefinition(CreateTableStatement(name: cte.name, ifNotExists: false, columns: definitions,
                                                                  primaryKey: nil, uniques: []))
        let table = TableState(definition: definition, space: try catalogKeySpace(), spaceName: "")
        table.isTransient = true
        table.hidesRowid = true
        return table
    }

    /// Appends a row to a transient table (the next rowid; kept in its overlay only).
    func appendTransientRow(_ table: TableState, _ row: [SQLValue]) {
        let rowid = (table.maxRowid ?? 0) + 1
        table.overlay.set(rowid, bytes: RowCodec.encode(row, skipping: nil))
        table.insertRowid(rowid)
    }
}

/// The queue of a recursive WITH table: first in, first out, or by its ORDER BY (ties first
/// in, first out).
struct RecursionQueue {
    let order: [(Int, Bool)]
    private var rows: [[SQLValue]] = []
    private var head = 0

    init(order: [(Int, Bool)]) { self.order = order }

    mutating func push(_ row: [SQLValue]) {
        if order.isEmpty {
            rows.append(row)
            return
        }
        // Keep `rows[head...]` sorted; insert after every row that sorts before or equal.
        var low = head, high = rows.count
        while low < high {
            let mid = (low + high) / 2
            if compare(rows[mid], row) <= 0 { low = mid + 1 } else { high = mid }
        }
        rows.insert(row, at: low)
    }

    mutating func pop() -> [SQLValue]? {
        guard head < rows.count else { return nil }
        let row = rows[head]
        head += 1
        if head > 1024 && head * 2 > rows.count {
            rows.removeFirst(head)
            head = 0
        }
        return row
    }

    private func compare(_ a: [SQLValue], _ b: [SQLValue]) -> Int {
        for (position, descending) in order {
            let c = SQLValues.compare(a[position], b[position])
            if c != 0 { return descending ? -c : c }
        }
        return 0
    }
}

extension SelectStatement {
    /// The first SELECT core alone: no compound terms, WITH, ORDER BY or LIMIT.
    var core: SelectStatement {
        var core = self
        core.compound = []
        core.with = nil
        core.orderBy = []
        core.limit = nil
        core.offset = nil
        return core
    }

    /// Whether a FROM of this SELECT (a table, a join item, a subquery in FROM) or of its
    /// compound terms names `key` (lower-cased).
    func readsTable(_ key: String) -> Bool {
        if table?.lowercased() == key { return true }
        for item in from {
            switch item.source {
            case .table(let name): if name.lowercased() == key { return true }
            case .subquery(let select): if select.readsTable(key) { return true }
            }
        }
        return compound.contains { $0.select.readsTable(key) }
    }
}
