import Foundation

/// Reads the shell's input lines. On a terminal it edits the line itself (no readline needed):
/// left/right, Home/End (Ctrl-A/Ctrl-E), backspace, Ctrl-U, history with up/down, Ctrl-C to
/// drop the line, Ctrl-D on an empty line to end. Otherwise it reads plain lines from stdin
/// and shows no prompt.
final class LineEditor {
    /// What one read produced.
    enum Input: Equatable {
        case line(String)
        /// Ctrl-C: the line (and any statement being typed) is dropped.
        case interrupt
        case endOfInput
    }

    /// Whether stdin is a terminal (then prompts are shown and lines are edited).
    let isInteractive: Bool
    private(set) var history: [String] = []
    private let historyLimit = 1000

    init() {
        isInteractive = isatty(STDIN_FILENO) == 1
    }

    /// Adds a line to the history (not blank ones, not a repeat of the last).
    func remember(_ line: String) {
        guard !line.allSatisfy(\.isWhitespace), history.last != line else { return }
        history.append(line)
        if history.count > historyLimit { history.removeFirst(history.count - historyLimit) }
    }

    /// Reads one line, showing `prompt` on a terminal.
    func read(prompt: String) -> Input {
        guard isInteractive else {
            guard let line = readLine(strippingNewline: true) else { return .endOfInput }
            return .line(line.hasSuffix("\r") ? String(line.dropLast()) : line)
        }
        var saved = termios()
        guard tcgetattr(STDIN_FILENO, &saved) == 0 else {
            // Not a terminal after all (or unusable): plain reading.
            try? Output.write(Array(prompt.utf8))
            return readLine(strippingNewline: true).map(Input.line) ?? .endOfInput
        }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw)
        defer { tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved) }
        return edit(prompt: prompt)
    }

    // MARK: Editing

    private func edit(prompt: String) -> Input {
        var line: [Unicode.Scalar] = []
        var cursor = 0
        var historyIndex = history.count
        var draft: [Unicode.Scalar] = []
        redraw(prompt, line, cursor)
        while let byte = readByte() {
            switch byte {
            case 0x0D, 0x0A:
                write("\r\n")
                return .line(String(String.UnicodeScalarView(line)))
            case 0x03:
                write("^C\r\n")
                return .interrupt
            case 0x04:
                if line.isEmpty { write("\r\n"); return .endOfInput }
                if cursor < line.count { line.remove(at: cursor) }
            case 0x7F, 0x08:
                if cursor > 0 { cursor -= 1; line.remove(at: cursor) }
            case 0x01: cursor = 0
            case 0x05: cursor = line.count
            case 0x15: line.removeSubrange(0..<cursor); cursor = 0
            case 0x1B:
                guard let next = readByte(), next == UInt8(ascii: "[") || next == UInt8(ascii: "O"),
                      let code = readByte() else { break }
                switch code {
                case UInt8(ascii: "A"), UInt8(ascii: "B"):
                    let up = code == UInt8(ascii: "A")
                    if historyIndex == history.count { draft = line }
                    let target = up ? historyIndex - 1 : historyIndex + 1
                    guard target >= 0 && target <= history.count else { break }
                    historyIndex = target
                    line = target == history.count ? draft : Array(history[target].unicodeScalars)
                    cursor = line.count
                case UInt8(ascii: "C"): cursor = min(cursor + 1, line.count)
                case UInt8(ascii: "D"): cursor = max(cursor - 1, 0)
                case UInt8(ascii: "H"): cursor = 0
                case UInt8(ascii: "F"): cursor = line.count
                case UInt8(ascii: "3"):
                    // Delete: ESC [ 3 ~
                    if readByte() == UInt8(ascii: "~"), cursor < line.count { line.remove(at: cursor) }
                default:
                    // Other sequences (ESC [ 1 ; 5 C ...): skip to their final byte.
                    var last = code
                    while !(0x40...0x7E).contains(last), let more = readByte() { last = more }
                }
            default:
                guard byte >= 0x20, let scalar = readScalar(startingWith: byte) else { break }
                line.insert(scalar, at: cursor)
                cursor += 1
                // Typing at the end of the line only needs the character echoed.
                if cursor == line.count { write(String(Character(scalar))); continue }
            }
            redraw(prompt, line, cursor)
        }
        return .endOfInput
    }

    /// Rewrites the prompt and line and puts the terminal's cursor at `cursor`.
    private func redraw(_ prompt: String, _ line: [Unicode.Scalar], _ cursor: Int) {
        var text = "\r" + prompt + String(String.UnicodeScalarView(line)) + "\u{1B}[K"
        let back = line.count - cursor
        if back > 0 { text += "\u{1B}[\(back)D" }
        write(text)
    }

    /// Completes a UTF-8 sequence that starts with `lead`.
    private func readScalar(startingWith lead: UInt8) -> Unicode.Scalar? {
        let length = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 0
        guard length > 0 else { return nil }
        var bytes = [lead]
        while bytes.count < length, let next = readByte() { bytes.append(next) }
        return String(decoding: bytes, as: UTF8.self).unicodeScalars.first
    }

    private func readByte() -> UInt8? {
        var byte: UInt8 = 0
        while true {
            let count = Foundation.read(STDIN_FILENO, &byte, 1)
            if count == 1 { return byte }
            if count < 0 && errno == EINTR { continue }
            return nil
        }
    }

    private func write(_ text: String) {
        try? Output.writeAll(Array(text.utf8), to: STDOUT_FILENO)
    }
}
