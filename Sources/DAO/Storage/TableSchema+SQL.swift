import Foundation

/// A column of a table as the catalog keeps it.
struct ColumnSchema: Sendable {
    var name: String
    var typeName: String
    var affinity: Affinity
    var notNull: Bool
    /// The NOT NULL constraint's `ON CONFLICT` clause.
    var notNullConflict: ConflictMode? = nil
    /// The DEFAULT clause's SQL text as written, or nil (NULL default).
    var defaultText: String?
    var defaultValue: Expr?
    /// Its `COLLATE` clause: how its texts compare where nothing else decides (BINARY without one).
    var collation: Collation = .binary

    /// What a row that does not store this column (written before `ALTER TABLE ADD COLUMN`)
    /// reads: its DEFAULT with the column's affinity applied, as SQLite reads it
    /// (`z INTEGER DEFAULT '5'` reads 5, `w REAL DEFAULT 3` reads 3.0); NULL without one.
    var addedColumnValue: SQLValue {
        SQLValues.apply(affinity, to: defaultValue.flatMap { try? Evaluator.evaluate($0, RowContext(parameters: [])) } ?? .null)
    }
}

/// An index of a table: its columns (by position), directions and whether it is unique.
struct IndexSchema: Sendable {
    var name: String
    var columns: [Int]
    var descending: [Bool]
    var unique: Bool
    /// Made by a PRIMARY KEY or UNIQUE constraint of the table (cannot be dropped).
    var isConstraint: Bool
    /// That constraint's `ON CONFLICT` clause (nil: none; always nil for CREATE INDEX ones).
    var conflict: ConflictMode? = nil
    /// Each key column's collation (its `COLLATE` in the index, else the column's): texts are
    /// folded by it into the keys, so the index orders, finds and (UNIQUE) tells rows apart by it.
    var collations: [Collation] { didSet { isBinary = collations.allSatisfy { $0 == .binary } } }
    /// Whether every key column compares as BINARY (the keys are the values' own encodings):
    /// kept with `collations`, as every index write and probe asks.
    private(set) var isBinary: Bool

    init(name: String, columns: [Int], descending: [Bool], unique: Bool, isConstraint: Bool,
         conflict: ConflictMode? = nil, collations: [Collation]? = nil) {
        self.name = name
        self.columns = columns
        self.descending = descending
        self.unique = unique
        self.isConstraint = isConstraint
        self.conflict = conflict
        let collations = collations ?? Array(repeating: .binary, count: columns.count)
        self.collations = collations
        isBinary = collations.allSatisfy { $0 == .binary }
    }
}

/// A table's definition: columns, the rowid alias (INTEGER PRIMARY KEY), indexes.
struct TableDefinition: Sendable {
    var name: String
    var columns: [ColumnSchema]
    /// The column that is the rowid (an INTEGER PRIMARY KEY), if any.
    var rowidColumn: Int?
    var autoincrement: Bool
    /// Constraint indexes first (PRIMARY KEY, then UNIQUE in order), then CREATE INDEX ones.
    var indexes: [IndexSchema]
    /// Column definitions and table constraints as written, for the catalog's CREATE TABLE text.
    var primaryKey: [IndexedColumn]?
    var uniques: [[IndexedColumn]]
    var columnUnique: [Bool]
    /// `ON CONFLICT` clauses: of the PRIMARY KEY (the column's or the table's; for a rowid
    /// alias, what a taken rowid resolves by), of each column's UNIQUE, of each table UNIQUE.
    var primaryKeyConflict: ConflictMode? = nil
    var columnUniqueConflicts: [ConflictMode?] = []
    var uniqueConflicts: [ConflictMode?] = []
    /// FOREIGN KEY and REFERENCES clauses in SQLite's declaration order (the columns' own, in
    /// column order, then the table's): kept and listed, not enforced.
    var foreignKeys: [ForeignKey] = []
    /// CHECK constraints: the columns' (in column order), then the table's.
    var checks: [CheckConstraint] = []

    func columnIndex(_ name: String) -> Int? {
        let lowered = name.lowercased()
        return columns.firstIndex { $0.name.lowercased() == lowered }
    }

