/// A recursive-descent parser of the subset (API.md "DAO" 2). Constructs outside it that SQLite
/// knows are refused with `DAOError.unsupported` naming them; anything else that does not parse
/// is `DAOError.syntax` with the line and column of the offending token, worded like SQLite
/// (`near "x": syntax error`).
struct Parser {
    private var tokens: [Token]
    private var position = 0
    private let source: [UInt8]
    /// Parameter slots: `?` takes the next number, `?NNN` that number, `:name` a slot by name.
    private(set) var parameterCount = 0
    private(set) var parameterNames: [String: Int] = [:]
    /// How deep the descent is in nested expressions (parentheses, prefix operators). Bounded,
    /// so hostile input gets an error instead of overflowing the thread's stack (a fuzzer found
    /// 2,000 nested parentheses crashing the parser).
    private var nesting = 0
    /// Whether a trigger's body is being parsed (RAISE is allowed only there; Triggers.swift).
    private var inTriggerBody = false
    /// The window function calls met so far, by the number their marker holds, and whether the
    /// rewrite of their SELECT took each (SQL/WindowRewrite.swift).
    var windowCalls: [ParsedWindowCall] = []
    var windowCallsTaken: [Bool] = []

    /// Nesting at which SQLite's parser gives up ("parser stack overflow"; it accepts 50 nested
    /// parentheses and refuses 100).
    static let maxNesting = 100
    /// SQLite's SQLITE_MAX_EXPR_DEPTH: the deepest expression tree a statement may hold (a chain
    /// of 1,000 ORs is refused). Every walk over an expression recurses at most this deep.
    static let maxExpressionDepth = 1000

    /// Parses exactly one statement (a trailing `;` is allowed).
    static func parse(_ sql: String) throws -> (Statement, parameterCount: Int, names: [String: Int]) {
        var parser = try Parser(sql: sql)
        let statement = try parser.parseStatement()
        // A window function anywhere but a SELECT's result columns and ORDER BY (an UPDATE's
        // SET, a CHECK, ...) was left for no rewrite to take.
        if let left = parser.windowCallsTaken.firstIndex(of: false) {
            throw SQLExecutionError("misuse of window function \(parser.windowCalls[left].name)()")
        }
        while parser.peekSymbol(";") { parser.position += 1 }
        guard parser.current.kind == .end else {
            if parser.current.kind == .identifier, ["UNION", "INTERSECT", "EXCEPT"].contains(parser.current.upper) {
                let clause = parser.tokens[parser.position - 1].upper == "BY" || parser.tokens.contains { $0.upper == "ORDER" }
                    ? "ORDER BY" : "LIMIT"
                throw SQLExecutionError("\(clause) clause should come after \(parser.current.upper) not before")
            }
            throw parser.syntaxError()
        }
        return (statement, parser.parameterCount, parser.parameterNames)
    }

    init(sql: String) throws {
        tokens = try Lexer.tokenize(sql)
        source = Array(sql.utf8)
    }

    // MARK: Token helpers

    var current: Token { tokens[position] }

    func syntaxError(_ token: Token? = nil) -> DAOError {
        let token = token ?? current
        if token.kind == .end { return .syntax(message: "incomplete input", line: token.line, column: token.column) }
        let shown = String(decoding: source[token.start..<token.end], as: UTF8.self)
        return .syntax(message: "near \"\(shown)\": syntax error", line: token.line, column: token.column)
    }

    func peekKeyword(_ word: String) -> Bool { current.kind == .identifier && current.upper == word }
    private func peekKeyword(_ word: String, at offset: Int) -> Bool {
        let index = min(position + offset, tokens.count - 1)
        return tokens[index].kind == .identifier && tokens[index].upper == word
    }
    func peekSymbol(_ symbol: String) -> Bool { current.kind == .symbol && current.text == symbol }

    mutating func acceptKeyword(_ word: String) -> Bool {
        if peekKeyword(word) { position += 1; return true }
        return false
    }
    mutating func acceptSymbol(_ symbol: String) -> Bool {
        if peekSymbol(symbol) { position += 1; return true }
        return false
    }
    mutating func expectKeyword(_ word: String) throws {
        guard acceptKeyword(word) else { throw syntaxError() }
    }
    mutating func expectSymbol(_ symbol: String) throws {
        guard acceptSymbol(symbol) else { throw syntaxError() }
    }

    /// Words that end an expression or a clause and so cannot be bare identifiers or aliases.
    static let reserved: Set<String> = [
        "SELECT", "FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "OFFSET", "AND", "OR", "NOT",
        "IS", "IN", "LIKE", "GLOB", "BETWEEN", "ESCAPE", "CASE", "WHEN", "THEN", "ELSE", "END", "AS",
        "ON", "JOIN", "INNER", "LEFT", "RIGHT", "FULL", "CROSS", "NATURAL", "OUTER", "USING", "UNION",
        "INTERSECT", "EXCEPT", "VALUES", "SET", "INTO", "DISTINCT", "ALL", "NULL", "COLLATE", "BY",
        "ASC", "DESC", "WINDOW", "OVER", "EXISTS", "CAST", "DEFAULT", "REFERENCES", "CONSTRAINT",
        "PRIMARY", "UNIQUE", "CHECK", "MATCH", "REGEXP", "ISNULL", "NOTNULL", "RETURNING", "FILTER",
        // SQLite's other keywords that are never names (not in its parser's fallback to ID):
        // `create table t (index integer)` is a syntax error there (the manual's summary.md example).
        "ADD", "ALTER", "AUTOINCREMENT", "COMMIT", "CREATE", "DEFERRABLE", "DELETE", "DROP", "FOREIGN",
        "INDEX", "INSERT", "NOTHING", "TABLE", "TO", "TRANSACTION", "UPDATE",
    ]

    /// An object's name (a table, index, view or trigger) after an optional `main.`, the one
    /// schema a store has (`temp.` and attached schemas are refused).
    private mutating func parseObjectName() throws -> String {
        let first = try parseName()
        guard acceptSymbol(".") else { return first }
        guard first.lowercased() == "main" else { throw DAOError.unsupported("schema-qualified name \(first).") }
        return try parseName()
    }

    /// An identifier (bare or quoted) as a name.
    mutating func parseName() throws -> String {
        let token = current
        if token.kind == .quotedIdentifier || (token.kind == .identifier && !Parser.reserved.contains(token.upper)) {
            position += 1
            return token.text
        }
        if token.kind == .string { position += 1; return token.text } // SQLite accepts 'name' here
        throw syntaxError()
    }

    private func sourceText(from start: Int, to end: Int) -> String {
        String(decoding: source[start..<max(start, end)], as: UTF8.self)
    }

    // MARK: Statements

    mutating func parseStatement() throws -> Statement {
        let token = current
        guard token.kind == .identifier else { throw syntaxError() }
        switch token.upper {
        case "SELECT": return .select(try parseSelect())
        case "INSERT", "REPLACE": return .insert(try parseInsert())
        case "UPDATE": return .update(try parseUpdate())
        case "DELETE": return .delete(try parseDelete())
        case "CREATE": return try parseCreate()
        case "DROP": return try parseDrop()
        case "ALTER": return try parseAlter()
        case "BEGIN":
            position += 1
            if acceptKeyword("DEFERRED") || acceptKeyword("IMMEDIATE") || acceptKeyword("EXCLUSIVE") {}
            _ = acceptKeyword("TRANSACTION")
            return .begin
        case "COMMIT", "END":
            position += 1
            _ = acceptKeyword("TRANSACTION")
            return .commit
        case "ROLLBACK":
            position += 1
            _ = acceptKeyword("TRANSACTION")
            if acceptKeyword("TO") {
                _ = acceptKeyword("SAVEPOINT")
                return .rollbackTo(try parseName())
            }
            return .rollback
        case "WITH":
            // Before INSERT, REPLACE, UPDATE or DELETE its tables are that statement's.
            let with = try parseWithClause()
            guard ["INSERT", "REPLACE", "UPDATE", "DELETE"].contains(current.upper), current.kind == .identifier else {
                return .select(try parseSelect(after: with))
            }
            // SQLite's grammar has no WITH before a write inside a trigger's body.
            if inTriggerBody { throw syntaxError() }
            switch try parseStatement() {
            case .insert(var insert): insert.with = with; return .insert(insert)
            case .update(var update): update.with = with; return .update(update)
            case .delete(var delete): delete.with = with; return .delete(delete)
            default: throw syntaxError()
            }
        case "VALUES": return .select(try parseSelect())
        case "SAVEPOINT":
            position += 1
            return .savepoint(try parseName())
        case "RELEASE":
            position += 1
            _ = acceptKeyword("SAVEPOINT")
            return .release(try parseName())
        case "REINDEX":
            position += 1
            guard current.kind != .end, !peekSymbol(";") else { return .reindex(nil) }
            let name = try parseObjectName()
            return .reindex(name)
        case "PRAGMA":
            position += 1
            return .pragma(try parsePragma())
        case "VACUUM":
            position += 1
            var schema: String?
            if current.kind == .quotedIdentifier || (current.kind == .identifier && !peekKeyword("INTO")) { schema = try parseName() }
            if peekKeyword("INTO") { throw DAOError.unsupported("VACUUM INTO") }
            return .vacuum(schema: schema)
        case "ANALYZE":
            position += 1
            guard current.kind != .end, !peekSymbol(";") else { return .analyze(schema: nil, name: nil) }
            let first = try parseName()
            guard acceptSymbol(".") else { return .analyze(schema: nil, name: first) }
            return .analyze(schema: first, name: try parseName())
        case "ATTACH", "DETACH", "EXPLAIN":
            throw DAOError.unsupported(token.upper)
        default: throw syntaxError()
        }
    }

