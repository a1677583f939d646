/// SQLite 3.40's functions on values and on the connection: nullif hex quote unicode char
/// zeroblob randomblob random likely unlikely likelihood printf format sqlite_version changes
/// last_insert_rowid total_changes. Results SQLite builds as bytes that are not valid UTF-8
/// (char() of a surrogate, printf cutting a character) are such texts here too.
enum ValueFunctions {
    /// The SQLite version whose semantics the functions follow.
    static let sqliteVersion = "3.40.1"

    static func call(_ name: String, _ args: [SQLValue], _ context: RowContext?) throws -> SQLValue {
        switch name {
        case "nullif":
            // No affinity: nullif(1, '1') is 1 (an integer and a text differ).
            if case .null = args[0] { return .null }
            if case .null = args[1] { return args[0] }
            return SQLValues.compare(args[0], args[1]) == 0 ? .null : args[0]
        case "likely", "unlikely", "likelihood":
            return args[0]
        case "hex":
            let bytes = bytesOf(args[0])
            let digits = Array("0123456789ABCDEF".utf8)
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count * 2)
            for byte in bytes {
                out.append(digits[Int(byte >> 4)])
                out.append(digits[Int(byte & 0x0F)])
            }
            return .text(String(decoding: out, as: UTF8.self))
        case "quote": return try quote(args[0])
        case "unicode":
            let bytes = cBytes(args[0])
            guard !bytes.isEmpty else { return .null }
            return .integer(Int64(SQLiteText.decode(bytes[..<SQLiteText.characterEnd(bytes, after: 0)])))
        case "char": return try char(args)
        case "zeroblob":
            let n = max(PrintfFormatter.int64(args[0]), 0)
            return .blob([UInt8](repeating: 0, count: Int(try checkedBlobSize(n))))
        case "randomblob":
            var n = PrintfFormatter.int64(args[0])
            if n < 1 { n = 1 }
            var generator = SystemRandomNumberGenerator()
            return .blob((0..<Int(try checkedBlobSize(n))).map { _ in UInt8.random(in: 0...255, using: &generator) })
        case "random":
            return .integer(Int64.random(in: Int64.min...Int64.max))
        case "printf", "format":
            guard let first = args.first, let format = SQLiteText.bytes(of: first) else { return .null }
            guard let bytes = try PrintfFormatter.format(Array(SQLiteText.beforeNul(format)), args.dropFirst()) else { return .null }
            return .text(bytes: bytes)
        case "sqlite_version":
            return .text(sqliteVersion)
        case "changes":
            return .integer(Int64(context?.database?.lastChangesValue ?? 0))
        case "total_changes":
            return .integer(Int64(context?.database?.totalChangesValue ?? 0))
        case "last_insert_rowid":
            return .integer(context?.database?.lastInsertRowIdValue ?? 0)
        default:
            throw DAOError.unsupported("function \(name)")
        }
    }

    /// A size SQLite would build: above 1,000,000,000 bytes SQLite fails ("string or blob too
    /// big"); above `ScalarFunctions.blobLimit` the subset refuses.
    static func checkedBlobSize(_ n: Int64) throws -> Int64 {
        if n > 1_000_000_000 { throw SQLExecutionError("string or blob too big") }
        if n > ScalarFunctions.blobLimit { throw DAOError.unsupported("blob of \(n) bytes") }
        return n
    }

    /// The bytes sqlite3_value_blob gives: a blob's own, text's as kept, a number's text; none
    /// for NULL.
    static func bytesOf(_ value: SQLValue) -> [UInt8] {
        SQLiteText.bytes(of: value) ?? []
    }

    /// The bytes sqlite3_value_text gives, up to the first NUL.
    static func cBytes(_ value: SQLValue) -> [UInt8] {
        Array(bytesOf(value).prefix { $0 != 0 })
    }

    /// char(X1, ..., XN): each code point encoded as SQLite does (a surrogate too, which makes
    /// a text that is not valid UTF-8; out of range is U+FFFD).
    static func char(_ args: [SQLValue]) throws -> SQLValue {
        var out: [UInt8] = []
        out.reserveCapacity(args.count * 2)
        for arg in args {
            var x = PrintfFormatter.int64(arg)
            if x < 0 || x > 0x10FFFF { x = 0xFFFD }
            let c = UInt32(x)
            switch c {
            case ..<0x80: out.append(UInt8(c))
            case ..<0x800:
                out.append(0xC0 | UInt8(c >> 6))
                out.append(0x80 | UInt8(c & 0x3F))
            case ..<0x10000:
                out.append(0xE0 | UInt8(c >> 12))
                out.append(0x80 | UInt8((c >> 6) & 0x3F))
                out.append(0x80 | UInt8(c & 0x3F))
            default:
                out.append(0xF0 | UInt8(c >> 18))
                out.append(0x80 | UInt8((c >> 12) & 0x3F))
                out.append(0x80 | UInt8((c >> 6) & 0x3F))
                out.append(0x80 | UInt8(c & 0x3F))
            }
        }
        return .text(bytes: out)
    }

    /// quote(X): an SQL literal of X (reals in a form that reads back to the same value).
    static func quote(_ value: SQLValue) throws -> SQLValue {
        switch value {
        case .null: return .text("NULL")
        case .integer(let i): return .text(String(i))
        case .real(let r):
            let short = SQLValues.format(real: r)
            if case .real(let back) = SQLValues.castReal(.text(short)), back == r || r.isInfinite { return .text(short) }
            var flags = PrintfFormatter.Flags()
            flags.altForm2 = true
            let long = PrintfFormatter.formatReal(r, conversion: 0x65, precision: 20, flags: flags)
            return .text(String(decoding: long, as: UTF8.self))
        case .text, .invalidText:
            let bytes = cBytes(value)
            var out: [UInt8] = [0x27]
            for byte in bytes {
                out.append(byte)
                if byte == 0x27 { out.append(byte) }
            }
            out.append(0x27)
            return .text(bytes: out)
        case .blob(let bytes):
            guard case .text(let hex) = try call("hex", [.blob(bytes)], nil) else { return .null }
            return .text("X'" + hex + "'")
        }
    }
}
