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
            stored), segment, offset.
            """
    )

    @OptionGroup var store: StoreDirectoryArgument

    func run() throws {
        try reportingFailures {
            var lines = BufferedLines()
            try StoreSession.with(store.url, readOnly: true) { logStore in
                try logStore.forEachRecord { record in
                    try lines.append(JSON.record(record).text)
                }
            }
            try lines.flush()
        }
    }
}
