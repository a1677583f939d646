/// A pattern of SQLite's `LIKE` operator, compiled once and matched against many strings.
///
/// The one LIKE matcher of the project (preferences, disk caches, file and object arrays and
/// the DAO all use it), so every layer agrees with SQLite:
/// - `%` matches any run of characters, the empty run included;
/// - `_` matches exactly one character (one Unicode scalar, as SQLite counts UTF-8 characters);
/// - letters compare case-insensitively for ASCII only: `a` matches `A`, but `é` does not
///   match `É` (SQLite's built-in LIKE folds no other letters);
/// - every other character, `.` `*` `[` `\` included, matches itself;
/// - with an `escape` character (SQL's `LIKE ... ESCAPE 'x'`), the escape followed by any
///   character matches that character literally; an escape at the pattern's end matches nothing.
///
/// ```swift
/// let pattern = LikePattern("user._%")
/// pattern.matches("USER.1")     // true
/// pattern.matches("userx1")     // false: the dot is literal
/// ```
/// - Complexity: matching is O(pattern × text) in the worst case, linear for patterns with one `%`.
public struct LikePattern: Sendable, Hashable {
    enum Token: Sendable, Hashable {
        /// `%`
        case anyRun
        /// `_`
        case oneCharacter
        /// A character to match, ASCII-folded to lower case.
        case literal(UInt32)
        /// A dangling escape: nothing matches it.
        case never
    }

    let tokens: [Token]
    /// The pattern as written.
    public let pattern: String

    /// Compiles `pattern`. `escape` is the optional escape character of `LIKE ... ESCAPE`; it
    /// must be a single Unicode scalar (SQLite refuses longer ones; here the first scalar counts).
    public init(_ pattern: String, escape: Character? = nil) {
        self.init(pattern, codePoints: pattern.unicodeScalars.map(\.value), escape: escape?.unicodeScalars.first?.value)
    }

    /// Compiles a pattern given as code points (SQL text that is not valid UTF-8 is read as
    /// SQLite reads it: `SQLiteText.codePoints`); `pattern` is only its description.
    init(_ pattern: String, codePoints: [UInt32], escape: UInt32?) {
        self.pattern = pattern
        var tokens: [Token] = []
        var iterator = codePoints.makeIterator()
        while let point = iterator.next() {
            if let escape, point == escape {
                if let next = iterator.next() {
                    tokens.append(.literal(LikePattern.fold(next)))
                } else {
                    tokens.append(.never)
                }
            } else if point == 0x25 {   // %
                if tokens.last != .anyRun { tokens.append(.anyRun) }
            } else if point == 0x5F {   // _
                tokens.append(.oneCharacter)
            } else {
                tokens.append(.literal(LikePattern.fold(point)))
            }
        }
        self.tokens = tokens
    }

    /// True when the whole of `text` matches the pattern.
    public func matches(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { matches(utf8: $0) }
    }

    /// True when the whole of the text of these bytes matches the pattern, characters read as
    /// SQLite reads them (`SQLiteText`: for valid UTF-8, Unicode scalars).
    func matches(utf8 text: UnsafeBufferPointer<UInt8>) -> Bool {
        var patternIndex = 0
        var textIndex = 0
        // Where the last `%` was seen, and the text position it is currently stretched to.
        var runPattern = -1
        var runText = 0
        while textIndex < text.count {
            if patternIndex < tokens.count {
                let next = SQLiteText.characterEnd(text, after: textIndex)
                switch tokens[patternIndex] {
                case .anyRun:
                    runPattern = patternIndex
                    runText = textIndex
                    patternIndex += 1
                    continue
                case .oneCharacter:
                    patternIndex += 1
                    textIndex = next
                    continue
                case .literal(let value) where value == LikePattern.fold(Self.codePoint(text, textIndex, next)):
                    patternIndex += 1
                    textIndex = next
                    continue
                case .literal, .never:
                    break
                }
            }
            // Mismatch: let the last `%` swallow one more character, or fail.
            guard runPattern >= 0 else { return false }
            patternIndex = runPattern + 1
            runText = SQLiteText.characterEnd(text, after: runText)
            textIndex = runText
        }
        while patternIndex < tokens.count, tokens[patternIndex] == .anyRun { patternIndex += 1 }
        return patternIndex == tokens.count
    }

    /// The code point of the character at `start..<end` (ASCII without decoding).
    @inline(__always)
    private static func codePoint(_ text: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> UInt32 {
        let lead = text[start]
        if lead < 0x80 { return UInt32(lead) }
        return SQLiteText.decode(UnsafeBufferPointer(rebasing: text[start..<end]))
    }

    /// ASCII upper case to lower case; every other code point unchanged.
    static func fold(_ value: UInt32) -> UInt32 {
        (0x41...0x5A).contains(value) ? value + 0x20 : value
    }
}
