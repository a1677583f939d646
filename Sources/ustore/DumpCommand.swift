import ArgumentParser
import UnifiedStorage

/// `ustore dump DIR`: every valid record of every segment, one JSON object per line.
struct DumpCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dump",
        abstract: "Print every record of every segment as JSON lines, live or not.",
        discussion: """
            Fields: space, key (null when not valid UTF-8), key_base64, sequence, flags, \
            tombstone, live, expiresAt (milliseconds since 1970, or null), value_base64 (as \
            stored), value_decoded_base64, segment, offset, and error when the value could not \
            be decoded. value_decoded_base64 is the value as `get` returns it (decrypted, \
            decompressed): the stored bytes for a plain record, null for a tombstone. A \
            compressed or encrypted value is decoded only for its key's newest record (the one \
            `get` reads); otherwise, or when decoding fails (no key or the wrong key for its key \
            id, a custom crypt, an expired value, damage), it is null and error says why.
            """
    )

    @OptionGroup var store: StoreDirectoryArgument

    func run() throws {
        try reportingFailures {
            var lines = BufferedLines()
            try StoreSession.with(store, readOnly: true) { logStore in
                let decoder = try DumpDecoder(logStore)
                try logStore.forEachRecord { record in
                    try lines.append(JSON.record(record, decoded: decoder.decoded(record)).text)
                }
            }
            try lines.flush()
        }
    }
}

/// A record's value as `get` returns it, or why there is none.
enum DecodedValue: Equatable {
    case value([UInt8])
    /// A tombstone: there is no value, and nothing went wrong.
    case none
    /// The value could not be decoded; a one-line reason.
    case failed(String)
}

/// Decodes `dump`'s values through the public API: `get` for the newest record of each key whose
/// value is compressed or encrypted (the engine has no call that decodes an arbitrary record).
struct DumpDecoder {
    /// The flags that change what the value bytes are (FORMAT.md, "Records"): compressed,
    /// encrypted, custom crypt.
    static let transformFlags: UInt8 = 0x08 | 0x10 | 0x20

    private struct KeyOfSpace: Hashable {
        var space: LogStore.KeySpace
        var key: [UInt8]
    }

    private var live: [KeyOfSpace: DecodedValue] = [:]

    /// Reads every record once to find the live transformed ones, then decodes each with `get`
    /// (outside `forEachRecord`, which holds the engine's locks).
    init(_ store: LogStore) throws {
        var wanted: [KeyOfSpace] = []
        try store.forEachRecord { record in
            if record.isLive && !record.isTombstone && record.flags & Self.transformFlags != 0 {
                wanted.append(KeyOfSpace(space: record.space, key: record.key))
            }
        }
        for key in wanted {
            do {
                if let value = try store.get(forKey: key.key, space: key.space) {
                    live[key] = .value(value)
                } else {
                    live[key] = .failed("expired: get returns no value")
                }
            } catch {
                live[key] = .failed(describe(error))
            }
        }
    }

    /// The decoded value of `record` (one of the records the initializer read).
    func decoded(_ record: LogStore.RecordInfo) -> DecodedValue {
        if record.isTombstone { return .none }
        if record.flags & Self.transformFlags == 0 { return .value(record.value) }
        if record.isLive, let outcome = live[KeyOfSpace(space: record.space, key: record.key)] { return outcome }
        return .failed("superseded by a newer record of its key: only the newest record's value can be decoded")
    }
}
