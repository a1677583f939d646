import Foundation
import LogStore

extension DAOProxy {
    /// The engine of the store to use now.
    func database() throws -> any SQLStatementRunner {
        try runnerProvider()
    }

    /// Runs one method: checks `$` arguments, sets the table up, renders and runs the body
    /// (per foreach element in one transaction), and maps the result.
    func invoke(_ method: MethodSpec, arguments: [String: Any?],
                decodeAs: (([String: DAOValue]) throws -> Any)?) throws -> Any? {
        for argument in method.arguments where argument.refusesNil {
            if ArgumentScope.unwrap(arguments[argument.name] ?? nil) == nil {
                throw DAOError.nilArgument(argument.name)
            }
        }
        let db = try database()
        let table = tableName
        try ensureSetUp(db, table: table)
        let scope = ArgumentScope(arguments: arguments, globals: globalArguments)
        let renderer = SQLRenderer(config: config, tableName: table, encrypt: cryptFunction(encrypting: true))
        var run = Run()
        let mapper = ResultMapper(config: config, decrypt: cryptFunction(encrypting: false))
        if let foreach = method.foreach {
            let collection = ArgumentScope.unwrap(scope.resolve(foreach.collection).value)
            // keyword.md, "@foreach": the container "must be of the NSArray or NSSet type when
            // called" (nil: no element).
            if let collection, !Self.isArrayOrSet(collection) {
                throw DAOError.config(message: "foreach of \(method.id): \(foreach.collection.joined(separator: ".")) is a \(type(of: collection)), not an array or set",
                                      line: method.position.line, column: method.position.column)
            }
            let elements = SQLRenderer.elements(of: collection)
            // keyword.md, select "@foreach": "the SELECT operation will be executed for N times,
            // and the results will be returned in an array" (NSNull for an element without one).
            var results: [Any] = []
            try inTransaction(db) {
                for (index, element) in elements.enumerated() {
                    let itemScope = scope.adding([foreach.item: element.value])
                    do {
                        let program = try renderer.render(method.statements, scope: itemScope)
                        run.query = nil
                        run.flags.append(try execute(program, on: db, run: &run))
                        if method.kind == .select {
                            results.append(try mapper.map(run.query ?? SQLResult(), as: method.result, decodeAs: decodeAs) ?? NSNull())
                        }
                    } catch {
                        guard method.resumable else { throw error }
                        run.failed.append(index)
                        run.flags.append(.none)
                        if method.kind == .select { results.append(NSNull()) }
                    }
                }
            }
            if method.kind == .select {
                if run.statements > 0 { state.withLock { $0.lastInsertRowId = run.lastInsertRowId } }
                return results
            }
        } else {
            let program = try renderer.render(method.statements, scope: scope)
            let statementCount = program.reduce(0) { count, statement in
                switch statement {
                case .sql(let list, _): return count + list.count
                case .tryExcept(let list, let except): return count + list.count + (except?.count ?? 0)
                }
            }
            if statementCount > 1 {
                try inTransaction(db) { run.flags.append(try execute(program, on: db, run: &run)) }
            } else {
                run.flags.append(try execute(program, on: db, run: &run))
            }
        }
        state.withLock {
            if run.statements > 0 { $0.lastInsertRowId = run.lastInsertRowId }
            if method.kind != .select { $0.lastChangedRowCount = run.changes }
        }
        // A select's rows (none when it ran no query), or the rows of another method's query
        // when it asks for a result.
        if method.kind == .select || (run.query != nil && (method.result != nil || decodeAs != nil)) {
            return try mapper.map(run.query ?? SQLResult(), as: method.result, decodeAs: decodeAs)
        }
        // An insert, update or delete that declares a scalar result and runs no query: the
        // changed row count, or whether it succeeded.
        switch method.result {
        case .int?: return run.changes
        case .longLong?: return Int64(run.changes)
        case .bool?: return true
        default: break
        }
        return DAOResult(succeeded: true, lastInsertRowId: run.lastInsertRowId, changedRowCount: run.changes,
                         flags: run.flags, foreachFailedObjects: run.failed)
    }

    /// Whether `value` is an array or a set (a Swift one, or NSArray / NSSet).
    static func isArrayOrSet(_ value: Any) -> Bool {
        if value is NSArray || value is NSSet { return !(value is String) }
        if value is String || value is Data { return false }
        let style = Mirror(reflecting: value).displayStyle
        return style == .collection || style == .set
    }

    /// What the statements of one call did.
    struct Run {
        var statements = 0
        var changes = 0
        var lastInsertRowId: Int64 = 0
        var query: SQLResult?
        var flags: [DAOFlag] = []
        var failed: [Int] = []
    }

