/// One column of a generated table.
struct GeneratedColumn {
    var name: String
    /// The declared type as written (nil: no type, BLOB/none affinity).
    var declaredType: String?
    var integerPrimaryKey = false
    var autoincrement = false
    var notNull = false
    var unique = false
    var defaultLiteral: String?
    /// `COLLATE NOCASE` / `RTRIM` / `BINARY` after the type (nil: none).
    var collation: String?

    var definition: String {
        var text = name
        if let declaredType { text += " \(declaredType)" }
        if let collation { text += " COLLATE \(collation)" }
        if integerPrimaryKey { text += autoincrement ? " PRIMARY KEY AUTOINCREMENT" : " PRIMARY KEY" }
        if notNull { text += " NOT NULL" }
        if unique { text += " UNIQUE" }
        if let defaultLiteral { text += " DEFAULT \(defaultLiteral)" }
        return text
    }

    /// Whether writes to this column can violate a uniqueness constraint.
    var keyLike: Bool { integerPrimaryKey || unique }
}

/// One generated table: columns, table constraints and indexes.
struct GeneratedTable {
    var name: String
    var columns: [GeneratedColumn]
    var tableConstraints: [String] = []
    /// Columns named in a composite PRIMARY KEY or UNIQUE constraint or a unique index.
    var compositeKeyColumns: Set<String> = []
    var indexStatements: [String] = []
    /// Made with COLLATE clauses (`SchemaGenerator.tables(_:random:collations:)`): statements
    /// over it may carry explicit ones too.
    var collations = false

    var createStatement: String {
        "CREATE TABLE \(name) (" + (columns.map(\.definition) + tableConstraints).joined(separator: ", ") + ")"
    }

    /// Whether `column` takes part in any uniqueness constraint.
    func isKey(_ column: String) -> Bool {
        compositeKeyColumns.contains(column) || columns.contains { $0.name == column && $0.keyLike }
    }
}

/// Random schemas over every affinity and constraint of the subset.
enum SchemaGenerator {
    /// Declared types covering the five affinities, spelled as real schemas spell them.
    static var declaredTypes: [String?] {
        var types: [String?] = ["INTEGER", "INT", "BIGINT", "long", "boolean", "TEXT", "VARCHAR(10)", "char(64)", "CLOB",
                                "REAL", "DOUBLE", "FLOAT", "NUMERIC", "DECIMAL(10,2)", "DATE"]
        // F9: a BLOB-affinity column compared with a TEXT-affinity operand.
        if !OpenFindings.avoid("F9") { types += ["BLOB", nil] }
        return types
    }

    /// `count` tables named t0, t1, ...
    /// With `collations`, columns and index terms also get `COLLATE` clauses; without, no draw
    /// is added, so every case without them stays the one its seed always gave.
    static func tables(_ count: Int, random: inout SeededRandom, collations: Bool = false) -> [GeneratedTable] {
        (0..<count).map { table(named: "t\($0)", random: &random, collations: collations) }
    }

    static func table(named name: String, random: inout SeededRandom, collations: Bool = false) -> GeneratedTable {
        var columns: [GeneratedColumn] = []
        if random.chance(0.4) {
            columns.append(GeneratedColumn(name: "id", declaredType: "INTEGER", integerPrimaryKey: true, autoincrement: !OpenFindings.avoid("F3") && random.chance(0.3)))
        }
        for index in 0..<random.int(2...5) {
            var column = GeneratedColumn(name: "c\(index)", declaredType: random.pick(declaredTypes))
            column.unique = random.chance(0.12)
            column.notNull = random.chance(0.12)
            if random.chance(0.25) || column.notNull && random.chance(0.7) {
                column.defaultLiteral = ValueGenerator.literal(random: &random, allowNull: !column.notNull, expressions: false)
                // F1: DEFAULT -9223372036854775808.
                if OpenFindings.avoid("F1"), column.defaultLiteral == "-9223372036854775808" { column.defaultLiteral = "-1" }
            }
            columns.append(column)
        }
        if collations {
            for index in columns.indices where !columns[index].integerPrimaryKey && random.chance(0.5) {
                columns[index].collation = random.pick(["NOCASE", "NOCASE", "RTRIM", "BINARY"])
            }
        }
        var table = GeneratedTable(name: name, columns: columns, collations: collations)
        let plain = columns.filter { !$0.integerPrimaryKey }.map(\.name)
        if plain.count >= 2, random.chance(0.2) {
            let pair = Array(plain.shuffled(using: &random).prefix(2))
            let hasPrimaryKey = columns.contains(where: \.integerPrimaryKey)
            table.tableConstraints.append("\(hasPrimaryKey || random.chance(0.5) ? "UNIQUE" : "PRIMARY KEY") (\(pair.joined(separator: ", ")))")
            table.compositeKeyColumns.formUnion(pair)
        }
        for index in 0..<random.int(0...2) {
            let count = random.int(1...min(2, plain.count))
            let chosen = plain.shuffled(using: &random).prefix(count)
            let terms = chosen.map { column -> String in
                let direction = random.pick(["", " ASC", " DESC"])
                guard collations, random.chance(0.3) else { return column + direction }
                return column + " COLLATE " + random.pick(["NOCASE", "RTRIM", "BINARY"]) + direction
            }
            let unique = random.chance(0.15)
            if unique { table.compositeKeyColumns.formUnion(chosen) }
            table.indexStatements.append("CREATE \(unique ? "UNIQUE " : "")INDEX \(name)_i\(index) ON \(name) (\(terms.joined(separator: ", ")))")
        }
        return table
    }
}