    private mutating func parseCreate() throws -> Statement {
        let start = current.start
        try expectKeyword("CREATE")
        let temporary = acceptKeyword("TEMP") || acceptKeyword("TEMPORARY")
        if temporary, !peekKeyword("TABLE") {
            if peekKeyword("VIEW") { return .createView(try parseCreateView(start: start, temporary: true)) }
            if peekKeyword("TRIGGER") { return .createTrigger(try parseCreateTrigger(start: start, temporary: true)) }
            throw syntaxError()
        }
        if peekKeyword("VIEW") { return .createView(try parseCreateView(start: start, temporary: false)) }
        if peekKeyword("TRIGGER") { return .createTrigger(try parseCreateTrigger(start: start, temporary: false)) }
        if peekKeyword("VIRTUAL") { throw DAOError.unsupported("VIRTUAL TABLE") }
        let unique = acceptKeyword("UNIQUE")
        if acceptKeyword("INDEX") {
            let ifNotExists = try parseIfNotExists()
            let name = try parseObjectName()
            try expectKeyword("ON")
            let table = try parseObjectName()
            try expectSymbol("(")
            let columns = try parseIndexedColumns()
            if peekKeyword("WHERE") { throw DAOError.unsupported("partial index") }
            return .createIndex(CreateIndexStatement(name: name, table: table, unique: unique, ifNotExists: ifNotExists, columns: columns))
        }
        guard !unique else { throw syntaxError() }
        try expectKeyword("TABLE")
        let ifNotExists = try parseIfNotExists()
        let name = try parseObjectName()
        if peekKeyword("AS") { throw DAOError.unsupported("CREATE TABLE AS") }
        try expectSymbol("(")
        var columns: [ColumnDefinition] = []
        var primaryKey: [IndexedColumn]?
        var uniques: [[IndexedColumn]] = []
        var primaryKeyConflict: ConflictMode?
        var uniqueConflicts: [ConflictMode?] = []
        var foreignKeys: [ForeignKey] = []
        var checks: [CheckConstraint] = []
        repeat {
            let constraintName = acceptKeyword("CONSTRAINT") ? try parseName() : nil
            if acceptKeyword("PRIMARY") {
                try expectKeyword("KEY")
                try expectSymbol("(")
                guard primaryKey == nil, !columns.contains(where: \.primaryKey) else {
                    throw SQLExecutionError("table \"\(name)\" has more than one primary key")
                }
                primaryKey = try parseIndexedColumns()
                primaryKeyConflict = try parseConflictClause()
            } else if acceptKeyword("UNIQUE") {
                try expectSymbol("(")
                uniques.append(try parseIndexedColumns())
                uniqueConflicts.append(try parseConflictClause())
            } else if acceptKeyword("CHECK") {
                checks.append(try parseCheck(name: constraintName, column: nil))
            } else if acceptKeyword("FOREIGN") {
                try expectKeyword("KEY")
                try expectSymbol("(")
                let childColumns = try parseNameList()
                try expectKeyword("REFERENCES")
                foreignKeys.append(try parseReferences(columns: childColumns))
            } else {
                guard primaryKey == nil, uniques.isEmpty else { throw syntaxError() }
                let column = try parseColumnDefinition()
                if column.primaryKey, columns.contains(where: \.primaryKey) {
                    throw SQLExecutionError("table \"\(name)\" has more than one primary key")
                }
                columns.append(column)
            }
        } while acceptSymbol(",")
        try expectSymbol(")")
        if peekKeyword("WITHOUT") { throw DAOError.unsupported("WITHOUT ROWID") }
        if peekKeyword("STRICT") { throw DAOError.unsupported("STRICT") }
        return .createTable(CreateTableStatement(name: name, ifNotExists: ifNotExists, columns: columns, primaryKey: primaryKey,
                                                 uniques: uniques, primaryKeyConflict: primaryKeyConflict, uniqueConflicts: uniqueConflicts,
                                                 foreignKeys: columns.compactMap(\.references) + foreignKeys,
                                                 checks: columns.flatMap(\.checks) + checks, temporary: temporary))
    }

    /// `TRIGGER [IF NOT EXISTS] name [BEFORE|AFTER] event ON table [FOR EACH ROW] [WHEN expr]
    /// BEGIN stmt; ... END`, after CREATE (Engine/Triggers.swift); its text is kept for the catalog.
    /// `start`: where its CREATE begins (its text is kept from there).
    private mutating func parseCreateTrigger(start: Int, temporary: Bool) throws -> CreateTriggerStatement {
        try expectKeyword("TRIGGER")
        let ifNotExists = try parseIfNotExists()
        let name = try parseObjectName()
        var timing = TriggerTiming.before
        if acceptKeyword("AFTER") { timing = .after }
        else if acceptKeyword("INSTEAD") { throw DAOError.unsupported("INSTEAD OF trigger") }
        else { _ = acceptKeyword("BEFORE") }
        let event: TriggerEvent
        var columns: [String]?
        if acceptKeyword("INSERT") { event = .insert }
        else if acceptKeyword("DELETE") { event = .delete }
        else {
            try expectKeyword("UPDATE")
            event = .update
            if acceptKeyword("OF") {
                var names: [String] = []
                repeat { names.append(try parseName()) } while acceptSymbol(",")
                columns = names
            }
        }
        try expectKeyword("ON")
        let table = try parseObjectName()
        if acceptKeyword("FOR") { try expectKeyword("EACH"); try expectKeyword("ROW") }
        var when: Expr?
        if acceptKeyword("WHEN") { when = try parseExpression() }
        try expectKeyword("BEGIN")
        let parametersBefore = parameterCount
        inTriggerBody = true
        defer { inTriggerBody = false }
        var body: [Statement] = []
        repeat {
            guard current.kind == .identifier, ["INSERT", "REPLACE", "UPDATE", "DELETE", "SELECT", "WITH", "VALUES"].contains(current.upper) else {
                throw syntaxError()
            }
            body.append(try parseStatement())
            try expectSymbol(";")
        } while !acceptKeyword("END")
        if parameterCount != parametersBefore { throw SQLExecutionError("trigger cannot use variables") }
        let text = sourceText(from: start, to: tokens[position - 1].end)
        return CreateTriggerStatement(name: name, ifNotExists: ifNotExists, timing: timing, event: event, columns: columns,
                                      table: table, when: when, body: body, sql: text, temporary: temporary)
    }

    /// `RAISE(IGNORE)` or `RAISE(ABORT|FAIL|ROLLBACK, message)`, only in a trigger's body: a call
    /// of the function `raise` whose first argument names the action (Engine/Triggers.swift).
    private mutating func parseRaise() throws -> Expr {
        guard inTriggerBody else { throw SQLExecutionError("RAISE() may only be used within a trigger-program") }
        position += 1
        try expectSymbol("(")
        let action = current.upper
        guard current.kind == .identifier, ["IGNORE", "ABORT", "FAIL", "ROLLBACK"].contains(action) else { throw syntaxError() }
        position += 1
        var args: [Expr] = [.literal(.text(action))]
        if action != "IGNORE" {
            try expectSymbol(",")
            args.append(try parseExpression())
        }
        try expectSymbol(")")
        return .function(name: TriggerRaise.functionName, args: args, distinct: false, star: false)
    }

    /// After CHECK: `(expr)`, its text kept as written.
    private mutating func parseCheck(name: String?, column: String?) throws -> CheckConstraint {
        try expectSymbol("(")
        let start = current.start
        let expr = try parseExpression()
        let text = sourceText(from: start, to: tokens[position - 1].end)
        try expectSymbol(")")
        return CheckConstraint(name: name, text: text, expr: expr, column: column)
    }

