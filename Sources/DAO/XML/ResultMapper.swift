import Foundation

/// Maps a query's rows to what a method's `result` asks for (see `DAOProxy`).
struct ResultMapper {
    let config: DAOConfig
    let decrypt: ((DAOValue) throws -> DAOValue)?

    func map(_ query: SQLResult, as spec: ResultSpec?,
             decodeAs: (([String: DAOValue]) throws -> Any)?) throws -> Any? {
        if let decodeAs {
            guard let row = query.rows.first else { return nil }
            return try decodeAs(dictionary(query.columns, row))
        }
        guard let spec else {
            return query.rows.map { anyDictionary(dictionary(query.columns, $0)) }
        }
        if case .array(let inner) = spec {
            return try array(query, inner)
        }
        guard let row = query.rows.first else { return nil }
        if case .binary = spec, let bytes = query.textBytes(row: 0, column: 0) { return Data(bytes) }   // exact, valid UTF-8 or not
        return try one(query.columns, row, spec)
    }

    private func one(_ columns: [String], _ row: [DAOValue], _ spec: ResultSpec) throws -> Any? {
        let first = row.first ?? .null
        switch spec {
        case .int: return Self.integer(first).map(Self.int32)
        case .longLong: return Self.integer(first)
        case .bool: return Self.integer(first).map { $0 != 0 }
        case .double: return Self.double(first)
        case .string: return Self.string(first)
        case .binary: return Self.data(first)
        case .dictionary: return anyDictionary(dictionary(columns, row))
        case .type(let name): return try decode(dictionary(columns, row), type: name)
        case .map(let id):
            let (renamed, target) = try mapped(columns, row, id)
            if case .type(let name) = target { return try decode(renamed, type: name) }
            return anyDictionary(renamed)
        case .array: return nil
        }
    }

    private func array(_ query: SQLResult, _ inner: ResultSpec) throws -> Any {
        let firsts = query.rows.map { $0.first ?? .null }
        switch inner {
        case .int: return firsts.map { Self.int32(Self.integer($0) ?? 0) }
        case .longLong: return firsts.map { Self.integer($0) ?? 0 }
        case .bool: return firsts.map { (Self.integer($0) ?? 0) != 0 }
        case .double: return firsts.map { Self.double($0) ?? 0 }
        case .string: return firsts.map { Self.string($0) ?? "" }
        case .binary:
            // A text's exact bytes, valid UTF-8 or not (SQLResult.textBytes).
            return firsts.indices.map { row in
                query.textBytes(row: row, column: 0).map { Data($0) } ?? Self.data(firsts[row]) ?? Data()
            }
        case .dictionary: return query.rows.map { anyDictionary(dictionary(query.columns, $0)) }
        case .type(let name):
            return try decode(query.rows.map { dictionary(query.columns, $0) }, type: name)
        case .map(let id):
            var rows: [[String: DAOValue]] = []
            var target = ResultSpec.dictionary
            for row in query.rows {
                let (renamed, t) = try mapped(query.columns, row, id)
                rows.append(renamed)
                target = t
            }
            if case .type(let name) = target { return try decode(rows, type: name) }
            if query.rows.isEmpty, let map = config.maps[id], case .type(let name) = map.result {
                return try decode([], type: name)
            }
            return rows.map(anyDictionary)
        case .array: return [Any]()
        }
    }

    // MARK: Rows

    private func dictionary(_ columns: [String], _ row: [DAOValue]) -> [String: DAOValue] {
        var dictionary: [String: DAOValue] = [:]
        for (column, value) in zip(columns, row) where dictionary[column] == nil { dictionary[column] = value }
        return dictionary
    }

    private func mapped(_ columns: [String], _ row: [DAOValue], _ id: String) throws -> ([String: DAOValue], ResultSpec) {
        guard let map = config.maps[id] else { throw DAOError.noSuchMethod("map \(id)") }
        var renamed: [String: DAOValue] = [:]
        for (column, value) in dictionary(columns, row) { renamed[map.columns[column] ?? column] = value }
        return (renamed, map.result)
    }

    private func decrypted(_ row: [String: DAOValue], type: String) throws -> [String: DAOValue] {
        guard let decrypt, let properties = config.crypts[type] else { return row }
        var row = row
        for property in properties {
            if let value = row[property], value != .null { row[property] = try decrypt(value) }
        }
        return row
    }