    /// The canonical CREATE TABLE text stored in the catalog.
    var createSQL: String {
        var parts: [String] = []
        for (index, column) in columns.enumerated() {
            var text = SQLText.quote(column.name)
            if !column.typeName.isEmpty { text += " " + column.typeName }
            if column.collation != .binary { text += " COLLATE " + column.collation.name }
            if primaryKey == nil && columnPrimaryKey == index {
                text += " PRIMARY KEY" + (columnPrimaryKeyDescending ? " DESC" : "") + Self.conflictText(primaryKeyConflict)
                if autoincrement { text += " AUTOINCREMENT" }
            }
            if column.notNull { text += " NOT NULL" + Self.conflictText(column.notNullConflict) }
            if columnUnique[index] { text += " UNIQUE" + Self.conflictText(columnUniqueConflicts[index]) }
            if let d = column.defaultText { text += " DEFAULT " + d }
            for key in foreignKeys where key.onColumn && key.columns.first?.lowercased() == column.name.lowercased() {
                text += " REFERENCES " + key.referencesText
            }
            for check in checks where check.column?.lowercased() == column.name.lowercased() {
                text += " " + Self.checkText(check)
            }
            parts.append(text)
        }
        if let primaryKey {
            parts.append("PRIMARY KEY (" + primaryKey.map(Self.keyColumnText).joined(separator: ", ") + ")"
                         + Self.conflictText(primaryKeyConflict))
        }
        for (number, unique) in uniques.enumerated() {
            parts.append("UNIQUE (" + unique.map(Self.keyColumnText).joined(separator: ", ") + ")"
                         + Self.conflictText(uniqueConflicts[number]))
        }
        for key in foreignKeys where !key.onColumn {
            parts.append("FOREIGN KEY (" + key.columns.map(SQLText.quote).joined(separator: ", ") + ") REFERENCES " + key.referencesText)
        }
        for check in checks where check.column == nil { parts.append(Self.checkText(check)) }
        return "CREATE TABLE " + SQLText.quote(name) + " (" + parts.joined(separator: ", ") + ")"
    }

    /// A key column of a table constraint as written: `"name" [COLLATE x] [DESC]`.
    static func keyColumnText(_ column: IndexedColumn) -> String {
        SQLText.quote(column.name) + (column.collation.map { " COLLATE " + $0.name } ?? "") + (column.descending ? " DESC" : "")
    }

    /// The collation of each key column: its own `COLLATE`, else its column's.
    func collations(of keyColumns: [IndexedColumn], at positions: [Int]) -> [Collation] {
        zip(keyColumns, positions).map { $0.collation ?? columns[$1].collation }
    }

    /// ` ON CONFLICT <mode>`, or nothing without a clause.
    static func conflictText(_ mode: ConflictMode?) -> String {
        mode.map { " ON CONFLICT " + $0.keyword } ?? ""
    }

    /// `[CONSTRAINT "name"] CHECK (text)`.
    static func checkText(_ check: CheckConstraint) -> String {
        (check.name.map { "CONSTRAINT " + SQLText.quote($0) + " " } ?? "") + "CHECK (" + check.text + ")"
    }

    /// The column marked PRIMARY KEY in its own definition (kept from creation).
    var columnPrimaryKey: Int?
    var columnPrimaryKeyDescending = false

    /// CREATE INDEX text of an explicit index.
    func createIndexSQL(_ index: IndexSchema) -> String {
        let columnsText = index.columns.indices.map { i -> String in
            let column = columns[index.columns[i]]
            // A collation other than the column's is written; the column's is implied.
            let collation = index.collations[i] == column.collation ? "" : " COLLATE " + index.collations[i].name
            return SQLText.quote(column.name) + collation + (index.descending[i] ? " DESC" : "")
        }
        return "CREATE " + (index.unique ? "UNIQUE " : "") + "INDEX " + SQLText.quote(index.name) + " ON "
            + SQLText.quote(name) + " (" + columnsText.joined(separator: ", ") + ")"
    }

