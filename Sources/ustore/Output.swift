import Foundation

/// Writing to stdout and stderr with plain `write(2)` calls, so raw bytes and text never
/// interleave out of order and nothing is added (no trailing newline unless asked for).
enum Output {
    /// Writes `bytes` to stdout exactly as given.
    static func write(_ bytes: [UInt8]) throws {
        try writeAll(bytes, to: STDOUT_FILENO)
    }

    /// Writes `text` and a newline to stdout.
    static func line(_ text: String) throws {
        try write(Array(text.utf8) + [0x0A])
    }

    /// Writes `prefix` (`ustore: ` unless given), `message` and a newline to stderr. Never fails: there is nowhere left to
    /// report a failure to.
    static func error(_ message: String, prefix: String = "ustore: ") {
        try? writeAll(Array("\(prefix)\(message)\n".utf8), to: STDERR_FILENO)
    }

    /// Writes every byte of `bytes` to `descriptor`, retrying short writes and EINTR.
    static func writeAll(_ bytes: [UInt8], to descriptor: Int32) throws {
        try bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                guard let base = buffer.baseAddress else { return }
                let written = Foundation.write(descriptor, base + done, buffer.count - done)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw OutputError(code: errno)
                }
                done += written
            }
        }
    }
}

/// A failed write to stdout or stderr.
struct OutputError: Error, CustomStringConvertible {
    /// The `errno` of the failed `write(2)`.
    var code: Int32
    var description: String { "write to standard output failed: \(String(cString: strerror(code))) (errno \(code))" }
}

/// Collects lines for stdout and writes them in large chunks (for `dump`).
struct BufferedLines {
    private var buffer: [UInt8] = []
    private let flushThreshold = 1 << 16

    /// Appends `text` and a newline, writing the buffer out once it is large.
    mutating func append(_ text: String) throws {
        buffer.append(contentsOf: text.utf8)
        buffer.append(0x0A)
        if buffer.count >= flushThreshold { try flush() }
    }

    /// Writes out whatever is buffered.
    mutating func flush() throws {
        try Output.write(buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}
