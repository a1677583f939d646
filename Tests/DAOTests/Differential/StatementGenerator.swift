import DAO

/// How a statement's results are compared between the engines.
enum Comparison: Equatable {
    /// Not a query: compare changes, last insert rowid and every table's rows afterwards.
    case write
    /// Rows in any order (no ORDER BY): compare as multisets.
    case multiset
    /// LIMIT without ORDER BY: which rows is unspecified, only how many.
    case countOnly
    /// ORDER BY on the result columns at `keys`: rows in groups of equal keys, in order; each
    /// group compared as a multiset, except the first and last groups of a LIMIT/OFFSET, which
    /// a cut may split anywhere (compared by keys and size only).
    /// `foldedTexts`: texts of a key compare case- and trailing-space-blind (schemas with
    /// NOCASE and RTRIM: such ties may come in either order).
    case orderedGroups(keys: [Int], cut: Bool, foldedTexts: Bool = false)
}

/// One generated statement and how to compare it.
struct GeneratedStatement {
    var sql: String
    var comparison: Comparison
    /// Values of the statement's `:p1`, `:p2`, ... parameters, in order.
    var arguments: [DAOValue] = []
    /// Result columns compared by SQL equality rather than exactly: GROUP BY keys, min/max
    /// of a column, and every column of a DISTINCT. A typeless column can hold 7 and 7.0, which are one group (and one
    /// minimum), shown by whichever row the engine meets first.
    var looseColumns: Set<Int> = []
    /// A query with LIMIT 0: SQLite evaluates no row (no result column, no ORDER BY key), so
    /// no error of a row may show on either side (see ResultComparator).
    var evaluatesNoRow = false
}

/// Random statements of the subset over generated tables.
struct StatementGenerator {
    var tables: [GeneratedTable]
    /// The parameters of the statement being generated.
    var parameters: ParameterBag? = nil

    /// The next statement, its parameters bound.
    func next(random: inout SeededRandom) -> GeneratedStatement {
        let parameters = ParameterBag()
        var statement = StatementGenerator(tables: tables, parameters: parameters).unbound(random: &random)
        statement.arguments = parameters.values
        if random.chance(0.08) { statement.sql = Self.lowercasedOutsideLiterals(statement.sql) }
        if random.chance(0.05) { statement.sql += random.pick([" -- trailing comment", " /* block */", "\n-- next line"]) }
        return statement
    }

    /// `sql` with every letter outside string literals in lower case (keywords, functions and
    /// names are case-insensitive; literals keep their case). Parameters keep their names.
    static func lowercasedOutsideLiterals(_ sql: String) -> String {
        var out = ""
        var inLiteral = false
        for character in sql {
            if character == "'" { inLiteral.toggle() }
            out.append(inLiteral ? character : Character(character.lowercased()))
        }
        return out
    }

    private func unbound(random: inout SeededRandom) -> GeneratedStatement {
        switch random.int(0...99) {
        case 0..<55: return select(random: &random)
        case 55..<72: return insert(random: &random)
        case 72..<75: return insertSelect(random: &random)
        case 75..<85: return update(random: &random)
        case 85..<91: return delete(random: &random)
        case 91..<93: return GeneratedStatement(sql: selectWithoutFrom(random: &random), comparison: .multiset)
        case 93..<96: return indexChange(random: &random)
        default: return GeneratedStatement(sql: random.pick(["BEGIN", "COMMIT", "ROLLBACK", "BEGIN", "COMMIT"]), comparison: .write)
        }
    }

    private func expressions(for table: GeneratedTable) -> ExpressionGenerator {
        ExpressionGenerator(columns: table.columns.map(\.name), parameters: parameters,
                            explicitCollations: tables.contains(where: \.collations))
    }

    func selectWithoutFrom(random: inout SeededRandom) -> String {
        let generator = ExpressionGenerator(columns: ["1"])
        return "SELECT " + (0..<random.int(1...3)).map { _ in generator.scalar(3, random: &random) }.joined(separator: ", ")
    }

