import Foundation
import XCTest

/// A pseudo-terminal pair (posix_openpt) with `ustore` running on its subordinate side, driven
/// from the controlling side as a user at a terminal would: bytes typed in, screen text read.
final class PseudoTerminal {
    private let controller: Int32
    let process = Process()
    /// Everything the program wrote to the terminal so far.
    private(set) var screen: [UInt8] = []
    /// How much of `screen` the previous `expect` consumed.
    private var consumed = 0

    /// Starts `binary` with `arguments`, its stdin, stdout and stderr on a new terminal.
    init(binary: URL, arguments: [String]) throws {
        let pty = try PTYFunctions()
        controller = pty.openpt(O_RDWR | O_NOCTTY)
        guard controller >= 0, pty.grantpt(controller) == 0, pty.unlockpt(controller) == 0, let name = pty.ptsname(controller) else {
            throw POSIXError(.ENOTTY)
        }
        let subordinate = open(String(cString: name), O_RDWR | O_NOCTTY)
        guard subordinate >= 0 else { throw POSIXError(.ENOTTY) }
        let handle = FileHandle(fileDescriptor: subordinate, closeOnDealloc: true)
        process.executableURL = binary
        process.arguments = arguments
        process.standardInput = handle
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        try handle.close()
    }

    deinit {
        if process.isRunning { process.terminate() }
        close(controller)
    }

    /// Types `text` (use "\r" for Enter, "\u{1B}[A" for the up arrow).
    func type(_ text: String) {
        let bytes = Array(text.utf8)
        var done = 0
        while done < bytes.count {
            let written = bytes[done...].withUnsafeBytes { write(controller, $0.baseAddress, $0.count) }
            if written <= 0 { return }
            done += written
        }
    }

    /// Waits (up to `timeout` seconds) until the screen, after what earlier calls consumed,
    /// shows `text`; returns what appeared up to and including it and consumes that.
    @discardableResult
    func expect(_ text: String, timeout: TimeInterval = 20, file: StaticString = #filePath, line: UInt = #line) -> String {
        let deadline = Date().addingTimeInterval(timeout)
        let needle = Array(text.utf8)
        while true {
            if let range = screen[consumed...].firstRange(of: needle) {
                let shown = String(decoding: screen[consumed..<range.upperBound], as: UTF8.self)
                consumed = range.upperBound
                return shown
            }
            let left = deadline.timeIntervalSinceNow
            guard left > 0, readSome(waitingMilliseconds: Int32(min(left, 1) * 1000)) else {
                if left <= 0 || !process.isRunning {
                    XCTFail("the terminal never showed \(text.debugDescription); it shows: \(String(decoding: screen[consumed...], as: UTF8.self).debugDescription)", file: file, line: line)
                    return ""
                }
                continue
            }
        }
    }

    /// Waits for the shell's main prompt on a new line (not a redraw of the line being typed);
    /// returns what appeared before it.
    @discardableResult
    func prompt(file: StaticString = #filePath, line: UInt = #line) -> String {
        expect("\n\rustore> ", file: file, line: line)
    }

    /// Waits for the shell's continuation prompt on a new line.
    @discardableResult
    func continuation(file: StaticString = #filePath, line: UInt = #line) -> String {
        expect("\n\r   ...> ", file: file, line: line)
    }

    /// Waits for the program to exit, reading what it still writes; its exit status.
    func waitForExit(timeout: TimeInterval = 20) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { _ = readSome(waitingMilliseconds: 100) }
        guard !process.isRunning else { return nil }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Reads what is available within the wait; false when nothing came.
    private func readSome(waitingMilliseconds: Int32) -> Bool {
        var poller = pollfd(fd: controller, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, waitingMilliseconds) > 0 else { return false }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(controller, &buffer, buffer.count)
        guard count > 0 else { return false }
        screen += buffer[..<count]
        return true
    }
}

/// posix_openpt, grantpt, unlockpt and ptsname from the C library, looked up at run time: the
/// Glibc module does not import them (glibc declares them only under _XOPEN_SOURCE).
private struct PTYFunctions {
    typealias IntFunction = @convention(c) (Int32) -> Int32
    typealias NameFunction = @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?
    let openpt: IntFunction
    let grantpt: IntFunction
    let unlockpt: IntFunction
    let ptsname: NameFunction

    init() throws {
        let library = dlopen(nil, RTLD_NOW)
        func symbol<T>(_ name: String, _: T.Type) throws -> T {
            guard let address = dlsym(library, name) else { throw POSIXError(.ENOSYS) }
            return unsafeBitCast(address, to: T.self)
        }
        openpt = try symbol("posix_openpt", IntFunction.self)
        grantpt = try symbol("grantpt", IntFunction.self)
        unlockpt = try symbol("unlockpt", IntFunction.self)
        ptsname = try symbol("ptsname", NameFunction.self)
    }
}