    /// After REFERENCES: `parent [(col, ...)]`, then any of `ON DELETE|UPDATE action`, `MATCH
    /// name` (SQLite ignores it), `[NOT] DEFERRABLE [INITIALLY DEFERRED|IMMEDIATE]`.
    private mutating func parseReferences(columns: [String]) throws -> ForeignKey {
        var key = ForeignKey(columns: columns, parent: try parseObjectName())
        if acceptSymbol("(") { key.parentColumns = try parseNameList() }
        if let parentColumns = key.parentColumns, parentColumns.count != columns.count {
            throw SQLExecutionError("number of columns in foreign key does not match the number of columns in the referenced table")
        }
        while true {
            if peekKeyword("ON"), peekKeyword("DELETE", at: 1) || peekKeyword("UPDATE", at: 1) {
                position += 1
                let isDelete = acceptKeyword("DELETE")
                if !isDelete { try expectKeyword("UPDATE") }
                let action: String
                if acceptKeyword("SET") {
                    if acceptKeyword("NULL") { action = "SET NULL" } else { try expectKeyword("DEFAULT"); action = "SET DEFAULT" }
                } else if acceptKeyword("CASCADE") {
                    action = "CASCADE"
                } else if acceptKeyword("RESTRICT") {
                    action = "RESTRICT"
                } else {
                    try expectKeyword("NO")
                    try expectKeyword("ACTION")
                    action = "NO ACTION"
                }
                if isDelete { key.onDelete = action } else { key.onUpdate = action }
            } else if acceptKeyword("MATCH") {
                // SIMPLE, PARTIAL, FULL: any name (FULL is a keyword), ignored as by SQLite.
                guard current.kind == .identifier || current.kind == .quotedIdentifier else { throw syntaxError() }
                position += 1
            } else if peekKeyword("DEFERRABLE") || (peekKeyword("NOT") && peekKeyword("DEFERRABLE", at: 1)) {
                var words = acceptKeyword("NOT") ? ["NOT"] : []
                try expectKeyword("DEFERRABLE")
                words.append("DEFERRABLE")
                if acceptKeyword("INITIALLY") {
                    words.append("INITIALLY")
                    if acceptKeyword("DEFERRED") { words.append("DEFERRED") } else { try expectKeyword("IMMEDIATE"); words.append("IMMEDIATE") }
                }
                key.deferrable = words.joined(separator: " ")
            } else {
                return key
            }
        }
    }

    /// A constraint's `ON CONFLICT ROLLBACK | ABORT | FAIL | IGNORE | REPLACE`, nil when none.
    private mutating func parseConflictClause() throws -> ConflictMode? {
        guard peekKeyword("ON"), peekKeyword("CONFLICT", at: 1) else { return nil }
        position += 2
        return try parseConflictMode(after: "ON CONFLICT")
    }

    private mutating func parseIfNotExists() throws -> Bool {
        guard acceptKeyword("IF") else { return false }
        try expectKeyword("NOT")
        try expectKeyword("EXISTS")
        return true
    }

    /// `col [COLLATE x] [ASC|DESC], ... )` after the opening parenthesis.
    private mutating func parseIndexedColumns() throws -> [IndexedColumn] {
        var columns: [IndexedColumn] = []
        repeat {
            let name = try parseName()
            if peekSymbol("(") || peekSymbol("+") || peekSymbol("-") || peekSymbol("||") {
                throw DAOError.unsupported("index on expression")
            }
            let collation = try parseCollationClause()
            let descending = acceptKeyword("DESC") ? true : (acceptKeyword("ASC") ? false : false)
            columns.append(IndexedColumn(name: name, descending: descending, collation: collation))
        } while acceptSymbol(",")
        try expectSymbol(")")
        return columns
    }

    /// A type name: one or more identifiers, optionally `(n)` or `(n, m)`.
    private mutating func parseTypeName() throws -> String {
        var words: [String] = []
        let columnConstraintWords: Set<String> = ["PRIMARY", "NOT", "NULL", "UNIQUE", "DEFAULT", "CHECK", "REFERENCES",
                                                  "CONSTRAINT", "COLLATE", "GENERATED", "AS"]
        while (current.kind == .identifier && !columnConstraintWords.contains(current.upper)) || current.kind == .quotedIdentifier {
            words.append(current.text)
            position += 1
        }
        var typeName = words.joined(separator: " ")
        if !words.isEmpty, acceptSymbol("(") {
            var inner: [String] = []
            repeat {
                var number = ""
                if acceptSymbol("-") { number = "-" } else { _ = acceptSymbol("+") }
                guard current.kind == .integer || current.kind == .real else { throw syntaxError() }
                number += current.text
                position += 1
                inner.append(number)
            } while acceptSymbol(",")
            try expectSymbol(")")
            typeName += "(" + inner.joined(separator: ",") + ")"
        }
        return typeName
    }

    private mutating func parseColumnDefinition() throws -> ColumnDefinition {
        let name = try parseName()
        var column = ColumnDefinition(name: name, typeName: try parseTypeName())
        while true {
            let constraintName = acceptKeyword("CONSTRAINT") ? try parseName() : nil
            if acceptKeyword("PRIMARY") {
                try expectKeyword("KEY")
                if acceptKeyword("DESC") { column.primaryKeyDescending = true } else { _ = acceptKeyword("ASC") }
                column.primaryKeyConflict = try parseConflictClause()
                column.primaryKey = true
                if acceptKeyword("AUTOINCREMENT") { column.autoincrement = true }
            } else if acceptKeyword("NOT") {
                try expectKeyword("NULL")
                column.notNullConflict = try parseConflictClause()
                column.notNull = true
            } else if acceptKeyword("NULL") {
                continue
            } else if acceptKeyword("UNIQUE") {
                column.uniqueConflict = try parseConflictClause()
                column.unique = true
            } else if acceptKeyword("DEFAULT") {
                let start = current.start
                let value: Expr
                if acceptSymbol("(") {
                    value = try parseExpression()
                    try expectSymbol(")")
                } else if acceptSymbol("-") {
                    if current.kind == .integer, Parser.integerMagnitude(current.text) == UInt64(Int64.max) + 1 {
                        position += 1
                        value = .literal(.integer(Int64.min))
                    } else {
                        value = .unary(.negate, try parseLiteralOnly())
                    }
                } else if acceptSymbol("+") {
                    value = try parseLiteralOnly()
                } else if current.kind == .identifier, ["CURRENT_TIME", "CURRENT_DATE", "CURRENT_TIMESTAMP"].contains(current.upper) {
                    // Evaluated for each row inserted without the column, as in an expression.
                    value = .function(name: current.upper.lowercased(), args: [], distinct: false, star: false)
                    position += 1
                } else {
                    value = try parseLiteralOnly()
                }
                column.defaultValue = value
                column.defaultText = sourceText(from: start, to: tokens[position - 1].end)
            } else if acceptKeyword("CHECK") {
                column.checks.append(try parseCheck(name: constraintName, column: name))
            } else if acceptKeyword("REFERENCES") {
                column.references = try parseReferences(columns: [name])
                column.references?.onColumn = true
            } else if let collation = try parseCollationClause() {
                column.collation = collation
            } else if peekKeyword("GENERATED") || peekKeyword("AS") {
                throw DAOError.unsupported("generated column")
            } else {
                break
            }
        }
        if column.autoincrement, !(column.primaryKey && column.typeName.uppercased() == "INTEGER") {
            throw SQLExecutionError("AUTOINCREMENT is only allowed on an INTEGER PRIMARY KEY")
        }
        return column
    }

    private mutating func parseLiteralOnly() throws -> Expr {
        let token = current
        switch token.kind {
        case .string, .integer, .real, .blob:
            return try parsePrimary()
        case .identifier where ["NULL", "TRUE", "FALSE"].contains(token.upper):
            return try parsePrimary()
        case .quotedIdentifier: // SQLite reads DEFAULT "x" as the string 'x'
            position += 1
            return .literal(.text(token.text))
        case .identifier where !Parser.reserved.contains(token.upper):
            position += 1
            return .literal(.text(token.text))
        default:
            throw syntaxError()
        }
    }

    /// `name, ...)` after an opening parenthesis: a list of column names (a view's, a WITH
    /// table's, an INSERT's).
    private mutating func parseNameList() throws -> [String] {
        var names: [String] = []
        repeat { names.append(try parseName()) } while acceptSymbol(",")
        try expectSymbol(")")
        return names
    }

    /// `VIEW [IF NOT EXISTS] name [(columns)] AS select` after CREATE [TEMP].
    private mutating func parseCreateView(start: Int, temporary: Bool) throws -> CreateViewStatement {
        try expectKeyword("VIEW")
        let ifNotExists = try parseIfNotExists()
        let name = try parseObjectName()
        var columns: [String]?
        if acceptSymbol("(") { columns = try parseNameList() }
        try expectKeyword("AS")
        let select = try Parser.inliningCommonTables(try parseSelect())
        let text = sourceText(from: start, to: tokens[position - 1].end)
        return CreateViewStatement(name: name, temporary: temporary, ifNotExists: ifNotExists, columns: columns, select: select, text: text)
    }

    private mutating func parseDrop() throws -> Statement {
        try expectKeyword("DROP")
        if acceptKeyword("VIEW") || acceptKeyword("TRIGGER") {
            let isView = tokens[position - 1].upper == "VIEW"
            var ifExists = false
            if acceptKeyword("IF") { try expectKeyword("EXISTS"); ifExists = true }
            let name = try parseObjectName()
            return isView ? .dropView(name, ifExists: ifExists) : .dropTrigger(name, ifExists: ifExists)
        }
        let isTable: Bool
        if acceptKeyword("TABLE") { isTable = true } else { try expectKeyword("INDEX"); isTable = false }
        var ifExists = false
        if acceptKeyword("IF") { try expectKeyword("EXISTS"); ifExists = true }
        let name = try parseObjectName()
        return isTable ? .dropTable(name, ifExists: ifExists) : .dropIndex(name, ifExists: ifExists)
    }

