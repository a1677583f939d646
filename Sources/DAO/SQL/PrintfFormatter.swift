/// SQLite 3.40's printf()/format(): its own formatter (not C's), with the SQL conversions
/// `%d %i %u %f %e %E %g %G %x %X %o %s %z %q %Q %w %c %r %p %n %%`, the flags `- + space # ! 0 ,`,
/// width and precision (digits or `*` from the arguments) and an ignored `l`/`ll`.
/// Arguments are read as SQLite reads them (an integer of a real truncates, a number of a text
/// is its numeric prefix, a missing argument is 0, 0.0 or NULL). An unknown conversion ends the
/// output where it stands; a result that received nothing at all is NULL.
enum PrintfFormatter {
    /// Widths and precisions above this are refused (SQLite would build strings up to 1 GB).
    static let sizeLimit = 10_000_000

    /// Formats `format` with `arguments` (SQLite's printf(FORMAT, ...)); nil when SQLite gives NULL.
    /// - Throws: `DAOError.unsupported` for a width or precision above `sizeLimit`.
    static func format(_ format: [UInt8], _ arguments: ArraySlice<SQLValue>) throws -> [UInt8]? {
        var state = State(arguments: arguments)
        try state.run(format)
        return state.appended ? state.out : nil
    }

    /// The digits of the formatted real (sign, digits, point, exponent) of `%f`/`%e`/`%g`.
    static func formatReal(_ value: Double, conversion: UInt8, precision: Int, width: Int = 0,
                           flags: Flags = Flags()) -> [UInt8] {
        realDigits(value, conversion: conversion, precision: precision, width: width, flags: flags)
    }

    struct Flags {
        var leftJustify = false
        var prefix: UInt8 = 0
        var alternate = false
        var altForm2 = false
        var zeroPad = false
        var thousands = false
    }

    private struct State {
        var arguments: ArraySlice<SQLValue>
        var out: [UInt8] = []
        var appended = false

        mutating func nextArgument() -> SQLValue? {
            guard let first = arguments.first else { return nil }
            arguments = arguments.dropFirst()
            return first
        }

        mutating func integerArgument() -> Int64 { nextArgument().map(PrintfFormatter.int64) ?? 0 }

        mutating func doubleArgument() -> Double {
            guard let value = nextArgument() else { return 0 }
            if case .null = value { return 0 }
            return SQLValues.double(value)
        }

        /// The argument as C text (up to a NUL), nil for NULL or a missing argument.
        mutating func textArgument() -> [UInt8]? {
            guard let value = nextArgument() else { return nil }
            switch value {
            case .null: return nil
            default: return Array(SQLiteText.beforeNul(SQLiteText.bytes(of: value) ?? []))
            }
        }

        mutating func append(_ bytes: [UInt8]) {
            appended = true
            out.append(contentsOf: bytes)
        }

        mutating func run(_ fmt: [UInt8]) throws {
            var i = 0
            func at(_ index: Int) -> UInt8 { index < fmt.count ? fmt[index] : 0 }
            while i < fmt.count, fmt[i] != 0 {
                if fmt[i] != 0x25 {
                    let start = i
                    while i < fmt.count, fmt[i] != 0x25, fmt[i] != 0 { i += 1 }
                    append(Array(fmt[start..<i]))
                    continue
                }
                i += 1
                var c = at(i)
                if c == 0 { append([0x25]); return }
                var flags = Flags()
                var width = 0
                var precision = -1
                var done = false
                // SQLite's flag loop: flags, width, precision and `l` in its order of reading.
                repeat {
                    switch c {
                    case 0x2D: flags.leftJustify = true
                    case 0x2B: flags.prefix = 0x2B
                    case 0x20: flags.prefix = 0x20
                    case 0x23: flags.alternate = true
                    case 0x21: flags.altForm2 = true
                    case 0x30: flags.zeroPad = true
                    case 0x2C: flags.thousands = true
                    case 0x6C:
                        i += 1; c = at(i)
                        if c == 0x6C { i += 1; c = at(i) }
                        done = true
                    case 0x31...0x39:
                        var wx = UInt32(c - 0x30)
                        i += 1; c = at(i)
                        while c >= 0x30 && c <= 0x39 {
                            wx = wx &* 10 &+ UInt32(c - 0x30)
                            i += 1; c = at(i)
                        }
                        width = Int(wx & 0x7fff_ffff)
                        if c != 0x2E && c != 0x6C { done = true } else { i -= 1 }
                    case 0x2A:
                        let w = integerArgument()
                        var w32 = Int32(truncatingIfNeeded: w)
                        if w32 < 0 {
                            flags.leftJustify = true
                            w32 = w32 >= -2147483647 ? -w32 : 0
                        }
                        width = Int(w32)
                        let next = at(i + 1)
                        if next != 0x2E && next != 0x6C { i += 1; c = at(i); done = true }
                    case 0x2E:
                        i += 1; c = at(i)
                        if c == 0x2A {
                            var p32 = Int32(truncatingIfNeeded: integerArgument())
                            if p32 < 0 { p32 = p32 >= -2147483647 ? -p32 : -1 }
                            precision = Int(p32)
                            i += 1; c = at(i)
                        } else {
                            var px: UInt32 = 0
                            while c >= 0x30 && c <= 0x39 {
                                px = px &* 10 &+ UInt32(c - 0x30)
                                i += 1; c = at(i)
                            }
                            precision = Int(px & 0x7fff_ffff)
                        }
                        if c == 0x6C { i -= 1 } else { done = true }
                    default:
                        done = true
                    }
                    if !done {
                        i += 1; c = at(i)
                        if c == 0 { break }
                    }
                } while !done
                if width > PrintfFormatter.sizeLimit || precision > PrintfFormatter.sizeLimit {
                    throw DAOError.unsupported("printf width or precision above \(PrintfFormatter.sizeLimit)")
                }
                guard let converted = try convert(c, &flags, &width, &precision) else { return }
                i += 1
                pad(converted, width: width, flags: flags)
            }
        }

