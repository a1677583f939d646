import Foundation

/// Swift values of a DAO call's arguments as SQL values: integers (and Bool as 0/1) as
/// `.integer`, Double/Float as `.real`, String as `.text`, Data and [UInt8] as `.blob`, Date as
/// `.real` seconds since 1970 (as the source binds NSDate), nil/NSNull as `.null`, NSNumber by
/// its kind, DAOValue as is; arrays, dictionaries and other Encodable values as their JSON text.
enum ValueConversion {
    /// `value` when it is exactly `[UInt8]` (an empty array of another type also passes an
    /// `as? [UInt8]` cast, so the type is compared instead).
    static func bytes(_ value: Any) -> [UInt8]? {
        type(of: value) == [UInt8].self ? value as? [UInt8] : nil
    }

    static func daoValue(_ value: Any?) -> DAOValue {
        guard let value = ArgumentScope.unwrap(value) else { return .null }
        switch value {
        case let v as DAOValue: return v
        case let v as Bool: return .integer(v ? 1 : 0)
        case let v as Int: return .integer(Int64(v))
        case let v as Int64: return .integer(v)
        case let v as Int32: return .integer(Int64(v))
        case let v as Int16: return .integer(Int64(v))
        case let v as Int8: return .integer(Int64(v))
        case let v as UInt: return v <= UInt(Int64.max) ? .integer(Int64(v)) : .real(Double(v))
        case let v as UInt64: return v <= UInt64(Int64.max) ? .integer(Int64(v)) : .real(Double(v))
        case let v as UInt32: return .integer(Int64(v))
        case let v as UInt16: return .integer(Int64(v))
        case let v as UInt8: return .integer(Int64(v))
        case let v as Double: return .real(v)
        case let v as Float: return .real(Double(v))
        case let v as String: return .text(v)
        case let v as Substring: return .text(String(v))
        case let v as Character: return .text(String(v))
        case let v as Data: return .blob([UInt8](v))
        case _ where bytes(value) != nil: return .blob(bytes(value) ?? [])
        case let v as Date: return .real(v.timeIntervalSince1970)
        case let v as URL: return .text(v.absoluteString)
        case let v as UUID: return .text(v.uuidString)
        case let v as NSNumber:
            let type = String(cString: v.objCType)
            return type == "f" || type == "d" ? .real(v.doubleValue) : .integer(v.int64Value)
        case let v as NSString: return .text(v as String)
        default: break
        }
        if let encodable = value as? any Encodable, let data = try? JSONEncoder().encode(encodable),
           let text = String(data: data, encoding: .utf8) {
            return .text(text)
        }
        if JSONSerialization.isValidJSONObject(value), let data = try? JSONSerialization.data(withJSONObject: value),
           let text = String(data: data, encoding: .utf8) {
            return .text(text)
        }
        return .text(String(describing: value))
    }
}

/// SQL literal text for `@{...}` splices and macros.
enum SQLLiteral {
    /// `value` as SQLite would read it back: NULL, digits, a real with a decimal point or
    /// exponent, a quoted string ('' for a quote), or X'hex'.
    static func literal(_ value: DAOValue, quoted: Bool = true) -> String {
        switch value {
        case .null: return quoted ? "NULL" : ""
        case .integer(let v): return String(v)
        case .real(let v): return real(v)
        case .text(let s): return quoted ? "'" + s.replacingOccurrences(of: "'", with: "''") + "'" : s
        case .blob(let b):
            let hex = b.map { String(format: "%02X", $0) }.joined()
            return quoted ? "X'" + hex + "'" : hex
        }
    }

    /// A real in text SQLite parses as a real (never as an integer).
    static func real(_ v: Double) -> String {
        if v.isNaN { return "NULL" }
        if v.isInfinite { return v > 0 ? "9e999" : "-9e999" }
        let text = "\(v)"
        return text.contains(".") || text.contains("e") || text.contains("E") ? text : text + ".0"
    }
}
