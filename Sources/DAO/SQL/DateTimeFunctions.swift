#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SQLite 3.40's date and time functions: date, time, datetime, julianday, unixepoch, strftime
/// (and current_date/current_time/current_timestamp), with its time values (YYYY-MM-DD[ HH:MM[:SS[.SSS]]]
/// with ' ' or 'T', HH:MM[:SS[.SSS]], a timezone suffix, 'now', julian day and unix numbers) and
/// modifiers ('±N days|hours|minutes|seconds|months|years', '±HH:MM[:SS[.SSS]]', 'start of
/// day|month|year', 'weekday N', 'unixepoch', 'julianday', 'auto', 'localtime', 'utc'). Anything
/// SQLite does not read gives NULL, as in SQLite. 'now' is the statement's time (one value per
/// statement). Times are julian days times 86,400,000 (milliseconds), as in SQLite.
enum DateTimeFunctions {
    static let names: Set<String> = ["date", "time", "datetime", "julianday", "unixepoch", "strftime",
                                     "current_date", "current_time", "current_timestamp"]

    /// The milliseconds of the julian day of 1970-01-01 00:00:00.
    static let unixEpochMilliseconds: Int64 = 210_866_760_000_000
    /// The largest valid time: 9999-12-31 23:59:59.999.
    static let maximumMilliseconds: Int64 = 464_269_060_799_999

    /// The statement's 'now' in julian-day milliseconds, read once per statement.
    /// Subqueries, WITH tables and RETURNING run in contexts of their own; the time lives in
    /// the statement's outermost one (the database's), so all of them read the same 'now'.
    static func now(_ context: RowContext?) -> Int64 {
        var owner = context
        while let outer = owner?.outer { owner = outer }
        if let root = owner?.database?.context { owner = root }
        return now(owning: owner)
    }

    private static func now(owning context: RowContext?) -> Int64 {
        if let time = context?.statementTime { return time }
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        let time = unixEpochMilliseconds &+ 1000 &* Int64(spec.tv_sec) &+ Int64(spec.tv_nsec) / 1_000_000
        context?.statementTime = time
        return time
    }

    static func call(_ name: String, _ args: [SQLValue], _ context: RowContext?) throws -> SQLValue {
        switch name {
        case "current_date": return call("date", [], context, format: nil)
        case "current_time": return call("time", [], context, format: nil)
        case "current_timestamp": return call("datetime", [], context, format: nil)
        case "strftime":
            guard let first = args.first, let format = SQLiteText.bytes(of: first) else { return .null }
            return try strftime(Array(SQLiteText.beforeNul(format)), Array(args.dropFirst()), context)
        default: return call(name, args, context, format: nil)
        }
    }

    private static func call(_ name: String, _ args: [SQLValue], _ context: RowContext?, format: [UInt8]?) -> SQLValue {
        guard var x = DateTime.parse(args, context) else { return .null }
        switch name {
        case "julianday":
            x.computeJD()
            return .real(Double(x.iJD) / 86_400_000.0)
        case "unixepoch":
            x.computeJD()
            return .integer(x.iJD / 1000 &- unixEpochMilliseconds / 1000)
        case "date":
            x.computeYMDHMS()
            return .text(dateText(x))
        case "time":
            x.computeYMDHMS()
            return .text(timeText(x))
        default:
            x.computeYMDHMS()
            return .text(dateText(x) + " " + timeText(x))
        }
    }

    static func padded(_ value: Int, _ digits: Int) -> String {
        let magnitude = String(value.magnitude)
        let zeros = String(repeating: "0", count: max(0, digits - magnitude.count - (value < 0 ? 1 : 0)))
        return (value < 0 ? "-" : "") + zeros + magnitude
    }

    /// YYYY-MM-DD; a negative year is '-' and four digits (strftime's %Y prints "%04d" instead).
    static func dateText(_ x: DateTime) -> String {
        (x.Y < 0 ? "-" : "") + padded(abs(x.Y), 4) + "-" + padded(x.M, 2) + "-" + padded(x.D, 2)
    }

    static func timeText(_ x: DateTime) -> String {
        padded(x.h, 2) + ":" + padded(x.m, 2) + ":" + padded(Int(DateTime.int32(x.s)), 2)
    }