        mutating func pad(_ body: [UInt8], width: Int, flags: Flags) {
            let padding = width - body.count
            if padding > 0 {
                if !flags.leftJustify { append([UInt8](repeating: 0x20, count: padding)) }
                append(body)
                if flags.leftJustify { append([UInt8](repeating: 0x20, count: padding)) }
            } else {
                append(body)
            }
        }

        /// The text of one conversion before width padding; nil ends the output (unknown conversion).
        mutating func convert(_ c: UInt8, _ flags: inout Flags, _ width: inout Int, _ precision: inout Int) throws -> [UInt8]? {
            switch c {
            case 0x64, 0x69: // d i
                let v = integerArgument()
                let prefix: UInt8 = v < 0 ? 0x2D : flags.prefix
                return PrintfFormatter.integerText(v.magnitude, base: 10, upper: false, prefix: prefix, flags: flags,
                                                   width: width, precision: precision, thousands: flags.thousands, radixPrefix: [])
            case 0x75: // u
                let v = UInt64(bitPattern: integerArgument())
                return PrintfFormatter.integerText(v, base: 10, upper: false, prefix: 0, flags: flags, width: width,
                                                   precision: precision, thousands: flags.thousands, radixPrefix: [])
            case 0x78, 0x58, 0x6F, 0x70: // x X o p
                let v = UInt64(bitPattern: integerArgument())
                let base: UInt64 = c == 0x6F ? 8 : 16
                let radixPrefix: [UInt8] = c == 0x78 ? [0x30, 0x78] : c == 0x58 ? [0x30, 0x58] : c == 0x6F ? [0x30] : [0x30, 0x78]
                return PrintfFormatter.integerText(v, base: base, upper: c != 0x78, prefix: 0, flags: flags, width: width,
                                                   precision: precision, thousands: false, radixPrefix: radixPrefix)
            case 0x72: // r: ordinal
                let v = integerArgument()
                let prefix: UInt8 = v < 0 ? 0x2D : flags.prefix
                var text = PrintfFormatter.integerText(v.magnitude, base: 10, upper: false, prefix: 0, flags: Flags(),
                                                       width: 0, precision: -1, thousands: false, radixPrefix: [])
                let magnitude = v.magnitude
                var suffix = Array("th".utf8)
                let tens = magnitude % 100
                if tens < 11 || tens > 13 {
                    switch magnitude % 10 {
                    case 1: suffix = Array("st".utf8)
                    case 2: suffix = Array("nd".utf8)
                    case 3: suffix = Array("rd".utf8)
                    default: break
                    }
                }
                text += suffix
                var body = text
                let zeros = (flags.zeroPad ? max(precision, width - (prefix != 0 ? 1 : 0)) : precision) - text.count
                if zeros > 0 { body = [UInt8](repeating: 0x30, count: zeros) + body }
                if prefix != 0 { body.insert(prefix, at: 0) }
                return body
            case 0x66, 0x65, 0x45, 0x67, 0x47: // f e E g G
                let v = doubleArgument()
                return PrintfFormatter.realDigits(v, conversion: c, precision: precision, width: width, flags: flags)
            case 0x73, 0x7A: // s z
                let text = textArgument() ?? []
                var length = text.count
                if precision >= 0 {
                    if flags.altForm2 {
                        var index = 0, remaining = precision
                        while remaining > 0 && index < text.count {
                            remaining -= 1
                            index = SQLiteText.characterEnd(text, after: index)
                        }
                        length = index
                    } else {
                        length = min(precision, text.count)
                    }
                }
                let body = Array(text[0..<length])
                if flags.altForm2 && width > 0 { width += body.filter { $0 & 0xC0 == 0x80 }.count }
                return body
            case 0x71, 0x51, 0x77: // q Q w
                let quote: UInt8 = c == 0x77 ? 0x22 : 0x27
                let argument = textArgument()
                let escaped = argument ?? Array((c == 0x51 ? "NULL" : "(NULL)").utf8)
                var k = precision
                var index = 0
                while k != 0 && index < escaped.count {
                    if flags.altForm2 && escaped[index] & 0xC0 == 0xC0 {
                        while index + 1 < escaped.count, escaped[index + 1] & 0xC0 == 0x80 { index += 1 }
                    }
                    index += 1
                    k -= 1
                }
                let needQuote = argument != nil && c == 0x51
                var body: [UInt8] = needQuote ? [quote] : []
                for byte in escaped[0..<index] {
                    body.append(byte)
                    if byte == quote { body.append(byte) }
                }
                if needQuote { body.append(quote) }
                if flags.altForm2 && width > 0 { width += body.filter { $0 & 0xC0 == 0x80 }.count }
                return body
            case 0x63: // c
                var character: [UInt8] = [0]
                if let text = textArgument(), let first = text.first {
                    character = [first]
                    if first & 0xC0 == 0xC0 {
                        var index = 1
                        while character.count < 4, index < text.count, text[index] & 0xC0 == 0x80 {
                            character.append(text[index]); index += 1
                        }
                    }
                }
                // The repeats go out first; the width then pads the last copy only, as in SQLite.
                if precision > 1 {
                    width -= precision - 1
                    if width > 1 && !flags.leftJustify {
                        append([UInt8](repeating: 0x20, count: width - 1))
                        width = 0
                    }
                    for _ in 1..<precision { append(character) }
                }
                if width > 0 { width += character.filter { $0 & 0xC0 == 0x80 }.count }
                return character
            case 0x25: // %%
                return [0x25]
            case 0x6E: // n: nothing, and no width
                width = 0
                return []
            default:
                return nil
            }
        }
    }

