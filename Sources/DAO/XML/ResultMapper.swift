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
        return try one(query.columns, row, spec)
    }

    private func one(_ columns: [String], _ row: [DAOValue], _ spec: ResultSpec) throws -> Any? {
        let first = row.first ?? .null
        switch spec {
        case .int: return Self.integer(first).map { Int(truncatingIfNeeded: $0) }
        case .longLong: return Self.integer(first)
        case .bool: return Self.integer(first).map { $0 != 0 }
        case .double: return Self.double(first)
        case .string: return Self.string(first)
        case .binary: return Self.data(first)
        case .dictionary: return anyDictionary(dictionary(columns, row))
        case .type(let name): return try decode(dictionary(columns, row), type: name, many: false)
        case .map(let id):
            let (renamed, target) = try mapped(columns, row, id)
            if case .type(let name) = target { return try decode(renamed, type: name, many: false) }
            return anyDictionary(renamed)
        case .array: return nil
        }
    }

    private func array(_ query: SQLResult, _ inner: ResultSpec) throws -> Any {
        let firsts = query.rows.map { $0.first ?? .null }
        switch inner {
        case .int: return firsts.map { Int(truncatingIfNeeded: Self.integer($0) ?? 0) }
        case .longLong: return firsts.map { Self.integer($0) ?? 0 }
        case .bool: return firsts.map { (Self.integer($0) ?? 0) != 0 }
        case .double: return firsts.map { Self.double($0) ?? 0 }
        case .string: return firsts.map { Self.string($0) ?? "" }
        case .binary: return firsts.map { Self.data($0) ?? Data() }
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

    private func decode(_ row: [String: DAOValue], type: String, many: Bool) throws -> Any {
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

    static func integer(_ value: DAOValue) -> Int64? {
        switch value {
        case .null: return nil
        case .integer(let v): return v
        case .real(let v): return v.isNaN ? 0 : (v >= 9.2e18 ? .max : (v <= -9.2e18 ? .min : Int64(v)))
        case .text(let s): return leadingNumber(s).map { d in Int64(exactly: d.rounded(.towardZero)) ?? 0 } ?? 0
        case .blob(let b): return leadingNumber(String(decoding: b, as: UTF8.self)).map { Int64(exactly: $0.rounded(.towardZero)) ?? 0 } ?? 0
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

    /// The longest prefix of `text` (after leading spaces) that is a number, as SQLite reads
    /// text in numeric context.
    private static func leadingNumber(_ text: String) -> Double? {
        let trimmed = text.drop { $0 == " " || $0 == "\t" || $0 == "\n" }
        var end = trimmed.startIndex
        var best: Double?
        var index = trimmed.startIndex
        while index < trimmed.endIndex {
            index = trimmed.index(after: index)
            if let v = Double(trimmed[trimmed.startIndex..<index]), !trimmed[trimmed.startIndex..<index].contains(where: { $0.isLetter && $0 != "e" && $0 != "E" }) {
                best = v
                end = index
            }
            if trimmed.distance(from: trimmed.startIndex, to: index) > 40 { break }
        }
        _ = end
        return best
    }
}
