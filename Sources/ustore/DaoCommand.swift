import ArgumentParser
import Foundation
import UnifiedStorage

/// `ustore dao DIR CONFIG METHOD [NAME=VALUE ...]`: runs one method of an XML DAO config on
/// the store's tables and prints its result as JSON.
struct DaoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dao",
        abstract: "Run a method of an XML DAO config on the store's tables; print its result as JSON.",
        discussion: """
            Arguments are NAME=VALUE. VALUE is read as JSON when it is a JSON number, true, \
            false, null, a "quoted string", an [array] or an {object} (a foreach method takes \
            an array); anything else is the text as written (name=ann is the string "ann"; \
            name='"42"' is the string "42"). The result prints as JSON: null for no value, \
            numbers, strings, {"blob":"<base64>"} for binary, objects for rows, arrays for \
            lists, and {"succeeded":...,"changedRowCount":...,"lastInsertRowId":...} for an \
            insert, update or delete. Exits 2 when the config does not load (naming line and \
            column) or the method fails.
            """
    )

    @OptionGroup var store: StoreDirectoryArgument
    @Argument(help: "The XML DAO config file.")
    var config: String
    @Argument(help: "The method's id.")
    var method: String
    @Argument(help: "The method's arguments as NAME=VALUE.")
    var arguments: [String] = []

    func validate() throws {
        for argument in arguments where !argument.contains("=") || argument.hasPrefix("=") {
            throw ValidationError("argument \"\(argument)\" is not NAME=VALUE")
        }
    }

    func run() throws {
        try reportingFailures {
            var named: [String: Any?] = [:]
            for argument in arguments {
                let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                named[String(parts[0])] = .some(DaoArgument.value(String(parts[1])))
            }
            let json = try StoreSession.with(store, readOnly: false) { logStore in
                let proxy = try DAOProxy(contentsOf: URL(fileURLWithPath: config), store: logStore)
                return JSON.daoResult(try proxy.call(method, named))
            }
            try Output.line(json.text)
        }
    }
}

/// Reading a command-line argument value for a DAO method.
enum DaoArgument {
    /// `text` as JSON when it is a JSON scalar, quoted string, array or object; else the text.
    /// Integral numbers become `Int64`, other numbers `Double`, `null` nil.
    static func value(_ text: String) -> Any? {
        switch text {
        case "null": return nil
        case "true": return true
        case "false": return false
        default: break
        }
        if let integer = Int64(text) { return integer }
        if text.first.map({ $0.isNumber || $0 == "-" }) == true, let real = Double(text) { return real }
        if let first = text.first, "\"[{".contains(first),
           let parsed = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) {
            return native(parsed)
        }
        return text
    }

    /// Foundation's JSON objects as Swift values (NSNumber as Bool, Int64 or Double).
    private static func native(_ object: Any) -> Any? {
        switch object {
        case is NSNull: return nil
        case let text as String: return text
        case let array as [Any]: return array.map(native)
        case let dictionary as [String: Any]: return dictionary.mapValues(native)
        case let number as NSNumber:
            if String(cString: number.objCType) == "c" { return number.boolValue }
            if let integer = Int64(exactly: number.doubleValue), !"\(number)".contains(".") { return integer }
            return number.doubleValue
        default: return "\(object)"
        }
    }
}

extension JSON {
    /// A DAO method's result as JSON (see `ustore dao --help`).
    static func daoResult(_ value: Any?) -> JSON {
        guard let value else { return .null }
        switch value {
        case let v as DAOResult:
            return .ordered(["succeeded": .bool(v.succeeded), "changedRowCount": .int(v.changedRowCount),
                             "lastInsertRowId": .integer(v.lastInsertRowId)])
        case let v as DAOValue: return sqlValue(v)
        case let v as Bool: return .bool(v)
        case let v as Int: return .int(v)
        case let v as Int64: return .integer(v)
        case let v as Double: return .real(v)
        case let v as String: return .string(v)
        case let v as Data: return .object(["blob": .string(v.base64EncodedString())])
        case let v as [UInt8]: return .object(["blob": .string(KeyBytes.base64(v))])
        case let v as [String: Any?]: return .object(v.mapValues { daoResult($0) })
        case let v as [String: Any]: return .object(v.mapValues { daoResult($0) })
        case let v as [Any?]: return .array(v.map { daoResult($0) })
        case let v as [Any]: return .array(v.map { daoResult($0) })
        case is NSNull: return .null
        default:
            // A value of a type the CLI does not know (a registered Decodable): its description.
            return .string(String(describing: value))
        }
    }
}