    /// sqlite3_value_int64: reals truncate (saturating), text and blobs by their leading integer.
    static func int64(_ value: SQLValue) -> Int64 {
        switch value {
        case .null: return 0
        case .integer(let i): return i
        case .real(let r): return SQLValues.saturatingInteger(r)
        case .text, .blob, .invalidText:
            if case .integer(let i) = SQLValues.castInteger(value) { return i }
            return 0
        }
    }

    static func integerText(_ magnitude: UInt64, base: UInt64, upper: Bool, prefix: UInt8, flags: Flags, width: Int,
                            precision: Int, thousands: Bool, radixPrefix: [UInt8]) -> [UInt8] {
        var precision = precision
        let alternate = flags.alternate && magnitude != 0
        if flags.zeroPad && precision < width - (prefix != 0 ? 1 : 0) { precision = width - (prefix != 0 ? 1 : 0) }
        let digits: [UInt8] = Array((upper ? "0123456789ABCDEF" : "0123456789abcdef").utf8)
        var body: [UInt8] = []
        var value = magnitude
        repeat {
            body.append(digits[Int(value % base)])
            value /= base
        } while value > 0
        while precision > body.count { body.append(0x30) }
        body.reverse()
        if thousands {
            var grouped: [UInt8] = []
            for (index, digit) in body.enumerated() {
                if index > 0 && (body.count - index) % 3 == 0 { grouped.append(0x2C) }
                grouped.append(digit)
            }
            body = grouped
        }
        if prefix != 0 { body.insert(prefix, at: 0) }
        if alternate { body.insert(contentsOf: radixPrefix, at: 0) }
        return body
    }

    #if arch(x86_64) || arch(i386)
    typealias Wide = Float80
    #else
    typealias Wide = Double
    #endif

    /// One digit of SQLite's et_getdigit: the integer part of `value`, then the rest times ten;
    /// '0' once `count` significant digits are out.
    private static func nextDigit(_ value: inout Wide, _ count: inout Int) -> UInt8 {
        if count <= 0 { return 0x30 }
        count -= 1
        let truncated = value.rounded(.towardZero)
        let digit = truncated >= 9 ? 9 : (truncated > 0 ? Int(truncated) : 0)
        value = (value - Wide(digit)) * 10
        return UInt8(0x30 + digit)
    }