    func select(random: inout SeededRandom) -> GeneratedStatement {
        let table = random.pick(tables)
        let e = expressions(for: table)
        var items: [String] = []
        var keys: [(index: Int, direction: String)] = []
        var loose: Set<Int> = []
        var sql = "SELECT "
        let grouped = random.chance(0.25)
        let aggregateOnly = !grouped && random.chance(0.12)
        if grouped {
            // Bare columns: an expression could give equal keys of two storage classes (0 and
            // 0.0), and which of them a group shows depends on the order rows are visited in.
            let groupTerms = Array(Set((0..<random.int(1...2)).map { _ in random.pick(e.columns) })).sorted()
            items = groupTerms + (0..<random.int(1...3)).map { _ in e.aggregate(random: &random) }
            loose = Set(items.indices.filter { index in
                index < groupTerms.count || e.columns.contains { items[index] == "min(\($0))" || items[index] == "max(\($0))" }
            })
            sql += items.joined(separator: ", ") + " FROM \(table.name)"
            if random.chance(0.5) { sql += " WHERE \(e.condition(2, random: &random))" }
            sql += " GROUP BY " + groupTerms.joined(separator: ", ")
            if random.chance(0.4) {
                sql += " HAVING \(random.pick(["count(*) > 1", "\(e.aggregate(random: &random)) IS NOT NULL", "\(e.aggregate(random: &random)) > \(ValueGenerator.literal(random: &random))"]))"
            }
            // Order by group keys and aggregates (all selected).
            if random.chance(0.6) {
                keys = (0..<random.int(1...2)).map { _ in (random.int(0...(items.count - 1)), random.pick(["", " ASC", " DESC"])) }
            }
        } else if aggregateOnly {
            items = (0..<random.int(1...3)).map { _ in e.aggregate(random: &random) }
            sql += items.joined(separator: ", ") + " FROM \(table.name)"
            if random.chance(0.6) { sql += " WHERE \(e.condition(3, random: &random))" }
            let minMax = Set(items.indices.filter { index in e.columns.contains { items[index] == "min(\($0))" || items[index] == "max(\($0))" } })
            return GeneratedStatement(sql: sql, comparison: .multiset, looseColumns: minMax)
        } else {
            let distinct = random.chance(0.15)
            if distinct { sql += "DISTINCT " }
            if !distinct, random.chance(0.2) {
                items = table.columns.map(\.name)
                sql += "*"
            } else {
                items = (0..<random.int(1...4)).map { _ in random.chance(0.5) ? random.pick(e.columns) : e.scalar(3, random: &random) }
            }
            if random.chance(0.5) {
                // ORDER BY terms are result columns, so their values are visible to the grouping
                // comparison; add a selected term when it is not already one.
                for _ in 0..<random.int(1...2) {
                    if sql.hasSuffix("*") || random.chance(0.6) {
                        keys.append((random.int(0...(items.count - 1)), random.pick(["", " ASC", " DESC"])))
                    } else {
                        items.append(e.orderTerm(2, random: &random))
                        keys.append((items.count - 1, random.pick(["", " ASC", " DESC"])))
                    }
                }
            }
            // DISTINCT keeps one of two equal rows (0 and 0.0) by scan order.
            if distinct { loose = Set(items.indices) }
            if !sql.hasSuffix("*") {
                sql += items.enumerated().map { random.chance(0.15) ? "\($0.element) AS a\($0.offset)" : $0.element }.joined(separator: ", ")
            }
            sql += " FROM \(table.name)"
            if random.chance(0.7) { sql += " WHERE \(e.condition(3, random: &random))" }
        }
        if !keys.isEmpty {
            // SQLite reads an integer literal as a result column's position: drop such keys.
            keys = keys.filter { !ExpressionGenerator.isIntegerLiteral(items[$0.index]) && items[$0.index] != "*" }
        }
        if !keys.isEmpty {
            sql += " ORDER BY " + keys.map { items[$0.index] + $0.direction }.joined(separator: ", ")
        }
        var limited = false
        var noRowEvaluated = false
        if random.chance(0.3) {
            // A negative LIMIT means none; a negative OFFSET counts as 0.
            let limit = random.chance(0.1) ? -1 : random.int(0...6)
            limited = limit >= 0
            noRowEvaluated = limit == 0
            sql += " LIMIT \(limit)"
            if random.chance(0.5) {
                // Some OFFSETs past the end of every generated table (issue 25).
                let offset = random.chance(0.1) ? -2 : random.chance(0.12) ? 1000 : random.int(0...4)
                limited = limited || offset > 0
                sql += " OFFSET \(offset)"
            }
        }
        let comparison: Comparison
        if !keys.isEmpty {
            comparison = .orderedGroups(keys: keys.map(\.index), cut: limited, foldedTexts: tables.contains(where: \.collations))
        } else {
            comparison = limited ? .countOnly : .multiset
        }
        return GeneratedStatement(sql: sql, comparison: comparison, looseColumns: loose, evaluatesNoRow: noRowEvaluated)
    }