    /// strftime(FORMAT, TIMEVALUE, MODIFIER...) with SQLite 3.40's codes: %d %f %H %j %J %m %M %s
    /// %S %w %W %Y %%; any other code gives NULL.
    static func strftime(_ format: [UInt8], _ args: [SQLValue], _ context: RowContext?) throws -> SQLValue {
        guard var x = DateTime.parse(args, context) else { return .null }
        x.computeJD()
        x.computeYMDHMS()
        var out: [UInt8] = []
        var i = 0
        while i < format.count {
            let c = format[i]
            if c != 0x25 { out.append(c); i += 1; continue }
            i += 1
            let code: UInt8 = i < format.count ? format[i] : 0
            switch code {
            case 0x64: out += Array(padded(x.D, 2).utf8) // d
            case 0x66: // f
                var s = x.s
                if s > 59.999 { s = 59.999 }
                out += PrintfFormatter.formatReal(s, conversion: 0x66, precision: 3, width: 6,
                                                  flags: PrintfFormatter.Flags(zeroPad: true))
            case 0x48: out += Array(padded(x.h, 2).utf8) // H
            case 0x57, 0x6A: // W j
                var y = x
                y.validJD = false
                y.M = 1
                y.D = 1
                y.computeJD()
                let nDay = Int(DateTime.int32(Double((x.iJD &- y.iJD &+ 43_200_000) / 86_400_000)))
                if code == 0x57 {
                    let wd = Int(((x.iJD &+ 43_200_000) / 86_400_000) % 7)
                    out += Array(padded((nDay + 7 - wd) / 7, 2).utf8)
                } else {
                    out += Array(padded(nDay + 1, 3).utf8)
                }
            case 0x4A: // J
                out += PrintfFormatter.formatReal(Double(x.iJD) / 86_400_000.0, conversion: 0x67, precision: 16, width: 0)
            case 0x6D: out += Array(padded(x.M, 2).utf8) // m
            case 0x4D: out += Array(padded(x.m, 2).utf8) // M
            case 0x73: out += Array(String(x.iJD / 1000 &- unixEpochMilliseconds / 1000).utf8) // s
            case 0x53: out += Array(padded(Int(DateTime.int32(x.s)), 2).utf8) // S
            case 0x77: out.append(UInt8(0x30 + Int(((x.iJD &+ 129_600_000) / 86_400_000) % 7))) // w
            case 0x59: out += Array(padded(x.Y, 4).utf8) // Y
            case 0x25: out.append(0x25)
            default: return .null
            }
            i += 1
        }
        return .text(bytes: out)   // the format's own bytes are copied, valid UTF-8 or not
    }
}

/// SQLite's DateTime: a julian day in milliseconds and/or its calendar fields, with validity flags.
struct DateTime {
    var iJD: Int64 = 0
    var Y = 0, M = 0, D = 0
    var h = 0, m = 0
    var tz = 0
    var s: Double = 0
    var validJD = false
    var rawS = false
    var validYMD = false
    var validHMS = false
    var validTZ = false
    var tzSet = false
    var isError = false

    /// C's (int) of a double as x86 computes it (out of range is INT_MIN), without trapping.
    static func int32(_ d: Double) -> Int32 {
        guard d.isFinite, d > -2147483649.0, d < 2147483648.0 else { return Int32.min }
        return Int32(d.rounded(.towardZero))
    }

    /// C's (sqlite3_int64) of a double as x86 computes it, without trapping.
    static func int64(_ d: Double) -> Int64 {
        guard d.isFinite, d >= -9223372036854775808.0, d < 9223372036854775808.0 else { return Int64.min }
        return Int64(d.rounded(.towardZero))
    }

