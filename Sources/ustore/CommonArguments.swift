import ArgumentParser
import Foundation
import UnifiedStorage

/// The store directory, the first argument of every subcommand, and the key options of every
/// subcommand that opens a store.
struct StoreDirectoryArgument: ParsableArguments {
    @Argument(help: "The store's directory.")
    var directory: String

    @OptionGroup(title: "Encryption")
    var keys: KeyOptions

    /// The directory as a file URL.
    var url: URL { URL(fileURLWithPath: directory, isDirectory: true) }
}

/// `--space N`: the key space of the subcommands that take keys.
struct KeySpaceOption: ParsableArguments {
    @Option(help: "The key space (0 ..< 2^31 belong to applications).")
    var space: UInt32 = 0
}

/// `--key-hex HEX` or `--app-key STRING`, with `--key-id N`: the store's default AES-256-GCM key
/// (`LogStore.Options.encryption`). Values written with a key are encrypted; reading them needs
/// the same key. A key that does not match the store's check value for its id exits 2.
struct KeyOptions: ParsableArguments {
    @Option(name: .customLong("key-hex"), help: ArgumentHelp(
        "The AES-256 key as 64 hexadecimal digits (32 bytes).", valueName: "hex"))
    var keyHex: String?

    @Option(name: .customLong("key-id"), help: ArgumentHelp(
        "The key's id, recorded in every record it encrypts (default 1).", valueName: "n"))
    var keyID: UInt32?

    @Option(name: .customLong("app-key"), help: ArgumentHelp(
        "Derive the AES-256 key from this string with HKDF-SHA256 (FORMAT.md, \"Keys\"). Note that command-line arguments are visible to other local users.",
        valueName: "string"))
    var appKey: String?

    func validate() throws {
        if keyHex != nil && appKey != nil {
            throw ValidationError("--key-hex and --app-key are mutually exclusive")
        }
        if let keyHex, Hex.bytes(keyHex)?.count != 32 {
            throw ValidationError("--key-hex must be 64 hexadecimal digits (a 32-byte key)")
        }
        if keyID != nil && keyHex == nil && appKey == nil {
            throw ValidationError("--key-id needs --key-hex or --app-key")
        }
    }

    /// The encryption options these arguments ask for; nil when no key was given.
    func encryption() throws -> LogStore.Options.Encryption? {
        let id = keyID ?? 1
        if let keyHex, let key = Hex.bytes(keyHex) { return .init(key: key, keyID: id) }
        if let appKey { return try .init(deriving: appKey, keyID: id) }
        return nil
    }
}

/// `--compress-level N` / `--compress-threshold N`: zstd compression of the values written
/// (`LogStore.Options.compression`). Either option turns compression on; the other keeps the
/// engine's default (level 3, threshold 256 bytes).
struct CompressionOptions: ParsableArguments {
    @Option(name: .customLong("compress-level"), help: ArgumentHelp(
        "Compress values with zstd at this level (1 fastest ... 19).", valueName: "n"))
    var level: Int32?

    @Option(name: .customLong("compress-threshold"), help: ArgumentHelp(
        "Compress only values of at least this many bytes (default 256).", valueName: "n"))
    var threshold: Int?

    func validate() throws {
        if let level, !(1...19).contains(level) {
            throw ValidationError("--compress-level must be between 1 and 19")
        }
        if let threshold, threshold < 0 {
            throw ValidationError("--compress-threshold must not be negative")
        }
    }

    /// The compression options these arguments ask for; nil when neither was given.
    var compression: LogStore.Options.Compression? {
        guard level != nil || threshold != nil else { return nil }
        var settings = LogStore.Options.Compression()
        if let level { settings.level = level }
        if let threshold { settings.threshold = threshold }
        return settings
    }
}

/// Hexadecimal text.
enum Hex {
    /// The bytes spelled by `text` (pairs of hexadecimal digits, either case, nothing else);
    /// nil when it is not such a spelling.
    static func bytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(of: digits[index]), let low = value(of: digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func value(of digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