    private mutating func parseAlter() throws -> Statement {
        try expectKeyword("ALTER")
        try expectKeyword("TABLE")
        let table = try parseObjectName()
        if acceptKeyword("RENAME") {
            if acceptKeyword("TO") { return .renameTable(table, to: try parseName()) }
            _ = acceptKeyword("COLUMN")
            let column = try parseName()
            try expectKeyword("TO")
            return .renameColumn(table: table, column, to: try parseName())
        }
        if acceptKeyword("DROP") {
            _ = acceptKeyword("COLUMN")
            return .dropColumn(table: table, try parseName())
        }
        try expectKeyword("ADD")
        _ = acceptKeyword("COLUMN")
        return .addColumn(table: table, try parseColumnDefinition())
    }

    /// After PRAGMA: `[main.]name [= value | (value)]`.
    private mutating func parsePragma() throws -> PragmaStatement {
        var name = try parseName()
        if acceptSymbol(".") {
            guard name.lowercased() == "main" else { throw DAOError.unsupported("PRAGMA of schema \(name)") }
            name = try parseName()
        }
        var pragma = PragmaStatement(name: name.lowercased(), value: nil, assigns: false)
        if acceptSymbol("=") {
            pragma.assigns = true
            pragma.value = try parsePragmaValue()
        } else if acceptSymbol("(") {
            pragma.value = try parsePragmaValue()
            try expectSymbol(")")
        }
        return pragma
    }

    /// A pragma's value: a signed number, a name or keyword (ON, WAL), or a string.
    private mutating func parsePragmaValue() throws -> String {
        var sign = ""
        if acceptSymbol("-") { sign = "-" } else if acceptSymbol("+") { sign = "" }
        let token = current
        switch token.kind {
        case .integer, .real:
            position += 1
            return sign + token.text
        case .identifier, .quotedIdentifier, .string:
            guard sign.isEmpty else { throw syntaxError() }
            position += 1
            return token.text
        default:
            throw syntaxError()
        }
    }

    private mutating func parseInsert() throws -> InsertStatement {
        var mode = ConflictMode.unspecified
        if acceptKeyword("REPLACE") {
            mode = .replace
        } else {
            try expectKeyword("INSERT")
            if acceptKeyword("OR") { mode = try parseConflictMode(after: "INSERT") }
        }
        try expectKeyword("INTO")
        let table = try parseObjectName()
        if peekKeyword("AS") { throw DAOError.unsupported("INSERT alias") }
        var columns: [String]?
        if acceptSymbol("(") { columns = try parseNameList() }
        var statement = InsertStatement(table: table, mode: mode, columns: columns, values: nil, select: nil)
        if acceptKeyword("VALUES") {
            var rows: [[Expr]] = []
            repeat {
                try expectSymbol("(")
                var row: [Expr] = []
                repeat { row.append(try parseExpression()) } while acceptSymbol(",")
                try expectSymbol(")")
                if let first = rows.first, first.count != row.count {
                    throw SQLExecutionError("all VALUES must have the same number of terms")
                }
                rows.append(row)
            } while acceptSymbol(",")
            statement.values = rows
        } else if peekKeyword("SELECT") || peekKeyword("WITH") {
            statement.select = try parseSelect()
        } else if acceptKeyword("DEFAULT") {
            try expectKeyword("VALUES")
            statement.values = []
        } else {
            throw syntaxError()
        }
        if peekKeyword("ON") {
            if statement.select != nil { throw DAOError.unsupported("UPSERT after INSERT ... SELECT") }
            statement.upsert = try parseUpsert()
        }
        statement.returning = try parseReturning()
        return statement
    }

    /// A result column that is an expression, with its `[AS] alias` and its text as written
    /// (SQLite's column name when there is no alias).
    private mutating func parseExpressionColumn() throws -> ResultColumn {
        let start = current.start
        let expr = try parseExpression()
        let text = sourceText(from: start, to: tokens[position - 1].end)
        var alias: String?
        if acceptKeyword("AS") {
            alias = try parseName()
        } else if current.kind == .quotedIdentifier || current.kind == .string
                    || (current.kind == .identifier && !Parser.reserved.contains(current.upper)) {
            alias = current.text
            position += 1
        }
        return ResultColumn(kind: .expression(expr), alias: alias, text: text)
    }

    /// `RETURNING * | expr [[AS] alias], ...`, or nil when the statement has none.
    private mutating func parseReturning() throws -> [ResultColumn]? {
        guard acceptKeyword("RETURNING") else { return nil }
        var columns: [ResultColumn] = []
        repeat {
            if acceptSymbol("*") {
                columns.append(ResultColumn(kind: .all, alias: nil, text: "*"))
                continue
            }
            columns.append(try parseExpressionColumn())
        } while acceptSymbol(",")
        return columns
    }

    /// `ON CONFLICT [(columns)] DO NOTHING | DO UPDATE SET name = expr, ... [WHERE expr]`.
    private mutating func parseUpsert() throws -> UpsertClause {
        try expectKeyword("ON")
        try expectKeyword("CONFLICT")
        var clause = UpsertClause()
        if acceptSymbol("(") {
            var names: [String] = []
            repeat {
                names.append(try parseName())
                clause.targetCollations.append(try parseCollationClause())
                _ = acceptKeyword("ASC") || acceptKeyword("DESC")
            } while acceptSymbol(",")
            try expectSymbol(")")
            if peekKeyword("WHERE") { throw DAOError.unsupported("UPSERT target WHERE") }
            clause.target = names
        }
        try expectKeyword("DO")
        if !acceptKeyword("NOTHING") {
            try expectKeyword("UPDATE")
            try expectKeyword("SET")
            clause.assignments = try parseAssignments()
            if acceptKeyword("WHERE") { clause.whereClause = try parseExpression() }
        }
        if peekKeyword("ON") { throw DAOError.unsupported("several ON CONFLICT clauses") }
        return clause
    }

    /// `name = expr, ...` after SET (UPDATE, an upsert's DO UPDATE); `(a, b) = (x, y)` sets
    /// each column to its item. (`(a, b) = (SELECT ...)` is refused.)
    private mutating func parseAssignments() throws -> [(String, Expr)] {
        var assignments: [(String, Expr)] = []
        repeat {
            if acceptSymbol("(") {
                var names: [String] = []
                repeat { names.append(try parseName()) } while acceptSymbol(",")
                try expectSymbol(")")
                try expectSymbol("=")
                let value = try parseExpression()
                guard let items = Self.rowValueItems(value) else {
                    // `(a) = expr`, or a row of columns set from a subquery (refused).
                    guard names.count == 1 else { throw DAOError.unsupported("row value") }
                    assignments.append((names[0], value))
                    continue
                }
                guard items.count == names.count else {
                    throw SQLExecutionError("\(names.count) columns assigned \(items.count) values")
                }
                assignments += zip(names, items).map { ($0, $1) }
                continue
            }
            let name = try parseName()
            try expectSymbol("=")
            assignments.append((name, try parseExpression()))
        } while acceptSymbol(",")
        return assignments
    }

    /// The conflict resolution after `INSERT OR` / `UPDATE OR`.
    private mutating func parseConflictMode(after verb: String) throws -> ConflictMode {
        if acceptKeyword("REPLACE") { return .replace }
        if acceptKeyword("IGNORE") { return .ignore }
        if acceptKeyword("ABORT") { return .abort }
        if acceptKeyword("FAIL") { return .fail }
        if acceptKeyword("ROLLBACK") { return .rollback }
        throw syntaxError()
    }

    private mutating func parseUpdate() throws -> UpdateStatement {
        try expectKeyword("UPDATE")
        let mode = acceptKeyword("OR") ? try parseConflictMode(after: "UPDATE") : .unspecified
        let table = try parseObjectName()
        try expectKeyword("SET")
        var assignments = try parseAssignments()
        var from: [FromItem]?
        if acceptKeyword("FROM") { from = try parseFromItems() }
        var whereClause: Expr?
        if acceptKeyword("WHERE") { whereClause = try parseExpression() }
        if let from {
            (assignments, whereClause) = try Self.updateFrom(from, assignments: assignments, whereClause: whereClause)
        }
        let returning = try parseReturning()
        if peekKeyword("ORDER") || peekKeyword("LIMIT") { throw DAOError.unsupported("UPDATE ... LIMIT") }
        return UpdateStatement(table: table, assignments: assignments, whereClause: whereClause, returning: returning, mode: mode)
    }

