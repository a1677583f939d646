import Foundation

/// The names a method body sees: the call's arguments, foreach items layered on top, and the
/// proxy's global arguments underneath. Paths read into dictionaries (`dict.key`), arrays
/// (`list.0`, `list.count`), strings (`s.count`) and any other value's stored properties
/// (`model.content`, through `Mirror`; Encodable values whose coding keys differ are also read
/// through their JSON form).
struct ArgumentScope {
    private var layers: [[String: Any?]]

    init(arguments: [String: Any?], globals: [String: Any?]) {
        layers = [globals, arguments]
    }

    /// A scope with `values` added on top (foreach items).
    func adding(_ values: [String: Any?]) -> ArgumentScope {
        var copy = self
        copy.layers.append(values)
        return copy
    }

    /// The value at `path`, nil (and `found` false) when any step is missing.
    func resolve(_ path: [String]) -> (value: Any?, found: Bool) {
        guard var first = path.first else { return (nil, false) }
        // `#{$a}` names the argument declared as `$a` (whose name is `a`).
        if first.hasPrefix("$"), first.count > 1 { first.removeFirst() }
        var current: Any?
        var found = false
        for layer in layers.reversed() {
            if let entry = layer[first] {
                current = entry
                found = true
                break
            }
        }
        guard found else { return (nil, false) }
        for component in path.dropFirst() {
            guard let value = Self.unwrap(current) else { return (nil, false) }
            guard let next = Self.member(component, of: value) else { return (nil, false) }
            current = next
        }
        return (Self.unwrap(current), true)
    }