    /// SQLite's etFLOAT/etEXP/etGENERIC conversion, in extended precision as its LONGDOUBLE_TYPE.
    static func realDigits(_ input: Double, conversion: UInt8, precision precisionIn: Int, width: Int, flags: Flags) -> [UInt8] {
        var precision = precisionIn < 0 ? 6 : precisionIn
        var realvalue = Wide(input)
        var prefix: UInt8
        if input < 0 {
            realvalue = -realvalue
            prefix = 0x2D
        } else {
            prefix = flags.prefix
        }
        var generic = conversion == 0x67 || conversion == 0x47
        var exponential = conversion == 0x65 || conversion == 0x45
        let upper = conversion == 0x45 || conversion == 0x47
        if generic && precision > 0 { precision -= 1 }
        var idx = precision & 0xfff
        let roundTable: [Double] = [5.0e-01, 5.0e-02, 5.0e-03, 5.0e-04, 5.0e-05, 5.0e-06, 5.0e-07, 5.0e-08, 5.0e-09, 5.0e-10]
        var rounder = roundTable[idx % 10]
        while idx >= 10 { rounder *= 1.0e-10; idx -= 10 }
        if !generic && !exponential {
            let rx = Double(realvalue)
            let ex = -1023 + Int((rx.bitPattern >> 52) & 0x7ff)
            if precision + (ex / 3) < 15 { rounder = Double(Wide(rounder) + realvalue * Wide(3e-16 as Double)) }
            realvalue += Wide(rounder)
        }
        var exp = 0
        if realvalue.isNaN { return Array("NaN".utf8) }
        if realvalue > 0 {
            // The constants are C doubles (1e100 is not 10^100), as in SQLite's code.
            let e100 = Wide(1e100 as Double), e10 = Wide(1e10 as Double), eMinus8 = Wide(1e-8 as Double)
            var scale: Wide = 1
            while realvalue >= e100 * scale && exp <= 350 { scale *= e100; exp += 100 }
            while realvalue >= e10 * scale && exp <= 350 { scale *= e10; exp += 10 }
            while realvalue >= 10 * scale && exp <= 350 { scale *= 10; exp += 1 }
            realvalue /= scale
            while realvalue < eMinus8 { realvalue *= 1e8; exp -= 8 }
            while realvalue < 1 { realvalue *= 10; exp -= 1 }
            if exp > 350 {
                return (prefix != 0 ? [prefix] : []) + Array("Inf".utf8)
            }
        }
        if generic || exponential {
            realvalue += Wide(rounder)
            if realvalue >= 10 { realvalue *= Wide(0.1 as Double); exp += 1 }
        }
        let removeTrailingZeros: Bool
        if generic {
            removeTrailingZeros = !flags.alternate
            if exp < -4 || exp > precision {
                exponential = true
            } else {
                precision -= exp
            }
            generic = false
        } else {
            removeTrailingZeros = flags.altForm2
        }
        var e2 = exponential ? 0 : exp
        var significant = 16 + (flags.altForm2 ? 10 : 0)
        let decimalPoint = precision > 0 || flags.alternate || flags.altForm2
        var body: [UInt8] = []
        if prefix != 0 { body.append(prefix) }
        if e2 < 0 {
            body.append(0x30)
        } else {
            while e2 >= 0 {
                body.append(nextDigit(&realvalue, &significant))
                e2 -= 1
            }
        }
        if decimalPoint { body.append(0x2E) }
        e2 += 1
        while e2 < 0 {
            body.append(0x30)
            precision -= 1
            e2 += 1
        }
        while precision > 0 {
            body.append(nextDigit(&realvalue, &significant))
            precision -= 1
        }
        if removeTrailingZeros && decimalPoint {
            while body.last == 0x30 { body.removeLast() }
            if body.last == 0x2E {
                if flags.altForm2 { body.append(0x30) } else { body.removeLast() }
            }
        }
        if exponential {
            body.append(upper ? 0x45 : 0x65)
            var e = exp
            if e < 0 { body.append(0x2D); e = -e } else { body.append(0x2B) }
            if e >= 100 { body.append(UInt8(0x30 + e / 100)); e %= 100 }
            body.append(UInt8(0x30 + e / 10))
            body.append(UInt8(0x30 + e % 10))
        }
        if flags.zeroPad && !flags.leftJustify && body.count < width {
            let padding = width - body.count
            let at = prefix != 0 ? 1 : 0
            body.insert(contentsOf: [UInt8](repeating: 0x30, count: padding), at: at)
        }
        return body
    }
}