    /// Builds a definition from CREATE TABLE.
    /// - Throws: `SQLExecutionError` for duplicate columns, unknown key columns.
    init(_ statement: CreateTableStatement) throws {
        name = statement.name
        columns = []
        rowidColumn = nil
        autoincrement = false
        indexes = []
        primaryKey = statement.primaryKey
        uniques = statement.uniques
        columnUnique = statement.columns.map(\.unique)
        primaryKeyConflict = statement.primaryKey != nil ? statement.primaryKeyConflict : statement.columns.first(where: \.primaryKey)?.primaryKeyConflict
        columnUniqueConflicts = statement.columns.map(\.uniqueConflict)
        uniqueConflicts = statement.uniques.indices.map { $0 < statement.uniqueConflicts.count ? statement.uniqueConflicts[$0] : nil }
        foreignKeys = statement.foreignKeys
        checks = statement.checks
        var seen = Set<String>()
        for definition in statement.columns {
            guard seen.insert(definition.name.lowercased()).inserted else {
                throw SQLExecutionError("duplicate column name: \(definition.name)")
            }
            columns.append(ColumnSchema(name: definition.name, typeName: definition.typeName,
                                        affinity: Affinity(declaredType: definition.typeName),
                                        notNull: definition.notNull, notNullConflict: definition.notNullConflict,
                                        defaultText: definition.defaultText,
                                        defaultValue: definition.defaultValue,
                                        collation: definition.collation ?? .binary))
        }
        // The primary key: a rowid alias when it is one INTEGER column, otherwise a unique index.
        var keyColumns: [IndexedColumn]?
        if let primaryKey = statement.primaryKey {
            keyColumns = primaryKey
        } else if let index = statement.columns.firstIndex(where: \.primaryKey) {
            columnPrimaryKey = index
            columnPrimaryKeyDescending = statement.columns[index].primaryKeyDescending
            keyColumns = [IndexedColumn(name: statement.columns[index].name, descending: statement.columns[index].primaryKeyDescending)]
        }
        if statement.columns.contains(where: \.autoincrement) { autoincrement = true }
        if let keyColumns {
            let positions = try keyColumns.map { column -> Int in
                guard let position = columnIndex(column.name) else {
                    throw SQLExecutionError("no such column: \(column.name)")
                }
                return position
            }
            if positions.count == 1, columns[positions[0]].typeName.uppercased() == "INTEGER",
               !(statement.primaryKey == nil && statement.columns[positions[0]].primaryKeyDescending) {
                rowidColumn = positions[0]
            } else {
                if autoincrement { throw SQLExecutionError("AUTOINCREMENT is only allowed on an INTEGER PRIMARY KEY") }
                indexes.append(IndexSchema(name: "sqlite_autoindex_\(name)_pk", columns: positions,
                                           descending: keyColumns.map(\.descending), unique: true, isConstraint: true,
                                           conflict: primaryKeyConflict, collations: collations(of: keyColumns, at: positions)))
            }
        }
        for (index, definition) in statement.columns.enumerated() where definition.unique {
            indexes.append(IndexSchema(name: "sqlite_autoindex_\(name)_u\(index)", columns: [index], descending: [false],
                                       unique: true, isConstraint: true, conflict: definition.uniqueConflict,
                                       collations: [columns[index].collation]))
        }
        for (number, unique) in statement.uniques.enumerated() {
            let positions = try unique.map { column -> Int in
                guard let position = columnIndex(column.name) else { throw SQLExecutionError("no such column: \(column.name)") }
                return position
            }
            indexes.append(IndexSchema(name: "sqlite_autoindex_\(name)_c\(number)", columns: positions,
                                       descending: unique.map(\.descending), unique: true, isConstraint: true,
                                       conflict: uniqueConflicts[number], collations: collations(of: unique, at: positions)))
        }
        for key in foreignKeys {
            for column in key.columns where columnIndex(column) == nil {
                throw SQLExecutionError("unknown column \"\(column)\" in foreign key definition")
            }
        }
    }
}

enum SQLText {
    /// An identifier in double quotes, inner quotes doubled.
    static func quote(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