    private func decode(_ row: [String: DAOValue], type: String) throws -> Any {
        guard let entry = DAOTypeRegistry.entry(type) else {
            throw DAOError.unsupported("result type \(type) is not registered (DAOTypeRegistry.register)")
        }
        return try entry.decodeOne(try decrypted(row, type: type))
    }

    private func decode(_ rows: [[String: DAOValue]], type: String) throws -> Any {
        guard let entry = DAOTypeRegistry.entry(type) else {
            throw DAOError.unsupported("result type \(type) is not registered (DAOTypeRegistry.register)")
        }
        return try entry.decodeAll(try rows.map { try decrypted($0, type: type) })
    }

    private func anyDictionary(_ row: [String: DAOValue]) -> [String: Any] {
        row.mapValues { value -> Any in
            switch value {
            case .null: return NSNull()
            case .integer(let v): return Int(truncatingIfNeeded: v)
            case .real(let v): return v
            case .text(let s): return s
            case .blob(let b): return Data(b)
            }
        }
    }

    // MARK: Scalars (SQLite's conversions: text read as its leading number)

    /// keyword.md, "@result": `int` is `[NSNumber numberWithInt]` of the column, a 32-bit int
    /// (the low 32 bits, as `sqlite3_column_int` gives them); `long long` keeps all 64.
    static func int32(_ value: Int64) -> Int {
        Int(Int32(truncatingIfNeeded: value))
    }

    static func integer(_ value: DAOValue) -> Int64? {
        switch value {
        case .null: return nil
        case .integer(let v): return v
        case .real(let v): return v.isNaN ? 0 : (v >= 9.2e18 ? .max : (v <= -9.2e18 ? .min : Int64(v)))
        case .text(let s): return leadingInteger(s)
        case .blob(let b): return leadingInteger(String(decoding: b, as: UTF8.self))
        }
    }

    static func double(_ value: DAOValue) -> Double? {
        switch value {
        case .null: return nil
        case .integer(let v): return Double(v)
        case .real(let v): return v
        case .text(let s): return leadingNumber(s) ?? 0
        case .blob(let b): return leadingNumber(String(decoding: b, as: UTF8.self)) ?? 0
        }
    }

    static func string(_ value: DAOValue) -> String? {
        switch value {
        case .null: return nil
        case .integer(let v): return String(v)
        case .real(let v): return SQLLiteral.real(v)
        case .text(let s): return s
        case .blob(let b): return String(decoding: b, as: UTF8.self)
        }
    }

    static func data(_ value: DAOValue) -> Data? {
        switch value {
        case .null: return nil
        case .blob(let b): return Data(b)
        default: return string(value).map { Data($0.utf8) }
        }
    }

    /// The integer prefix of `text` after leading spaces (sign and digits), clamped to Int64, as
    /// SQLite's CAST(text AS INTEGER); 0 when there is none.
    private static func leadingInteger(_ text: String) -> Int64 {
        let s = Array(text.utf8.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D })
        var i = 0
        var negative = false
        if i < s.count, s[i] == 0x2B || s[i] == 0x2D { negative = s[i] == 0x2D; i += 1 }
        var value: Int64 = 0
        while i < s.count, s[i] >= 0x30, s[i] <= 0x39 {
            let digit = Int64(s[i] - 0x30)
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (next, o2) = negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
            if o1 || o2 { return negative ? .min : .max }
            value = next
            i += 1
        }
        return value
    }

    /// The numeric prefix of `text` after leading spaces (sign, digits, fraction, exponent), as
    /// SQLite reads text in a numeric context; nil when there is none.
    private static func leadingNumber(_ text: String) -> Double? {
        let s = Array(text.utf8.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D })
        func isDigit(_ i: Int) -> Bool { i < s.count && s[i] >= 0x30 && s[i] <= 0x39 }
        var i = 0
        if i < s.count, s[i] == 0x2B || s[i] == 0x2D { i += 1 }
        var digits = 0
        while isDigit(i) { i += 1; digits += 1 }
        if i < s.count, s[i] == 0x2E {
            i += 1
            while isDigit(i) { i += 1; digits += 1 }
        }
        guard digits > 0 else { return nil }
        var end = i
        if i < s.count, s[i] == 0x65 || s[i] == 0x45 {
            var j = i + 1
            if j < s.count, s[j] == 0x2B || s[j] == 0x2D { j += 1 }
            if isDigit(j) {
                while isDigit(j) { j += 1 }
                end = j
            }
        }
        return Double(String(decoding: s[0..<end], as: UTF8.self))
    }
}