    /// Runs a rendered body and says which of try/except ran.
    func execute(_ program: [RenderedStatement], on db: any SQLStatementRunner, run: inout Run) throws -> DAOFlag {
        var flag = DAOFlag.none
        func runAll(_ statements: [RenderedSQL]) throws {
            for statement in statements {
                let result = try db.execute(statement.text, arguments: statement.bindings)
                run.statements += 1
                run.changes += result.changes
                run.lastInsertRowId = result.lastInsertRowId
                if result.isQuery { run.query = result }
            }
        }
        for statement in program {
            switch statement {
            case .sql(let statements, let resumable):
                for one in statements {
                    do {
                        try runAll([one])
                    } catch {
                        if !resumable { throw error }
                    }
                }
            case .tryExcept(let attempt, let except):
                do {
                    try runAll(attempt)
                    flag = .tryBlockExecuted
                } catch {
                    guard let except else { throw error }
                    try runAll(except)
                    flag = .exceptBlockExecuted
                }
            }
        }
        return flag
    }

    /// Runs `body` in a transaction of its own, or inside the calling thread's when it has one
    /// open (whose owner then decides about a failure).
    func inTransaction(_ db: any SQLStatementRunner, _ body: () throws -> Void) throws {
        if db.ownsTransaction {
            try body()
            return
        }
        _ = try db.execute("BEGIN")
        do {
            try body()
            _ = try db.execute("COMMIT")
        } catch {
            _ = try? db.execute("ROLLBACK")
            throw error
        }
    }

    /// The `<crypt>` transform: a custom crypt's encrypt (or decrypt) of text (as UTF-8) and
    /// blob values; nil when values stay as they are (no `<crypt>`, or the default crypt, whose
    /// key already protects whole rows of a keyed store).
    func cryptFunction(encrypting: Bool) -> ((DAOValue) throws -> DAOValue)? {
        guard !config.crypts.isEmpty else { return nil }
        let (encryptCrypt, decryptCrypt) = state.withLock { ($0.encryptCrypt, $0.decryptCrypt) }
        guard let crypt = encrypting ? encryptCrypt : (decryptCrypt ?? encryptCrypt), crypt.isCustom else { return nil }
        return { value in
            let bytes: [UInt8]
            switch value {
            case .text(let s): bytes = Array(s.utf8)
            case .blob(let b): bytes = b
            default: return value
            }
            if encrypting {
                return .blob(try crypt.encryptIfCustom(bytes) ?? bytes)
            }
            let plain = try crypt.decryptIfCustom(bytes) ?? bytes
            if let text = String(validating: plain, as: UTF8.self) { return .text(text) }
            return .blob(plain)
        }
    }

    // MARK: Direct SQL

    /// Runs one statement (`?` parameters bound from `arguments`; `${T}` is the table name).
    /// - Throws: the engine's `DAOError`.
    @discardableResult
    public func executeUpdate(sql: String, arguments: [Any?] = []) throws -> DAOResult {
        let db = try database()
        let result = try db.execute(substituteTable(sql), arguments: arguments.map(ValueConversion.daoValue))
        state.withLock {
            $0.lastInsertRowId = result.lastInsertRowId
            $0.lastChangedRowCount = result.changes
        }
        return DAOResult(succeeded: true, lastInsertRowId: result.lastInsertRowId, changedRowCount: result.changes, flags: [.none])
    }

    /// Runs one query and returns its rows as column -> value.
    /// - Throws: the engine's `DAOError`.
    public func executeQuery(sql: String, arguments: [Any?] = []) throws -> [[String: DAOValue]] {
        let result = try database().execute(substituteTable(sql), arguments: arguments.map(ValueConversion.daoValue))
        return result.rows.map { row in
            var dictionary: [String: DAOValue] = [:]
            for (column, value) in zip(result.columns, row) where dictionary[column] == nil { dictionary[column] = value }
            return dictionary
        }
    }

    private func substituteTable(_ sql: String) -> String {
        let table = tableName
        return sql.replacingOccurrences(of: "${T}", with: table).replacingOccurrences(of: "${t}", with: table)
    }

    // MARK: Transactions

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    /// Calls inside it, nested `transaction`s included, join the transaction.
    /// - Throws: what `body` throws (after the rollback), or the engine's error.
    public func transaction<R>(_ body: (DAOProxy) throws -> R) throws -> R {
        if try database().ownsTransaction { return try body(self) }
        try beginTransaction()
        do {
            let result = try body(self)
            try commit()
            return result
        } catch {
            try? rollback()
            throw error
        }
    }

    /// BEGIN. - Throws: the engine's error (a transaction already open).
    public func beginTransaction() throws { _ = try database().execute("BEGIN") }

    /// COMMIT. - Throws: the engine's error (none open).
    public func commit() throws { _ = try database().execute("COMMIT") }

    /// ROLLBACK. - Throws: the engine's error (none open).
    public func rollback() throws { _ = try database().execute("ROLLBACK") }
}
