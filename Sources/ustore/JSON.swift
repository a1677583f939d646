/// A JSON value with a deterministic text form: no whitespace, object members sorted by the
/// bytes of their names, strings escaped per RFC 8259 (quotes, backslashes and every control
/// character), everything else written as UTF-8.
enum JSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case unsigned(UInt64)
    /// A real number, always written with a decimal point or an exponent (so it reads back as
    /// a real, never as an integer); infinities as `1e999` / `-1e999`.
    case real(Double)
    case string(String)
    case array([JSON])
    case object([String: JSON])
    /// An object whose members are written in the order of `keys` (for output formats that fix
    /// the order); `members` holds their values.
    case orderedObject(keys: [String], members: [String: JSON])

    /// An object with members in the order given.
    static func ordered(_ members: KeyValuePairs<String, JSON>) -> JSON {
        .orderedObject(keys: members.map(\.key), members: Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last }))
    }

    /// An `Int` count.
    static func int(_ value: Int) -> JSON { .integer(Int64(value)) }

    /// The serialized text.
    var text: String {
        var out = ""
        write(to: &out)
        return out
    }

    /// Appends the serialized text to `out`.
    func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .integer(let value): out += String(value)
        case .unsigned(let value): out += String(value)
        case .real(let value): out += JSON.realText(value)
        case .string(let value): JSON.writeString(value, to: &out)
        case .array(let elements):
            out += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { out += "," }
                element.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            let names = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for (index, name) in names.enumerated() {
                if index > 0 { out += "," }
                JSON.writeString(name, to: &out)
                out += ":"
                members[name, default: .null].write(to: &out)
            }
            out += "}"
        case .orderedObject(let keys, let members):
            out += "{"
            for (index, name) in keys.enumerated() {
                if index > 0 { out += "," }
                JSON.writeString(name, to: &out)
                out += ":"
                members[name, default: .null].write(to: &out)
            }
            out += "}"
        }
    }

    /// The JSON number text of a real: Swift's shortest round-trip spelling, with ".0" added
    /// when it has neither a point nor an exponent. NaN (which SQL never yields) is `null`.
    static func realText(_ value: Double) -> String {
        if value.isNaN { return "null" }
        if value.isInfinite { return value < 0 ? "-1e999" : "1e999" }
        let text = String(value)
        return text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) ? text : text + ".0"
    }

    /// Appends `value` as a quoted, escaped JSON string.
    static func writeString(_ value: String, to out: inout String) {
        out += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case let control where control.value < 0x20:
                let hex = String(control.value, radix: 16, uppercase: false)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
