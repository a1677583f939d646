import Foundation
import UnifiedStorage

/// The JSON-lines export format of `ustore export` / `ustore import`: a header line, then one
/// line per live record, so a store can move between machines and format versions.
///
/// Header: `{"format":"ustore-export","version":1}`. Record lines:
/// `{"space":N,"spaceName":"dao.table.t","key_base64":"...","value_base64":"...","expiresAt":MS,"purgeable":true}`
/// where `spaceName` is present for a space registered with `LogStore.space(named:)` (import
/// registers the name again and may get another number), `expiresAt` (milliseconds since
/// 1970) only for a value that expires, and `purgeable` only when set. Values are as `get`
/// returns them (decrypted, decompressed); the engine's own space (0xFFFFFFFF: key checks,
/// dictionaries, space names) is not exported.
struct ExportRecord: Equatable {
    var space: LogStore.KeySpace
    var spaceName: String?
    var key: [UInt8]
    var value: [UInt8]
    var expiresAt: Int64?
    var purgeable: Bool

    static let header = JSON.ordered(["format": .string("ustore-export"), "version": .int(1)])
    /// The record flag bit of a purgeable value (FORMAT.md "Records").
    static let purgeableFlag: UInt8 = 0x40

    /// The record's line.
    var json: JSON {
        var members: [String: JSON] = [
            "space": .unsigned(UInt64(space)),
            "key_base64": .string(KeyBytes.base64(key)),
            "value_base64": .string(KeyBytes.base64(value)),
        ]
        if let spaceName { members["spaceName"] = .string(spaceName) }
        if let expiresAt { members["expiresAt"] = .integer(expiresAt) }
        if purgeable { members["purgeable"] = .bool(true) }
        return .object(members)
    }

    /// Checks that `line` is the header of a version this build reads.
    /// - Throws: `ExportFormatError` naming what is wrong.
    static func checkHeader(_ line: String) throws {
        let object = try parseObject(line, lineNumber: 1)
        guard object["format"] as? String == "ustore-export" else {
            throw ExportFormatError(line: 1, message: #"not an export: the first line must be {"format":"ustore-export","version":1}"#)
        }
        guard let version = object["version"] as? Int, version == 1 else {
            throw ExportFormatError(line: 1, message: "export version \(object["version"].map { "\($0)" } ?? "missing") is not supported (this ustore reads version 1)")
        }
    }

    /// Parses a record line.
    /// - Throws: `ExportFormatError` naming the line and the member that is wrong.
    init(line: String, lineNumber: Int) throws {
        let object = try Self.parseObject(line, lineNumber: lineNumber)
        func fail(_ message: String) -> ExportFormatError { ExportFormatError(line: lineNumber, message: message) }
        guard let space = object["space"] as? NSNumber, let spaceValue = UInt32(exactly: space.doubleValue) else {
            throw fail("\"space\" must be an integer 0...4294967295")
        }
        guard spaceValue != LogStore.engineSpace else { throw fail("space 4294967295 is the engine's own and cannot be imported") }
        guard let keyText = object["key_base64"] as? String, let key = Data(base64Encoded: keyText) else {
            throw fail("\"key_base64\" must be base64 text")
        }
        guard let valueText = object["value_base64"] as? String, let value = Data(base64Encoded: valueText) else {
            throw fail("\"value_base64\" must be base64 text")
        }
        var expiresAt: Int64?
        if let raw = object["expiresAt"], !(raw is NSNull) {
            guard let number = raw as? NSNumber, let millis = Int64(exactly: number.doubleValue) else {
                throw fail("\"expiresAt\" must be milliseconds since 1970")
            }
            expiresAt = millis
        }
        let spaceName = object["spaceName"] as? String
        if spaceName == nil && spaceValue >= 1 << 31 {
            throw fail("space \(spaceValue) belongs to the library's layers but the line has no \"spaceName\"")
        }
        self.init(space: spaceValue, spaceName: spaceName, key: [UInt8](key), value: [UInt8](value),
                  expiresAt: expiresAt, purgeable: object["purgeable"] as? Bool ?? false)
    }

    init(space: LogStore.KeySpace, spaceName: String?, key: [UInt8], value: [UInt8], expiresAt: Int64?, purgeable: Bool) {
        self.space = space
        self.spaceName = spaceName
        self.key = key
        self.value = value
        self.expiresAt = expiresAt
        self.purgeable = purgeable
    }

    private static func parseObject(_ line: String, lineNumber: Int) throws -> [String: Any] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw ExportFormatError(line: lineNumber, message: "not a JSON object")
        }
        return object
    }
}

/// A malformed line of an export.
struct ExportFormatError: Error, CustomStringConvertible {
    var line: Int
    var message: String
    var description: String { "export line \(line): \(message)" }
}