    /// `UPDATE t SET c = e, ... FROM f WHERE w` (SQLite 3.33+): t joined with f; each row of t
    /// with a match is updated once, from a matching row. Written as correlated subqueries over
    /// f: `SET c = (SELECT e FROM f WHERE w), ... WHERE EXISTS (SELECT 1 FROM f WHERE w)`, t's
    /// columns in e and w read from the row being updated. Where several rows of f match with
    /// different values of e (SQLite then takes any one of them), the scalar subquery's check
    /// refuses the statement rather than pick another one than SQLite would.
    static func updateFrom(_ from: [FromItem], assignments: [(String, Expr)], whereClause: Expr?) throws -> ([(String, Expr)], Expr) {
        func select(_ column: Expr, limit: Expr?) -> SelectStatement {
            var statement = SelectStatement(distinct: false, columns: [ResultColumn(kind: .expression(column), alias: nil, text: "")],
                                            table: nil, tableAlias: nil, whereClause: whereClause, groupBy: [], having: nil,
                                            orderBy: [], limit: limit, offset: nil)
            if from.count == 1, case .table(let name) = from[0].source {
                statement.table = name
                statement.tableAlias = from[0].alias
                statement.indexHint = from[0].indexHint
            } else {
                statement.from = from
            }
            return statement
        }
        let one = Expr.literal(.integer(1))
        let rewritten = assignments.map { name, expr in (name, Expr.subquery(SubqueryPlan(select(expr, limit: nil)))) }
        return (rewritten, .exists(SubqueryPlan(select(one, limit: nil)), negated: false))
    }

    private mutating func parseDelete() throws -> DeleteStatement {
        try expectKeyword("DELETE")
        try expectKeyword("FROM")
        let table = try parseObjectName()
        var whereClause: Expr?
        if acceptKeyword("WHERE") { whereClause = try parseExpression() }
        let returning = try parseReturning()
        if peekKeyword("ORDER") || peekKeyword("LIMIT") { throw DAOError.unsupported("DELETE ... LIMIT") }
        return DeleteStatement(table: table, whereClause: whereClause, returning: returning)
    }

    /// A SELECT, compound or not, with its WITH clause (`with`, when the caller read it).
    mutating func parseSelect(after with: WithClause? = nil) throws -> SelectStatement {
        let firstWindowCall = windowCalls.count
        var with = with
        if with == nil, peekKeyword("WITH") { with = try parseWithClause() }
        var endsWithValues = peekKeyword("VALUES")
        var statement = try parseSelectCore()
        statement.with = with
        while let op = acceptCompoundOperator() {
            // SQLITE_MAX_COMPOUND_SELECT
            guard statement.compound.count < 499 else { throw SQLExecutionError("too many terms in compound SELECT") }
            endsWithValues = peekKeyword("VALUES")
            statement.compound.append(CompoundTerm(op: op, select: try parseSelectCore()))
        }
        // SQLite's grammar takes no ORDER BY or LIMIT after a VALUES list.
        if endsWithValues && (peekKeyword("ORDER") || peekKeyword("LIMIT")) { throw syntaxError() }
        try parseOrderAndLimit(into: &statement)
        // Window functions: the SELECT becomes one over a subquery that computes them.
        if windowCalls.count > firstWindowCall { statement = try rewriteWindows(in: statement) }
        return statement
    }

    /// `VALUES (row), ...` as a SELECT: one core per row joined by UNION ALL (as SQLite, which
    /// reads a VALUES list after a compound operator as one nested compound), its columns
    /// named column1, column2, ...
    private mutating func parseValuesCore() throws -> SelectStatement {
        try expectKeyword("VALUES")
        var cores: [SelectStatement] = []
        repeat {
            try expectSymbol("(")
            var columns: [ResultColumn] = []
            repeat {
                let start = current.start
                let expr = try parseExpression()
                columns.append(ResultColumn(kind: .expression(expr), alias: cores.isEmpty ? "column\(columns.count + 1)" : nil,
                                            text: sourceText(from: start, to: tokens[position - 1].end)))
            } while acceptSymbol(",")
            try expectSymbol(")")
            if let first = cores.first, first.columns.count != columns.count {
                throw SQLExecutionError("all VALUES must have the same number of terms")
            }
            cores.append(SelectStatement(distinct: false, columns: columns, table: nil, tableAlias: nil, whereClause: nil,
                                         groupBy: [], having: nil, orderBy: [], limit: nil, offset: nil))
        } while acceptSymbol(",")
        var statement = cores[0]
        statement.compound = cores.dropFirst().map { CompoundTerm(op: .unionAll, select: $0) }
        return statement
    }

    /// UNION [ALL], INTERSECT or EXCEPT, consumed; nil when none comes next.
    private mutating func acceptCompoundOperator() -> CompoundOperator? {
        if acceptKeyword("UNION") { return acceptKeyword("ALL") ? .unionAll : .union }
        if acceptKeyword("INTERSECT") { return .intersect }
        if acceptKeyword("EXCEPT") { return .except }
        return nil
    }

    /// `WITH [RECURSIVE] name [(columns)] AS (select), ...`, followed by a SELECT (or, at the
    /// start of a statement, by INSERT, REPLACE, UPDATE or DELETE).
    private mutating func parseWithClause() throws -> WithClause {
        try expectKeyword("WITH")
        let recursive = acceptKeyword("RECURSIVE")
        var tables: [CommonTableExpression] = []
        repeat {
            let name = try parseName()
            var columns: [String]?
            if acceptSymbol("(") { columns = try parseNameList() }
            try expectKeyword("AS")
            if acceptKeyword("NOT") { try expectKeyword("MATERIALIZED") } else { _ = acceptKeyword("MATERIALIZED") }
            try expectSymbol("(")
            let select = try parseSelect()
            try expectSymbol(")")
            if tables.contains(where: { $0.name.lowercased() == name.lowercased() }) {
                throw SQLExecutionError("duplicate WITH table name: \(name)")
            }
            tables.append(CommonTableExpression(name: name, columns: columns, select: select))
        } while acceptSymbol(",")
        return WithClause(recursive: recursive, tables: tables)
    }

    /// One SELECT core: from SELECT to HAVING, or a VALUES list.
    private mutating func parseSelectCore() throws -> SelectStatement {
        if peekKeyword("VALUES") { return try parseValuesCore() }
        try expectKeyword("SELECT")
        var distinct = false
        if acceptKeyword("DISTINCT") { distinct = true } else { _ = acceptKeyword("ALL") }
        var columns: [ResultColumn] = []
        repeat {
            if acceptSymbol("*") {
                columns.append(ResultColumn(kind: .all, alias: nil, text: "*"))
                continue
            }
            if (current.kind == .identifier || current.kind == .quotedIdentifier), tokens[position + 1].kind == .symbol,
               tokens[position + 1].text == ".", tokens[min(position + 2, tokens.count - 1)].text == "*" {
                let qualifier = current.text
                position += 3 // t.*
                columns.append(ResultColumn(kind: .all, alias: nil, text: "*", qualifier: qualifier))
                continue
            }
            columns.append(try parseExpressionColumn())
        } while acceptSymbol(",")
        var statement = SelectStatement(distinct: distinct, columns: columns, table: nil, tableAlias: nil, whereClause: nil,
                                        groupBy: [], having: nil, orderBy: [], limit: nil, offset: nil)
        if acceptKeyword("FROM") {
            let items = try parseFromItems()
            if items.count == 1, case .table(let name) = items[0].source {
                statement.table = name
                statement.tableAlias = items[0].alias
                statement.indexHint = items[0].indexHint
            } else {
                if items.contains(where: { $0.indexHint != nil }) { throw DAOError.unsupported("INDEXED BY in a join") }
                statement.from = items
            }
        }
        if acceptKeyword("WHERE") { statement.whereClause = try parseExpression() }
        if acceptKeyword("GROUP") {
            try expectKeyword("BY")
            repeat { statement.groupBy.append(try parseExpression()) } while acceptSymbol(",")
            if acceptKeyword("HAVING") { statement.having = try parseExpression() }
        } else if acceptKeyword("HAVING") {
            statement.having = try parseExpression()
        }
        if acceptKeyword("WINDOW") {
            repeat {
                let name = try parseName()
                try expectKeyword("AS")
                statement.windowDefinitions.append((name, try parseWindowDefinition()))
            } while acceptSymbol(",")
        }
        return statement
    }