    static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || (c >= 0x09 && c <= 0x0D) }
    static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

    /// The time value and modifiers of a date function; nil when SQLite gives NULL.
    static func parse(_ args: [SQLValue], _ context: RowContext?) -> DateTime? {
        var p = DateTime()
        if args.isEmpty {
            p.iJD = DateTimeFunctions.now(context)
            p.validJD = true
        } else {
            switch args[0] {
            case .null: return nil
            case .integer, .real: p.setRawDateNumber(SQLValues.double(args[0]))
            default:
                let text = Array(SQLiteText.beforeNul(SQLiteText.bytes(of: args[0]) ?? []))
                guard p.parseDateOrTime(text, context) else { return nil }
            }
        }
        for index in 1..<max(args.count, 1) {
            guard let text = SQLiteText.bytes(of: args[index]) else { return nil }
            guard p.applyModifier(Array(SQLiteText.beforeNul(text)), index: index, context) else { return nil }
        }
        p.computeJD()
        if p.isError || !DateTime.validJulianDay(p.iJD) { return nil }
        return p
    }

    static func validJulianDay(_ iJD: Int64) -> Bool { iJD >= 0 && iJD <= DateTimeFunctions.maximumMilliseconds }

    /// SQLite's getDigits: fixed-width fields with ranges and separators; returns how many it read.
    static func digits(_ z: [UInt8], _ start: Int, _ specs: [(count: Int, min: Int, max: Int, separator: UInt8)]) -> [Int] {
        var values: [Int] = []
        var i = start
        for spec in specs {
            var value = 0
            for _ in 0..<spec.count {
                guard i < z.count, isDigit(z[i]) else { return values }
                value = value * 10 + Int(z[i] - 0x30)
                i += 1
            }
            let next: UInt8 = i < z.count ? z[i] : 0
            if value < spec.min || value > spec.max || (spec.separator != 0 && spec.separator != next) { return values }
            values.append(value)
            i += 1
        }
        return values
    }

    mutating func setError() {
        self = DateTime()
        isError = true
    }

    mutating func setRawDateNumber(_ r: Double) {
        s = r
        rawS = true
        if r >= 0.0 && r < 5373484.5 {
            iJD = DateTime.int64(r * 86400000.0 + 0.5)
            validJD = true
        }
    }

    /// (+|-)HH:MM or Z after a time, then only spaces; false on anything else.
    mutating func parseTimezone(_ z: [UInt8], _ start: Int) -> Bool {
        var i = start
        func at(_ k: Int) -> UInt8 { k < z.count ? z[k] : 0 }
        while DateTime.isSpace(at(i)) { i += 1 }
        tz = 0
        let c = at(i)
        var sign = 0
        if c == 0x2D {
            sign = -1
        } else if c == 0x2B {
            sign = 1
        } else if c == 0x5A || c == 0x7A {
            i += 1
            while DateTime.isSpace(at(i)) { i += 1 }
            tzSet = true
            return at(i) == 0
        } else {
            return c == 0
        }
        i += 1
        let parts = DateTime.digits(z, i, [(2, 0, 14, 0x3A), (2, 0, 59, 0)])
        guard parts.count == 2 else { return false }
        i += 5
        tz = sign * (parts[1] + parts[0] * 60)
        while DateTime.isSpace(at(i)) { i += 1 }
        tzSet = true
        return at(i) == 0
    }

    /// HH:MM[:SS[.FFF]] then an optional timezone; false when it does not parse.
    mutating func parseHhMmSs(_ z: [UInt8], _ start: Int) -> Bool {
        var i = start
        func at(_ k: Int) -> UInt8 { k < z.count ? z[k] : 0 }
        let hm = DateTime.digits(z, i, [(2, 0, 24, 0x3A), (2, 0, 59, 0)])
        guard hm.count == 2 else { return false }
        i += 5
        var seconds = 0
        var fraction = 0.0
        if at(i) == 0x3A {
            i += 1
            let sec = DateTime.digits(z, i, [(2, 0, 59, 0)])
            guard sec.count == 1 else { return false }
            seconds = sec[0]
            i += 2
            if at(i) == 0x2E && DateTime.isDigit(at(i + 1)) {
                var scale = 1.0
                i += 1
                while DateTime.isDigit(at(i)) {
                    fraction = fraction * 10.0 + Double(at(i) - 0x30)
                    scale *= 10.0
                    i += 1
                }
                fraction /= scale
            }
        }
        validJD = false
        rawS = false
        validHMS = true
        h = hm[0]
        m = hm[1]
        s = Double(seconds) + fraction
        guard parseTimezone(z, i) else { return false }
        validTZ = tz != 0
        return true
    }

    mutating func parseYyyyMmDd(_ z: [UInt8]) -> Bool {
        var i = 0
        var negative = false
        if z.first == 0x2D { i = 1; negative = true }
        let ymd = DateTime.digits(z, i, [(4, 0, 9999, 0x2D), (2, 1, 12, 0x2D), (2, 1, 31, 0)])
        guard ymd.count == 3 else { return false }
        i += 10
        while i < z.count, DateTime.isSpace(z[i]) || z[i] == 0x54 { i += 1 }
        if parseHhMmSs(z, i) {
            // the time was read
        } else if i >= z.count {
            validHMS = false
        } else {
            return false
        }
        validJD = false
        validYMD = true
        Y = negative ? -ymd[0] : ymd[0]
        M = ymd[1]
        D = ymd[2]
        if validTZ { computeJD() }
        return true
    }

    mutating func parseDateOrTime(_ z: [UInt8], _ context: RowContext?) -> Bool {
        if parseYyyyMmDd(z) { return true }
        if parseHhMmSs(z, 0) { return true }
        if DateTime.lowercased(z) == Array("now".utf8) {
            iJD = DateTimeFunctions.now(context)
            validJD = true
            return true
        }
        let (value, kind) = DateTime.atof(z)
        if kind > 0 {
            setRawDateNumber(value)
            return true
        }
        return false
    }

    static func lowercased(_ z: [UInt8]) -> [UInt8] { z.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 } }

    /// SQLite 3.40's sqlite3AtoF over `z`: the value of its numeric prefix and its verdict
    /// (> 0: all of it is a number, 1 an integer and 2+ with a point or exponent; -1: only a
    /// prefix, which has a point or exponent; 0 otherwise).
    static func atof(_ z: [UInt8]) -> (Double, Int) {
        var i = 0
        let n = z.count
        while i < n, isSpace(z[i]) { i += 1 }
        if i >= n { return (0, 0) }
        let start = i
        if z[i] == 0x2D || z[i] == 0x2B { i += 1 }
        var digits = 0
        var eType = 1
        var eValid = true
        while i < n, isDigit(z[i]) { i += 1; digits += 1 }
        var end = i
        if i < n, z[i] == 0x2E {
            i += 1
            eType += 1
            while i < n, isDigit(z[i]) { i += 1; digits += 1 }
            end = i
        }
        if i < n, z[i] == 0x65 || z[i] == 0x45 {
            i += 1
            eValid = false
            eType += 1
            if i < n, z[i] == 0x2D || z[i] == 0x2B { i += 1 }
            while i < n, isDigit(z[i]) { i += 1; eValid = true }
            if eValid { end = i }
        }
        let literalEnd = eValid ? i : end
        while i < n, isSpace(z[i]) { i += 1 }
        let literal = String(decoding: z[start..<literalEnd], as: UTF8.self)
        let value = digits > 0 ? SQLValues.atof(literal) : 0
        if i == n && digits > 0 && eValid && eType > 0 { return (value, eType) }
        if eType >= 2 && (eType == 3 || eValid) && digits > 0 { return (value, -1) }
        return (value, 0)
    }

    mutating func computeJD() {
        if validJD { return }
        var y: Int, mo: Int, d: Int
        if validYMD {
            y = Y; mo = M; d = D
        } else {
            y = 2000; mo = 1; d = 1
        }
        if y < -4713 || y > 9999 || rawS {
            setError()
            return
        }
        if mo <= 2 { y -= 1; mo += 12 }
        let a = y / 100
        let b = 2 - a + (a / 4)
        let x1 = 36525 * (y + 4716) / 100
        let x2 = 306001 * (mo + 1) / 10000
        iJD = DateTime.int64((Double(x1 + x2 + d + b) - 1524.5) * 86400000)
        validJD = true
        if validHMS {
            iJD = iJD &+ Int64(h) &* 3_600_000 &+ Int64(m) &* 60000 &+ DateTime.int64(s * 1000 + 0.5)
            if validTZ {
                iJD = iJD &- Int64(tz) &* 60000
                validYMD = false
                validHMS = false
                validTZ = false
            }
        }
    }

    mutating func computeYMD() {
        if validYMD { return }
        if !validJD {
            Y = 2000; M = 1; D = 1
        } else if !DateTime.validJulianDay(iJD) {
            setError()
            return
        } else {
            let z = Int((iJD + 43_200_000) / 86_400_000)
            var a = Int(DateTime.int32((Double(z) - 1867216.25) / 36524.25))
            a = z + 1 + a - (a / 4)
            let b = a + 1524
            let c = Int(DateTime.int32((Double(b) - 122.1) / 365.25))
            let d = (36525 * (c & 32767)) / 100
            let e = Int(DateTime.int32(Double(b - d) / 30.6001))
            let x1 = Int(DateTime.int32(30.6001 * Double(e)))
            D = b - d - x1
            M = e < 14 ? e - 1 : e - 13
            Y = M > 2 ? c - 4716 : c - 4715
        }
        validYMD = true
    }

    mutating func computeHMS() {
        if validHMS { return }
        computeJD()
        let dayMs = Int((iJD &+ 43_200_000) % 86_400_000)
        s = Double(dayMs % 60000) / 1000.0
        let dayMin = dayMs / 60000
        m = dayMin % 60
        h = dayMin / 60
        rawS = false
        validHMS = true
    }

    mutating func computeYMDHMS() {
        computeYMD()
        computeHMS()
    }

    mutating func clearYMDHMSTZ() {
        validYMD = false
        validHMS = false
        validTZ = false
    }

    /// SQLite 3.40.1's toLocaltime: takes this time as UTC and sets the fields to the local time
    /// of the C library's localtime_r (a year outside 1970-2038 is mapped to one of 2000-2003 with
    /// the same leap-year place, then back); false when localtime_r fails.
    mutating func toLocaltime() -> Bool {
        computeJD()
        let yearDifference: Int
        var t: time_t
        if iJD < 2108667600 * 100000 || iJD > 2130141456 * 100000 {
            var x = self
            x.computeYMDHMS()
            yearDifference = (2000 + x.Y % 4) - x.Y
            x.Y += yearDifference
            x.validJD = false
            x.computeJD()
            t = time_t(x.iJD / 1000 &- DateTimeFunctions.unixEpochMilliseconds / 1000)
        } else {
            yearDifference = 0
            t = time_t(iJD / 1000 &- DateTimeFunctions.unixEpochMilliseconds / 1000)
        }
        var local = tm()
        guard localtime_r(&t, &local) != nil else { return false }
        Y = Int(local.tm_year) + 1900 - yearDifference
        M = Int(local.tm_mon) + 1
        D = Int(local.tm_mday)
        h = Int(local.tm_hour)
        m = Int(local.tm_min)
        s = Double(local.tm_sec) + Double(iJD % 1000) * 0.001
        validYMD = true
        validHMS = true
        validJD = false
        rawS = false
        validTZ = false
        isError = false
        return true
    }

    /// SQLite 3.40.1's 'utc': the UTC time whose local time this is, found by up to four guesses.
    mutating func toUTC() -> Bool {
        if tzSet { return true }
        computeJD()
        let original = iJD
        var guess = original
        var error: Int64 = 0
        var count = 0
        repeat {
            guess = guess &- error
            var candidate = DateTime()
            candidate.iJD = guess
            candidate.validJD = true
            guard candidate.toLocaltime() else { return false }
            candidate.computeJD()
            error = candidate.iJD &- original
            count += 1
        } while error != 0 && count <= 3
        self = DateTime()
        iJD = guess
        validJD = true
        tzSet = true
        return true
    }

    /// One modifier (SQLite 3.40's parseModifier); false when SQLite gives NULL.
    mutating func applyModifier(_ z: [UInt8], index: Int, _ context: RowContext?) -> Bool {
        guard let first = z.first else { return false }
        let lower = DateTime.lowercased(z)
        switch lower[0] {
        case 0x61: // auto
            guard lower == Array("auto".utf8), index <= 1 else { return false }
            if !rawS || validJD {
                rawS = false
            } else if s >= -210_866_760_000 && s <= 253_402_300_799 {
                let r = s * 1000.0 + 210_866_760_000_000.0
                clearYMDHMSTZ()
                iJD = DateTime.int64(r + 0.5)
                validJD = true
                rawS = false
            }
            return true
        case 0x6A: // julianday
            guard lower == Array("julianday".utf8), index <= 1 else { return false }
            guard validJD && rawS else { return false }
            rawS = false
            return true
        case 0x6C: // localtime
            guard lower == Array("localtime".utf8) else { return false }
            return toLocaltime()
        case 0x75: // unixepoch, utc
            if lower == Array("unixepoch".utf8) && rawS {
                guard index <= 1 else { return false }
                let r = s * 1000.0 + 210_866_760_000_000.0
                guard r >= 0.0 && r < 464_269_060_800_000.0 else { return false }
                clearYMDHMSTZ()
                iJD = DateTime.int64(r + 0.5)
                validJD = true
                rawS = false
                return true
            }
            guard lower == Array("utc".utf8) else { return false }
            return toUTC()
        case 0x77: // weekday N
            guard lower.count >= 8, Array(lower[0..<8]) == Array("weekday ".utf8) else { return false }
            let (r, kind) = DateTime.atof(Array(z[8...]))
            guard kind != 0, r >= 0.0, r < 7.0, Double(Int(r)) == r else { return false }
            let n = Int64(r)
            computeYMDHMS()
            validTZ = false
            validJD = false
            computeJD()
            var weekday = ((iJD &+ 129_600_000) / 86_400_000) % 7
            if weekday > n { weekday -= 7 }
            iJD = iJD &+ (n - weekday) &* 86_400_000
            clearYMDHMSTZ()
            return true
        case 0x73: // start of ...
            guard lower.count >= 9, Array(lower[0..<9]) == Array("start of ".utf8) else { return false }
            guard validJD || validYMD || validHMS else { return false }
            computeYMD()
            validHMS = true
            h = 0; m = 0; s = 0
            rawS = false
            validTZ = false
            validJD = false
            let unit = Array(lower[9...])
            if unit == Array("month".utf8) {
                D = 1
                return true
            } else if unit == Array("year".utf8) {
                M = 1
                D = 1
                return true
            } else if unit == Array("day".utf8) {
                return true
            }
            return false
        case 0x2B, 0x2D, 0x30...0x39:
            return applyNumericModifier(z, first: first)
        default:
            return false
        }
    }

    /// '±NNN unit' and '±HH:MM[:SS[.FFF]]'.
    private mutating func applyNumericModifier(_ z: [UInt8], first: UInt8) -> Bool {
        var n = 1
        while n < z.count, z[n] != 0x3A, !DateTime.isSpace(z[n]) { n += 1 }
        let (r, kind) = DateTime.atof(Array(z[0..<n]))
        guard kind > 0 else { return false }
        if n < z.count, z[n] == 0x3A {
            var start = 0
            if !DateTime.isDigit(z[0]) { start = 1 }
            var tx = DateTime()
            guard tx.parseHhMmSs(z, start) else { return false }
            tx.computeJD()
            tx.iJD -= 43_200_000
            let day = tx.iJD / 86_400_000
            tx.iJD -= day * 86_400_000
            if first == 0x2D { tx.iJD = -tx.iJD }
            computeJD()
            clearYMDHMSTZ()
            iJD = iJD &+ tx.iJD
            return true
        }
        var i = n
        while i < z.count, DateTime.isSpace(z[i]) { i += 1 }
        var unit = DateTime.lowercased(Array(z[i...]))
        guard unit.count >= 3, unit.count <= 10 else { return false }
        if unit.last == 0x73 { unit.removeLast() }
        computeJD()
        let rounder = r < 0 ? -0.5 : 0.5
        let units: [(name: String, limit: Float, seconds: Double)] = [
            ("second", 4.6427e+14, 1.0), ("minute", 7.7379e+12, 60.0), ("hour", 1.2897e+11, 3600.0),
            ("day", 5373485.0, 86400.0), ("month", 176546.0, 2592000.0), ("year", 14713.0, 31536000.0),
        ]
        var value = r
        var applied = false
        for entry in units {
            let limit = Double(entry.limit)
            guard unit == Array(entry.name.utf8), value > -limit, value < limit else { continue }
            if entry.name == "month" {
                computeYMDHMS()
                M += Int(DateTime.int32(value))
                let x = M > 0 ? (M - 1) / 12 : (M - 12) / 12
                Y += x
                M -= x * 12
                validJD = false
                value -= Double(DateTime.int32(value))
            } else if entry.name == "year" {
                computeYMDHMS()
                Y += Int(DateTime.int32(value))
                validJD = false
                value -= Double(DateTime.int32(value))
            }
            computeJD()
            iJD = iJD &+ DateTime.int64(value * 1000.0 * entry.seconds + rounder)
            applied = true
            break
        }
        clearYMDHMSTZ()
        return applied
    }
}