    /// A row of literals (or DEFAULT-free omission through a column list) for `table`.
    func insert(random: inout SeededRandom) -> GeneratedStatement {
        let table = random.pick(tables)
        let verb = random.pick(["INSERT INTO", "INSERT INTO", "INSERT INTO", "INSERT OR REPLACE INTO", "INSERT OR IGNORE INTO", "REPLACE INTO"])
        var columns = table.columns
        var listed = ""
        if random.chance(0.4) {
            columns = columns.filter { _ in random.chance(0.7) }
            if columns.isEmpty { columns = [table.columns[0]] }
            listed = " (\(columns.map(\.name).joined(separator: ", ")))"
        }
        let rows = (0..<random.int(1...3)).map { _ in
            "(" + columns.map { column -> String in
                let literal = ValueGenerator.literal(for: column, random: &random)
                guard let parameters, random.chance(0.15) else { return literal }
                return parameters.add(literal: literal)
            }.joined(separator: ", ") + ")"
        }
        return GeneratedStatement(sql: "\(verb) \(table.name)\(listed) VALUES \(rows.joined(separator: ", "))", comparison: .write)
    }

    /// INSERT ... SELECT from another (or the same) table, ordered by every selected value so
    /// rowids and OR IGNORE/REPLACE conflicts resolve the same way in both engines.
    func insertSelect(random: inout SeededRandom) -> GeneratedStatement {
        let target = random.pick(tables), source = random.pick(tables)
        let e = expressions(for: source)
        let verb = random.pick(["INSERT INTO", "INSERT OR IGNORE INTO", "INSERT OR REPLACE INTO"])
        let values = target.columns.map { column -> String in
            // A copied value could be the largest rowid (see ValueGenerator.literal(for:)).
            if column.integerPrimaryKey { return random.chance(0.5) ? "NULL" : "(CAST(\(random.pick(e.columns)) AS INTEGER) % 100)" }
            return random.chance(0.6) ? random.pick(e.columns) : e.scalar(1, random: &random)
        }
        var sql = "\(verb) \(target.name) SELECT \(values.joined(separator: ", ")) FROM \(source.name)"
        if random.chance(0.5) { sql += " WHERE \(e.condition(2, random: &random))" }
        // typeof() after each value breaks ties between equal values of two storage classes
        // (-9223372036854775808 and -9.223372036854775808e18), which SQLite orders either way.
        let orderTerms = values.filter { !ExpressionGenerator.isIntegerLiteral($0) }.flatMap { [$0, "typeof(\($0))"] }
        if !orderTerms.isEmpty { sql += " ORDER BY " + orderTerms.joined(separator: ", ") }
        return GeneratedStatement(sql: sql, comparison: .write)
    }

    /// UPDATE: key columns (primary key, unique) only ever set to constants, since SQLite checks
    /// uniqueness row by row in scan order, which an expression over the row would expose.
    func update(random: inout SeededRandom) -> GeneratedStatement {
        let table = random.pick(tables)
        let e = expressions(for: table)
        let targets = table.columns.filter { _ in random.chance(0.5) }
        let chosen = targets.isEmpty ? [random.pick(table.columns)] : targets
        let assignments = chosen.map { column -> String in
            let value = table.isKey(column.name) ? ValueGenerator.literal(for: column, random: &random) : e.scalar(2, random: &random)
            return "\(column.name) = \(value)"
        }
        var sql = "UPDATE \(table.name) SET \(assignments.joined(separator: ", "))"
        if random.chance(0.8) { sql += " WHERE \(e.condition(3, random: &random))" }
        return GeneratedStatement(sql: sql, comparison: .write)
    }

    /// CREATE [UNIQUE] INDEX on a table that already holds rows (a unique one fails on
    /// duplicates in both engines), or DROP INDEX of one that may not exist.
    func indexChange(random: inout SeededRandom) -> GeneratedStatement {
        let table = random.pick(tables)
        let name = "\(table.name)_x\(random.int(0...2))"
        if random.chance(0.3) { return GeneratedStatement(sql: "DROP INDEX \(name)", comparison: .write) }
        let columns = table.columns.map(\.name).shuffled(using: &random).prefix(random.int(1...2))
        let terms = columns.map { $0 + random.pick(["", " ASC", " DESC"]) }.joined(separator: ", ")
        // Unique only over columns that are already keys: a new uniqueness constraint would let
        // an UPDATE of those columns by expression fail row by row (see `update`).
        let unique = columns.allSatisfy { table.isKey($0) } && random.chance(0.5)
        return GeneratedStatement(sql: "CREATE \(unique ? "UNIQUE " : "")INDEX IF NOT EXISTS \(name) ON \(table.name) (\(terms))", comparison: .write)
    }

    func delete(random: inout SeededRandom) -> GeneratedStatement {
        let table = random.pick(tables)
        var sql = "DELETE FROM \(table.name)"
        if random.chance(0.9) { sql += " WHERE \(expressions(for: table).condition(3, random: &random))" }
        return GeneratedStatement(sql: sql, comparison: .write)
    }
}