    /// ORDER BY, LIMIT and OFFSET of a SELECT (of the whole, for a compound select).
    private mutating func parseOrderAndLimit(into statement: inout SelectStatement) throws {
        if acceptKeyword("ORDER") {
            try expectKeyword("BY")
            repeat {
                // `x COLLATE name` stays a marker the compiler sorts by (compileSelect, compoundOrder).
                var expr = try parseExpression()
                let descending = acceptKeyword("DESC") ? true : (acceptKeyword("ASC") ? false : false)
                if acceptKeyword("NULLS") {
                    let nullsFirst = acceptKeyword("FIRST")
                    if !nullsFirst { try expectKeyword("LAST") }
                    // NULLs come first ascending and last descending; the other placement sorts
                    // on `expr IS NULL` first (1 for NULL), in the term's direction.
                    if nullsFirst == descending {
                        if !statement.compound.isEmpty { throw DAOError.unsupported("NULLS FIRST/LAST in a compound select") }
                        if case .literal = expr { throw DAOError.unsupported("NULLS FIRST/LAST on a column number") }
                        statement.orderBy.append(OrderTerm(expr: .isNull(expr, negated: false), descending: descending))
                    }
                }
                statement.orderBy.append(OrderTerm(expr: expr, descending: descending))
            } while acceptSymbol(",")
        }
        if acceptKeyword("LIMIT") {
            let first = try parseExpression()
            if acceptKeyword("OFFSET") {
                statement.limit = first
                statement.offset = try parseExpression()
            } else if acceptSymbol(",") {
                statement.offset = first
                statement.limit = try parseExpression()
            } else {
                statement.limit = first
            }
        }
    }

    /// The items of a FROM clause: tables and `(SELECT ...)` with aliases, joined by commas,
    /// `[NATURAL] [INNER | LEFT [OUTER] | CROSS] JOIN` with `ON` or `USING`.
    private mutating func parseFromItems() throws -> [FromItem] {
        var items: [FromItem] = []
        var join = JoinOperator.inner
        var natural = false
        while true {
            if items.isEmpty, peekSymbol("("), !peekKeyword("SELECT", at: 1), !peekKeyword("WITH", at: 1), !peekKeyword("VALUES", at: 1) {
                // `(a JOIN b ...)` first in FROM reads as the same joins written without the
                // parentheses (joins associate to the left); elsewhere, or with an alias, refused.
                position += 1
                try enterNesting()
                items = try parseFromItems()
                nesting -= 1
                try expectSymbol(")")
                if peekKeyword("AS") || current.kind == .quotedIdentifier
                    || (current.kind == .identifier && !Parser.reserved.contains(current.upper)) {
                    throw DAOError.unsupported("parenthesized join")
                }
            } else {
                items.append(try parseFromItem(join: join, natural: natural, first: items.isEmpty))
            }
            // The operator before the next item.
            natural = false
            if acceptSymbol(",") { join = .inner; continue }
            if acceptKeyword("NATURAL") { natural = true }
            if acceptKeyword("JOIN") { join = .inner; continue }
            if acceptKeyword("INNER") { try expectKeyword("JOIN"); join = .inner; continue }
            if acceptKeyword("CROSS") { try expectKeyword("JOIN"); join = .cross; continue }
            if acceptKeyword("LEFT") {
                _ = acceptKeyword("OUTER")
                try expectKeyword("JOIN")
                join = .left
                continue
            }
            if peekKeyword("RIGHT") { throw DAOError.unsupported("RIGHT JOIN") }
            if peekKeyword("FULL") { throw DAOError.unsupported("FULL JOIN") }
            if natural { throw syntaxError() }
            return items
        }
    }

    /// One FROM item: a table or `(SELECT ...)` (or `(VALUES ...)`), its alias, and its ON or
    /// USING.
    private mutating func parseFromItem(join: JoinOperator, natural: Bool, first: Bool) throws -> FromItem {
        var item: FromItem
        if acceptSymbol("(") {
            guard peekKeyword("SELECT") || peekKeyword("VALUES") || peekKeyword("WITH") else {
                throw DAOError.unsupported("parenthesized join")   // not first in FROM
            }
            item = FromItem(source: .subquery(try Parser.inliningCommonTables(try parseSelect())))
            try expectSymbol(")")
        } else {
            item = FromItem(source: .table(try parseObjectName()))
            if peekSymbol("(") { throw DAOError.unsupported("table-valued function") }
        }
        if acceptKeyword("AS") {
            item.alias = try parseName()
        } else if current.kind == .quotedIdentifier || (current.kind == .identifier && !Parser.reserved.contains(current.upper)
                                                        && !["INDEXED"].contains(current.upper)) {
            item.alias = current.text
            position += 1
        }
        if acceptKeyword("INDEXED") {
            try expectKeyword("BY")
            item.indexHint = .indexedBy(try parseName())
        } else if peekKeyword("NOT") && peekKeyword("INDEXED", at: 1) {
            position += 2
            item.indexHint = .notIndexed
        }
        item.join = join
        item.natural = natural
        if !first {
            if acceptKeyword("ON") {
                item.on = try parseExpression()
            } else if acceptKeyword("USING") {
                try expectSymbol("(")
                var names: [String] = []
                repeat { names.append(try parseName()) } while acceptSymbol(",")
                try expectSymbol(")")
                item.using = names
            }
        }
        return item
    }

    // MARK: Expressions (SQLite's precedence, lowest first)

    mutating func parseExpression() throws -> Expr {
        let start = current
        try enterNesting()
        defer { nesting -= 1 }
        let expression = try parseOr()
        // Checked once per outermost expression: chains of binary operators grow the tree
        // without nesting the descent.
        if nesting == 1, expression.depth > Parser.maxExpressionDepth {
            throw DAOError.syntax(message: "Expression tree is too large (maximum depth \(Parser.maxExpressionDepth))",
                                  line: start.line, column: start.column)
        }
        return expression
    }

    /// One level deeper into nested expressions; leave with `nesting -= 1`.
    private mutating func enterNesting() throws {
        nesting += 1
        guard nesting <= Parser.maxNesting else {
            throw DAOError.syntax(message: "parser stack overflow", line: current.line, column: current.column)
        }
    }

    private mutating func parseOr() throws -> Expr {
        var left = try parseAnd()
        while acceptKeyword("OR") { left = .binary(.or, left, try parseAnd()) }
        return left
    }

    private mutating func parseAnd() throws -> Expr {
        var left = try parseNot()
        while acceptKeyword("AND") { left = .binary(.and, left, try parseNot()) }
        return left
    }

    private mutating func parseNot() throws -> Expr {
        if acceptKeyword("NOT") {
            try enterNesting()
            defer { nesting -= 1 }
            return .unary(.not, try parseNot())
        }
        return try parseEquality()
    }

    /// `TRUE` or `FALSE` right after `IS [NOT]` (and not the start of a longer operand): SQLite's
    /// truth tests, not a comparison with 1 or 0.
    private mutating func acceptTruthValue() -> Bool? {
        guard current.kind == .identifier, current.upper == "TRUE" || current.upper == "FALSE" else { return nil }
        let next = tokens[position + 1]
        if next.kind == .symbol, [".", "("].contains(next.text) { return nil }
        position += 1
        return tokens[position - 1].upper == "TRUE"
    }

    /// `x IS [NOT] TRUE | FALSE` as SQLite evaluates it: whether x is true (not NULL and not
    /// zero as a number: `2 IS TRUE` and `0.5 IS TRUE` are 1) or false (not NULL and zero), 1 or
    /// 0, never NULL.
    static func truthTest(_ operand: Expr, isTrue: Bool, negated: Bool) -> Expr {
        let yes = Expr.literal(.integer(1)), no = Expr.literal(.integer(0))
        if isTrue {
            return .caseWhen(base: nil, whens: [(operand, negated ? no : yes)], otherwise: negated ? yes : no)
        }
        return .caseWhen(base: nil, whens: [(.isNull(operand, negated: false), negated ? yes : no), (operand, negated ? yes : no)],
                         otherwise: negated ? no : yes)
    }