    /// Removes any level of Optional wrapping (an `Any` holding `Optional<T>`) and NSNull.
    static func unwrap(_ value: Any?) -> Any? {
        guard let value else { return nil }
        if value is NSNull { return nil }
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            guard let child = mirror.children.first else { return nil }
            return unwrap(child.value)
        }
        return value
    }

    /// `component` of `value`: a dictionary entry, an array element or count, a string's count,
    /// or a stored property. Returns `.some(nil)` for a present nil.
    static func member(_ component: String, of value: Any) -> Any?? {
        if let dictionary = value as? [String: Any?] {
            if let entry = dictionary[component] { return .some(entry) }
            return component == "count" ? .some(dictionary.count) : nil
        }
        if let dictionary = value as? [String: Any] {
            if let entry = dictionary[component] { return .some(entry) }
            return component == "count" ? .some(dictionary.count) : nil
        }
        if let dictionary = value as? NSDictionary {
            if let entry = dictionary[component] { return .some(entry) }
            return component == "count" ? .some(dictionary.count) : nil
        }
        if let string = value as? String {
            return component == "count" || component == "length" ? .some(string.count) : nil
        }
        if value is Data || ValueConversion.bytes(value) != nil {
            let count = (value as? Data)?.count ?? ValueConversion.bytes(value)?.count ?? 0
            return component == "count" || component == "length" ? .some(count) : nil
        }
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .collection || mirror.displayStyle == .set {
            let elements = mirror.children.map(\.value)
            if component == "count" { return .some(elements.count) }
            if let index = Int(component), elements.indices.contains(index) { return .some(elements[index]) }
            return nil
        }
        var m: Mirror? = mirror
        while let current = m {
            for child in current.children where child.label == component || child.label == "_" + component {
                return .some(child.value)
            }
            m = current.superclassMirror
        }
        if let encodable = value as? any Encodable, let tree = jsonTree(of: encodable) as? [String: Any],
           let entry = tree[component] {
            return .some(entry)
        }
        return nil
    }

    /// An Encodable value as JSONSerialization objects, for properties renamed by coding keys.
    private static func jsonTree(of value: any Encodable) -> Any? {
        guard let data = try? JSONEncoder().encode(value) else { return nil }
        return try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
    }

    // MARK: Expressions

    /// Evaluates an `<if>` / `<when>` expression.
    /// - Throws: `DAOError.config` for arithmetic on non-numbers or division by zero.
    func evaluate(_ expression: Expression) throws -> ExpressionValue {
        switch expression {
        case .literal(let v):
            return v
        case .located(let inner, let line, let column):
            do {
                return try evaluate(inner)
            } catch DAOError.config(let message, line: 0, column: 0) {
                throw DAOError.config(message: message, line: line, column: column)
            }
        case .path(let path):
            return Self.expressionValue(resolve(path).value)
        case .unary(let op, let operand):
            let v = try evaluate(operand)
            if op == "not" { return .bool(!v.isTrue) }
            switch v {
            case .integer(let i): return i == .min ? .real(-Double(i)) : .integer(-i)
            case .real(let d): return .real(-d)
            case .null: return .null
            default: throw DAOError.config(message: "cannot negate \(v.text)", line: 0, column: 0)
            }
        case .binary(let op, let lhs, let rhs):
            switch op {
            case "and":
                guard try evaluate(lhs).isTrue else { return .bool(false) }
                return .bool(try evaluate(rhs).isTrue)
            case "or":
                if try evaluate(lhs).isTrue { return .bool(true) }
                return .bool(try evaluate(rhs).isTrue)
            case "xor":
                return .bool(try evaluate(lhs).isTrue != evaluate(rhs).isTrue)
            default:
                return try Self.apply(op, try evaluate(lhs), try evaluate(rhs))
            }
        }
    }

    static func expressionValue(_ value: Any?) -> ExpressionValue {
        guard let value = unwrap(value) else { return .null }
        switch value {
        case let b as Bool: return .bool(b)
        case let s as String: return .string(s)
        case let s as Substring: return .string(String(s))
        case let d as Double: return .real(d)
        case let f as Float: return .real(Double(f))
        default: break
        }
        switch ValueConversion.daoValue(value) {
        case .integer(let i): return .integer(i)
        case .real(let d): return .real(d)
        case .text(let s) where !(value is any Collection): return .string(s)
        case .blob(let b): return .object(count: b.count)
        case .null: return .null
        default:
            if let count = member("count", of: value).flatMap({ $0 }) as? Int { return .object(count: count) }
            return .object(count: 1)
        }
    }

    private static func apply(_ op: String, _ l: ExpressionValue, _ r: ExpressionValue) throws -> ExpressionValue {
        switch op {
        case "==": return .bool(compare(l, r) == 0)
        case "!=": return .bool(compare(l, r) != 0)
        case "<": return .bool(compare(l, r).map { $0 < 0 } ?? false)
        case "<=": return .bool(compare(l, r).map { $0 <= 0 } ?? false)
        case ">": return .bool(compare(l, r).map { $0 > 0 } ?? false)
        case ">=": return .bool(compare(l, r).map { $0 >= 0 } ?? false)
        default: break
        }
        if l == .null || r == .null { return .null }
        if op == "+", case .string(let a) = l, case .string(let b) = r { return .string(a + b) }
        guard let a = l.number, let b = r.number else {
            throw DAOError.config(message: "'\(op)' needs numbers, got \(l.text) and \(r.text)", line: 0, column: 0)
        }
        if let x = l.integer, let y = r.integer {
            switch op {
            case "+": let (v, o) = x.addingReportingOverflow(y); return o ? .real(a + b) : .integer(v)
            case "-": let (v, o) = x.subtractingReportingOverflow(y); return o ? .real(a - b) : .integer(v)
            case "*": let (v, o) = x.multipliedReportingOverflow(by: y); return o ? .real(a * b) : .integer(v)
            case "\\", "%", "/":
                guard y != 0 else { throw DAOError.config(message: "division by zero", line: 0, column: 0) }
                if op == "%" { return .integer(x.remainderReportingOverflow(dividingBy: y).partialValue) }
                let (q, o) = x.dividedReportingOverflow(by: y)
                if op == "\\" { return o ? .real(a / b) : .integer(q) }
                return (!o && x % y == 0) ? .integer(q) : .real(a / b)
            default: break
            }
        }
        switch op {
        case "+": return .real(a + b)
        case "-": return .real(a - b)
        case "*": return .real(a * b)
        case "/": guard b != 0 else { throw DAOError.config(message: "division by zero", line: 0, column: 0) }; return .real(a / b)
        case "\\":
            guard b != 0 else { throw DAOError.config(message: "division by zero", line: 0, column: 0) }
            let q = (a / b).rounded(.towardZero)
            return q.magnitude < 9.2e18 ? .integer(Int64(q)) : .real(q)
        case "%":
            guard b != 0 else { throw DAOError.config(message: "division by zero", line: 0, column: 0) }
            return .real(a.truncatingRemainder(dividingBy: b))
        default:
            throw DAOError.config(message: "unknown operator \(op)", line: 0, column: 0)
        }
    }

    /// Orders two values; nil when they cannot be ordered (nil against a value, a string
    /// against a number). nil equals only nil.
    private static func compare(_ l: ExpressionValue, _ r: ExpressionValue) -> Int? {
        switch (l, r) {
        case (.null, .null): return 0
        case (.null, _), (_, .null): return nil
        case (.string(let a), .string(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        default:
            if let x = l.integer, let y = r.integer { return x < y ? -1 : (x == y ? 0 : 1) }
            guard let a = l.number, let b = r.number else {
                if case .object(let x) = l, case .object(let y) = r { return x == y ? 0 : nil }
                return nil
            }
            return a < b ? -1 : (a == b ? 0 : 1)
        }
    }
}
