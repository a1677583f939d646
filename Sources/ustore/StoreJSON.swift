import Foundation
import UnifiedStorage

/// The JSON forms of the engine's values that several subcommands print.
extension JSON {
    /// `stats` and `compact` output: the counters and what recovery reported at open.
    static func statistics(_ stats: LogStore.Statistics, recoveryReport: [String]) -> JSON {
        .object([
            "liveKeys": .int(stats.liveKeys),
            "liveBytes": .int(stats.liveBytes),
            "deadBytes": .int(stats.deadBytes),
            "segmentCount": .int(stats.segmentCount),
            "keydirBytes": .int(stats.keydirBytes),
            "segmentBytes": .int(stats.segmentBytes),
            "compactions": .int(stats.compactions),
            "recoveryReport": .array(recoveryReport.map(JSON.string)),
        ])
    }

    /// A key for `keys`: a string when the bytes are valid UTF-8, else `{"base64": "..."}`.
    static func key(_ bytes: [UInt8]) -> JSON {
        if let text = KeyBytes.utf8String(bytes) { return .string(text) }
        return .object(["base64": .string(KeyBytes.base64(bytes))])
    }

    /// One `dump` line: the record as stored, and `decoded`, its value as `get` returns it.
    static func record(_ record: LogStore.RecordInfo, decoded: DecodedValue) -> JSON {
        var members: [String: JSON] = [
            "space": .unsigned(UInt64(record.space)),
            "key": KeyBytes.utf8String(record.key).map(JSON.string) ?? .null,
            "key_base64": .string(KeyBytes.base64(record.key)),
            "sequence": .unsigned(record.sequence),
            "flags": .unsigned(UInt64(record.flags)),
            "tombstone": .bool(record.isTombstone),
            "live": .bool(record.isLive),
            "expiresAt": record.expiresAt.map { .integer(Int64(($0.timeIntervalSince1970 * 1000).rounded())) } ?? .null,
            "value_base64": .string(KeyBytes.base64(record.value)),
            "segment": .unsigned(UInt64(record.segment)),
            "offset": .int(record.offset),
        ]
        switch decoded {
        case .value(let bytes): members["value_decoded_base64"] = .string(KeyBytes.base64(bytes))
        case .none: members["value_decoded_base64"] = .null
        case .failed(let reason):
            members["value_decoded_base64"] = .null
            members["error"] = .string(reason)
        }
        return .object(members)
    }
}

/// Conversions of raw key and value bytes to text.
enum KeyBytes {
    /// The bytes as a string when they are valid UTF-8, else nil.
    static func utf8String(_ bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        // Decoding repairs invalid sequences with U+FFFD; a repair changes the bytes.
        return text.utf8.elementsEqual(bytes) ? text : nil
    }

    /// Standard base64 with padding.
    static func base64(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
    }
}