    private mutating func parseEquality() throws -> Expr {
        var left = try parseRelational()
        while true {
            if acceptSymbol("=") || acceptSymbol("==") { left = try Self.compare(.equal, left, try parseRelational()); continue }
            if acceptSymbol("!=") || acceptSymbol("<>") { left = try Self.compare(.notEqual, left, try parseRelational()); continue }
            if acceptKeyword("IS") {
                let negated = acceptKeyword("NOT")
                if acceptKeyword("DISTINCT") {
                    try expectKeyword("FROM")
                    left = try Self.compare(negated ? .isOp : .isNot, left, try parseRelational())
                    continue
                }
                if let truth = acceptTruthValue() {
                    left = Self.truthTest(left, isTrue: truth, negated: negated)
                    continue
                }
                left = try Self.compare(negated ? .isNot : .isOp, left, try parseRelational())
                continue
            }
            if acceptKeyword("ISNULL") { left = .isNull(left, negated: false); continue }
            if acceptKeyword("NOTNULL") { left = .isNull(left, negated: true); continue }
            var negated = false
            if peekKeyword("NOT"), ["NULL", "IN", "LIKE", "GLOB", "BETWEEN", "MATCH", "REGEXP"].contains(tokens[position + 1].upper) {
                position += 1
                negated = true
                if acceptKeyword("NULL") { left = .isNull(left, negated: true); continue }
            }
            if acceptKeyword("IN") {
                guard acceptSymbol("(") else {
                    guard current.kind == .identifier || current.kind == .quotedIdentifier else { throw syntaxError() }
                    // `x IN t`: the rows of t's one column.
                    let name = try parseObjectName()
                    if peekSymbol("(") { throw DAOError.unsupported("table-valued function") }
                    let all = SelectStatement(distinct: false, columns: [ResultColumn(kind: .all, alias: nil, text: "*")], table: name,
                                              tableAlias: nil, whereClause: nil, groupBy: [], having: nil, orderBy: [], limit: nil, offset: nil)
                    left = .inSelect(left, SubqueryPlan(all), negated: negated)
                    continue
                }
                if peekKeyword("SELECT") || peekKeyword("WITH") {
                    let select = try Parser.inliningCommonTables(try parseSelect())
                    try expectSymbol(")")
                    left = .inSelect(left, SubqueryPlan(select), negated: negated)
                    continue
                }
                var items: [Expr] = []
                if !peekSymbol(")") {
                    repeat { items.append(try parseExpression()) } while acceptSymbol(",")
                }
                try expectSymbol(")")
                left = .inList(left, items, negated: negated)
                continue
            }
            if acceptKeyword("LIKE") {
                let pattern = try parseRelational()
                var escape: Expr?
                if acceptKeyword("ESCAPE") { escape = try parseRelational() }
                left = .like(left, pattern, escape: escape, negated: negated)
                continue
            }
            if acceptKeyword("GLOB") {
                left = .glob(left, try parseRelational(), negated: negated)
                continue
            }
            if peekKeyword("MATCH") || peekKeyword("REGEXP") { throw DAOError.unsupported(current.upper) }
            if acceptKeyword("BETWEEN") {
                let low = try parseRelational()
                try expectKeyword("AND")
                let high = try parseRelational()
                left = .between(left, low, high, negated: negated)
                continue
            }
            if negated { throw syntaxError() }
            return left
        }
    }

    private mutating func parseRelational() throws -> Expr {
        var left = try parseBitwise()
        while true {
            if acceptSymbol("<") { left = try Self.compare(.less, left, try parseBitwise()) }
            else if acceptSymbol("<=") { left = try Self.compare(.lessEqual, left, try parseBitwise()) }
            else if acceptSymbol(">") { left = try Self.compare(.greater, left, try parseBitwise()) }
            else if acceptSymbol(">=") { left = try Self.compare(.greaterEqual, left, try parseBitwise()) }
            else { return left }
        }
    }

    private mutating func parseBitwise() throws -> Expr {
        var left = try parseAdditive()
        while true {
            if acceptSymbol("&") { left = .binary(.bitAnd, left, try parseAdditive()) }
            else if acceptSymbol("|") { left = .binary(.bitOr, left, try parseAdditive()) }
            else if acceptSymbol("<<") { left = .binary(.shiftLeft, left, try parseAdditive()) }
            else if acceptSymbol(">>") { left = .binary(.shiftRight, left, try parseAdditive()) }
            else { return left }
        }
    }

    private mutating func parseAdditive() throws -> Expr {
        var left = try parseMultiplicative()
        while true {
            if acceptSymbol("+") { left = .binary(.add, left, try parseMultiplicative()) }
            else if acceptSymbol("-") { left = .binary(.subtract, left, try parseMultiplicative()) }
            else { return left }
        }
    }

    private mutating func parseMultiplicative() throws -> Expr {
        var left = try parseConcat()
        while true {
            if acceptSymbol("*") { left = .binary(.multiply, left, try parseConcat()) }
            else if acceptSymbol("/") { left = .binary(.divide, left, try parseConcat()) }
            else if acceptSymbol("%") { left = .binary(.remainder, left, try parseConcat()) }
            else { return left }
        }
    }

    private mutating func parseConcat() throws -> Expr {
        var left = try parseUnary()
        while acceptSymbol("||") { left = .binary(.concat, left, try parseUnary()) }
        return left
    }

    private mutating func parseUnary() throws -> Expr {
        // A sign binds tighter than COLLATE (SQLite's grammar): `-4 COLLATE x` is `(-4) COLLATE x`.
        try parsePostfix(try parseSigned())
    }

    /// `-x`, `+x`, `~x` (any number of signs), or a primary expression.
    private mutating func parseSigned() throws -> Expr {
        guard peekSymbol("-") || peekSymbol("+") || peekSymbol("~") else { return try parsePrimary() }
        try enterNesting()
        defer { nesting -= 1 }
        if acceptSymbol("-") {
            // Fold -literal so -9223372036854775808 is an integer, as in SQLite.
            if current.kind == .integer, let magnitude = Parser.integerMagnitude(current.text) {
                if magnitude == UInt64(Int64.max) + 1 { position += 1; return .literal(.integer(Int64.min)) }
            }
            return .unary(.negate, try parseSigned())
        }
        if acceptSymbol("+") { return .unary(.plus, try parseSigned()) }
        if acceptSymbol("~") { return .unary(.bitNot, try parseSigned()) }
        return try parsePrimary()
    }

    /// `expr COLLATE name [COLLATE name ...]`: a marker call (`collated`) that comparisons,
    /// ORDER BY, GROUP BY, DISTINCT and min()/max() take their collation from (the resolver
    /// decides which one a comparison uses, as SQLite does); as a value it is `expr`.
    /// - Throws: `SQLExecutionError` "no such collation sequence" for an unknown name.
    private mutating func parsePostfix(_ expr: Expr) throws -> Expr {
        // A loop, not recursion: a long chain of COLLATEs is a deep tree (refused by its
        // depth afterwards), never a deep parser stack.
        var result = expr
        while acceptKeyword("COLLATE") {
            result = Self.collate(result, try Collation.named(try parseName()))
        }
        return result
    }

    /// The marker call of an explicit collation (a name no SQL can call: it has a space).
    static let collateFunctionName = "collate "

    /// `expr COLLATE collation` as the marker call.
    static func collate(_ expr: Expr, _ collation: Collation) -> Expr {
        .function(name: collateFunctionName, args: [expr, .literal(.integer(Int64(collation.rawValue)))], distinct: false, star: false)
    }

    /// The marker call the resolver puts on a comparison's left operand (or IN's, BETWEEN's
    /// subject, a CASE candidate) with the collation the comparison uses, where it is not
    /// already that operand's explicit one. Unlike `COLLATE`, it is no explicit collation to
    /// the expressions around (SQLite's EP_Collate).
    static let comparedByFunctionName = "compared by"

    /// The marker call of a value that compares as a column of that collation would (a
    /// trigger's `NEW.x` / `OLD.x`, SQLite's TK_TRIGGER): no explicit collation either.
    static let columnCollationFunctionName = "column collation"

    /// The operand and collation of an explicit `COLLATE` marker, or nil for any other expression.
    @inline(__always)
    static func collated(_ expr: Expr) -> (Expr, Collation)? {
        guard let (inner, collation, explicit) = marked(expr), explicit else { return nil }
        return (inner, collation)
    }

    /// The operand and collation of either marker call, or nil for any other expression.
    @inline(__always)
    static func marked(_ expr: Expr) -> (Expr, Collation, explicit: Bool)? {
        guard case .function(let name, let args, _, _) = expr, args.count == 2,
              name == collateFunctionName || name == comparedByFunctionName || name == columnCollationFunctionName,
              case .literal(.integer(let raw)) = args[1], let collation = Collation(rawValue: UInt8(truncatingIfNeeded: raw)) else { return nil }
        return (args[0], collation, name == collateFunctionName)
    }

    /// The collation a comparison whose left operand is `left` uses (after the resolver):
    /// that operand's marker, else BINARY.
    @inline(__always)
    static func comparisonCollation(_ left: Expr) -> Collation {
        guard case .function = left, let (_, collation, _) = marked(left) else { return .binary }
        return collation
    }

    /// The marker call of a row value `(a, b, ...)` (a name no SQL can call).
    static let rowValueFunctionName = "row value"

    /// The items of a row value marker, or nil for any other expression.
    static func rowValueItems(_ expr: Expr) -> [Expr]? {
        if case .function(let name, let args, _, _) = expr, name == rowValueFunctionName { return args }
        return nil
    }

    /// `left op right`; two row values of one size are compared as SQLite compares them, item
    /// by item from the left: `=` and `IS` when every pair is, `<>` and `IS NOT` when any pair
    /// is; `<`, `<=`, `>`, `>=` decided by the first pair that differs (a NULL in a pair
    /// reached makes the answer NULL). So `(a, b) < (x, y)` is `a < x OR (a = x AND b < y)`,
    /// each pair compared with its own affinities.
    /// - Throws: `SQLExecutionError` ("row value misused") for row values of different sizes;
    ///   `DAOError.unsupported` for a row value against anything else (a subquery's row).
    static func compare(_ op: BinaryOperator, _ left: Expr, _ right: Expr) throws -> Expr {
        let leftItems = rowValueItems(left), rightItems = rowValueItems(right)
        guard leftItems != nil || rightItems != nil else { return .binary(op, left, right) }
        guard let l = leftItems, let r = rightItems else { throw DAOError.unsupported("row value") }
        guard l.count == r.count else { throw SQLExecutionError("row value misused") }
        switch op {
        case .equal, .isOp:
            return l.indices.dropFirst().reduce(Expr.binary(op, l[0], r[0])) { .binary(.and, $0, .binary(op, l[$1], r[$1])) }
        case .notEqual, .isNot:
            return l.indices.dropFirst().reduce(Expr.binary(op, l[0], r[0])) { .binary(.or, $0, .binary(op, l[$1], r[$1])) }
        case .less, .lessEqual, .greater, .greaterEqual:
            let strict: BinaryOperator = op == .less || op == .lessEqual ? .less : .greater
            var result = Expr.binary(op, l[l.count - 1], r[r.count - 1])
            for i in stride(from: l.count - 2, through: 0, by: -1) {
                result = .binary(.or, .binary(strict, l[i], r[i]), .binary(.and, .binary(.equal, l[i], r[i]), result))
            }
            return result
        default:
            throw DAOError.unsupported("row value")
        }
    }

