import ArgumentParser
import Foundation
import UnifiedStorage

/// `ustore put DIR KEY VALUE`: stores a value, creating the store if needed.
struct PutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "put",
        abstract: "Store VALUE under KEY, creating the store if it does not exist.",
        discussion: """
            VALUE `-` reads the value as raw bytes from stdin until end of file. Put `--` before \
            a KEY or VALUE that starts with a dash. With `--key-hex` or `--app-key` the value is \
            encrypted (AES-256-GCM); with `--compress-level` or `--compress-threshold` it is \
            zstd-compressed first when that makes it shorter. Exits 0 only after the store is closed: the \
            value is then in the kernel's page cache and survives the process being killed.
            """
    )

    @OptionGroup var store: StoreDirectoryArgument
    @Argument(help: "The key (its UTF-8 bytes).")
    var key: String
    @Argument(help: "The value (its UTF-8 bytes), or `-` to read it from stdin.")
    var value: String
    @OptionGroup var keySpace: KeySpaceOption
    @Option(name: .customLong("expires-in"), help: "Make the value expire this many seconds from now.")
    var expiresIn: Double?
    @OptionGroup(title: "Compression") var compression: CompressionOptions

    func validate() throws {
        if let expiresIn, !(expiresIn.isFinite && expiresIn > 0) {
            throw ValidationError("--expires-in must be a positive number of seconds")
        }
    }

    func run() throws {
        try reportingFailures {
            let bytes = value == "-" ? try StandardInput.readAll() : Array(value.utf8)
            let expiresAt = expiresIn.map { Date().addingTimeInterval($0) }
            try StoreSession.with(store, readOnly: false, compression: compression.compression) { logStore in
                try logStore.put(bytes, forKey: Array(key.utf8), space: keySpace.space, expiresAt: expiresAt)
            }
        }
    }
}

/// Reading stdin as bytes.
enum StandardInput {
    /// Every byte of stdin up to end of file.
    static func readAll() throws -> [UInt8] {
        guard let data = try FileHandle.standardInput.readToEnd() else { return [] }
        return [UInt8](data)
    }
}
