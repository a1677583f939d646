import ArgumentParser
import Foundation
import UnifiedStorage

/// `ustore rekey DIR --key-hex OLD --new-key-hex NEW`: re-encrypts the store under a new key.
struct RekeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rekey",
        abstract: "Re-encrypt every record sealed with a store key under a new key (LogStore.rekey).",
        discussion: """
            Open the store with its current key (--key-hex or --app-key, --key-id) and name the \
            new one with --new-key-hex or --new-app-key and --new-key-id (default: the current \
            id + 1). Crash-safe: interrupted, either key reopens the store and finishes. Ends \
            with a compaction, so no old ciphertext stays; the old key id is then retired. Records \
            written without encryption stay plain. Prints the statistics as `stats` does; a \
            progress line is shown on stderr when it is a terminal.
            """
    )

    @OptionGroup var store: StoreDirectoryArgument
    @Option(name: .customLong("new-key-hex"), help: ArgumentHelp("The new AES-256 key as 64 hexadecimal digits.", valueName: "hex"))
    var newKeyHex: String?
    @Option(name: .customLong("new-app-key"), help: ArgumentHelp("Derive the new key from this string (HKDF-SHA256).", valueName: "string"))
    var newAppKey: String?
    @Option(name: .customLong("new-key-id"), help: ArgumentHelp("The new key's id (default: the current id + 1).", valueName: "n"))
    var newKeyID: UInt32?

    func validate() throws {
        if (newKeyHex == nil) == (newAppKey == nil) {
            throw ValidationError("give the new key as either --new-key-hex or --new-app-key")
        }
        if let newKeyHex, Hex.bytes(newKeyHex)?.count != 32 {
            throw ValidationError("--new-key-hex must be 64 hexadecimal digits (a 32-byte key)")
        }
        if store.keys.keyHex == nil && store.keys.appKey == nil {
            throw ValidationError("give the store's current key (--key-hex or --app-key)")
        }
    }

    func run() throws {
        try reportingFailures {
            let currentID = store.keys.keyID ?? 1
            let id = newKeyID ?? currentID &+ 1
            let newKey: LogStore.Options.Encryption
            if let newKeyHex, let bytes = Hex.bytes(newKeyHex) {
                newKey = .init(key: bytes, keyID: id)
            } else {
                newKey = try .init(deriving: newAppKey ?? "", keyID: id)
            }
            let progress = ProgressLine("rekey")
            defer { progress.finish() }
            let json = try StoreSession.with(store, readOnly: false) { logStore in
                try logStore.rekey(to: newKey) { progress.update($0) }
                return JSON.statistics(logStore.statistics, recoveryReport: logStore.recoveryReport)
            }
            progress.finish()
            try Output.line(json.text)
        }
    }
}