    /// What a sort or grouping under `collation` orders by: a text folded as SQLite's
    /// collation compares it (NOCASE: ASCII letters to lower case; RTRIM: trailing spaces
    /// dropped), any other value as it is, so the order of the storage classes stays.
    static func sortKey(_ expr: Expr, collation: Collation) -> Expr {
        switch collation {
        case .binary: return expr
        case .nocase, .rtrim: return .function(name: foldFunctionName, args: [expr, .literal(.integer(Int64(collation.rawValue)))], distinct: false, star: false)
        }
    }

    /// The call that folds its first argument by the collation its second names
    /// (`Collation.fold`; a name no SQL can call).
    static let foldFunctionName = "collation fold"

    /// `COLLATE name` in a column, index or conflict-target definition, if there is one.
    /// - Throws: `SQLExecutionError` "no such collation sequence" for an unknown name.
    private mutating func parseCollationClause() throws -> Collation? {
        guard acceptKeyword("COLLATE") else { return nil }
        return try Collation.named(try parseName())
    }

    static func integerMagnitude(_ text: String) -> UInt64? {
        if text.hasPrefix("0x") || text.hasPrefix("0X") { return UInt64(text.dropFirst(2), radix: 16) }
        return UInt64(text)
    }

    private mutating func parsePrimary() throws -> Expr {
        let token = current
        switch token.kind {
        case .integer:
            position += 1
            if token.text.hasPrefix("0x") || token.text.hasPrefix("0X") {
                guard token.text.count > 2, token.text.count <= 18, let bits = UInt64(token.text.dropFirst(2), radix: 16) else {
                    throw DAOError.syntax(message: "hex literal too big: \(token.text)", line: token.line, column: token.column)
                }
                return .literal(.integer(Int64(bitPattern: bits)))
            }
            if let value = Int64(token.text) { return .literal(.integer(value)) }
            return .literal(.real(SQLValues.atof(token.text)))
        case .real:
            position += 1
            return .literal(.real(SQLValues.atof(token.text)))
        case .string:
            position += 1
            return .literal(.text(token.text))
        case .blob:
            position += 1
            return .literal(.blob(token.blob))
        case .positionalParameter:
            position += 1
            if token.text.isEmpty {
                parameterCount += 1
                return .parameter(parameterCount - 1)
            }
            guard let number = Int(token.text), number >= 1, number <= 32766 else {
                throw DAOError.syntax(message: "variable number must be between ?1 and ?32766", line: token.line, column: token.column)
            }
            parameterCount = max(parameterCount, number)
            return .parameter(number - 1)
        case .namedParameter:
            position += 1
            if let slot = parameterNames[token.text] { return .parameter(slot) }
            parameterCount += 1
            parameterNames[token.text] = parameterCount - 1
            return .parameter(parameterCount - 1)
        case .symbol where token.text == "(":
            position += 1
            if peekKeyword("SELECT") || peekKeyword("WITH") {
                let select = try Parser.inliningCommonTables(try parseSelect())
                try expectSymbol(")")
                return .subquery(SubqueryPlan(select))
            }
            let inner = try parseExpression()
            guard acceptSymbol(",") else {
                try expectSymbol(")")
                return inner
            }
            // `(a, b, ...)`: a row value, kept as a marker call that a comparison with another
            // row value of the same size takes apart (`compare`); anywhere else the resolver
            // refuses it.
            var items = [inner]
            repeat { items.append(try parseExpression()) } while acceptSymbol(",")
            try expectSymbol(")")
            return .function(name: Parser.rowValueFunctionName, args: items, distinct: false, star: false)
        case .quotedIdentifier:
            position += 1
            return try parseColumnTail(first: token.text)
        case .identifier:
            switch token.upper {
            case "NULL": position += 1; return .literal(.null)
            case "TRUE": position += 1; return .literal(.integer(1))
            case "FALSE": position += 1; return .literal(.integer(0))
            case "CASE": return try parseCase()
            case "CAST":
                position += 1
                try expectSymbol("(")
                let inner = try parseExpression()
                try expectKeyword("AS")
                let typeName = try parseTypeName()
                try expectSymbol(")")
                return .cast(inner, typeName: typeName)
            case "EXISTS":
                position += 1
                try expectSymbol("(")
                let select = try Parser.inliningCommonTables(try parseSelect())
                try expectSymbol(")")
                return .exists(SubqueryPlan(select), negated: false)
            case "SELECT": throw DAOError.unsupported("subquery")
            case "RAISE": return try parseRaise()
            case "CURRENT_TIME", "CURRENT_DATE", "CURRENT_TIMESTAMP":
                position += 1
                return .function(name: token.upper.lowercased(), args: [], distinct: false, star: false)
            default: break
            }
            if Parser.reserved.contains(token.upper) { throw syntaxError() }
            position += 1
            if acceptSymbol("(") { return try parseFunctionCall(name: token.text) }
            return try parseColumnTail(first: token.text)
        default:
            throw syntaxError()
        }
    }

    private mutating func parseColumnTail(first: String) throws -> Expr {
        if acceptSymbol(".") {
            let second = try parseName()
            if acceptSymbol(".") {
                // schema.table.column: `main` is the one schema.
                guard first.lowercased() == "main" else { throw DAOError.unsupported("schema-qualified name \(first).") }
                return .column(table: second, name: try parseName())
            }
            return .column(table: first, name: second)
        }
        return .column(table: nil, name: first)
    }

    private mutating func parseFunctionCall(name: String) throws -> Expr {
        var args: [Expr] = []
        var distinct = false
        var star = false
        if acceptSymbol("*") {
            star = true
        } else if !peekSymbol(")") {
            if acceptKeyword("DISTINCT") { distinct = true } else { _ = acceptKeyword("ALL") }
            repeat { args.append(try parseExpression()) } while acceptSymbol(",")
            if peekKeyword("ORDER") { throw DAOError.unsupported("ORDER BY in aggregate") }
        }
        try expectSymbol(")")
        if acceptKeyword("FILTER") {
            // `agg(x) FILTER (WHERE c)` is `agg(CASE WHEN c THEN x END)`: every aggregate here
            // skips NULLs (count(*) counts `CASE WHEN c THEN 1 END`).
            try expectSymbol("(")
            try expectKeyword("WHERE")
            let condition = try parseExpression()
            try expectSymbol(")")
            let lowered = name.lowercased()
            let isAggregate = ScalarFunctions.aggregateNames.contains(lowered) && !(["min", "max"].contains(lowered) && args.count != 1)
            guard isAggregate else {
                if WindowFunction(name: lowered) != nil {
                    throw SQLExecutionError("FILTER clause may only be used with aggregate window functions")
                }
                throw SQLExecutionError("FILTER may not be used with non-aggregate \(lowered)()")
            }
            if star {
                star = false
                args = [.caseWhen(base: nil, whens: [(condition, .literal(.integer(1)))], otherwise: nil)]
            } else if let first = args.first {
                args[0] = .caseWhen(base: nil, whens: [(condition, first)], otherwise: nil)
            }
        }
        if acceptKeyword("OVER") { return try parseWindowCall(name: name.lowercased(), args: args, distinct: distinct, star: star) }
        // row_number(), lag(), ... exist only with OVER.
        if let function = WindowFunction(name: name.lowercased()), !function.isAggregate {
            throw SQLExecutionError("misuse of window function \(name.lowercased())()")
        }
        return .function(name: name.lowercased(), args: args, distinct: distinct, star: star)
    }

    private mutating func parseCase() throws -> Expr {
        try expectKeyword("CASE")
        var base: Expr?
        if !peekKeyword("WHEN") { base = try parseExpression() }
        var whens: [(Expr, Expr)] = []
        while acceptKeyword("WHEN") {
            let condition = try parseExpression()
            try expectKeyword("THEN")
            whens.append((condition, try parseExpression()))
        }
        guard !whens.isEmpty else { throw syntaxError() }
        var otherwise: Expr?
        if acceptKeyword("ELSE") { otherwise = try parseExpression() }
        try expectKeyword("END")
        return .caseWhen(base: base, whens: whens, otherwise: otherwise)
    }
}
