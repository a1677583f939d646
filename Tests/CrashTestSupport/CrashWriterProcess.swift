import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The child process of the kill -9 tests (`logstore-crash-writer`, Tests/CrashWriter).
package enum CrashWriterProcess {
    /// The executable, built next to the test bundle that holds `testCase`.
    /// - Throws: `XCTSkip` when it is not there (a build without the executable).
    package static func binary(nextTo testCase: AnyClass) throws -> URL {
        let name = "logstore-crash-writer"
        let bundle = Bundle(for: testCase).bundleURL
        let candidates = [
            bundle.deletingLastPathComponent().appendingPathComponent(name),
            bundle.appendingPathComponent(name),
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name),
        ]
        for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        throw XCTSkip("crash writer binary not found next to the test bundle: \(candidates.map(\.path))")
    }

    /// Starts `binary` with `arguments`, kills it with SIGKILL after `microseconds`, and returns
    /// everything it wrote to standard output. A thread drains the pipe meanwhile, so a chatty
    /// child never blocks on a full pipe before the kill.
    package static func runUntilKilled(_ binary: URL, arguments: [String], after microseconds: UInt32) throws -> String {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        let collected = Collected()
        let reader = output.fileHandleForReading
        let thread = Thread { collected.finish(reader.readDataToEndOfFile()) }
        try process.run()
        thread.start()
        usleep(microseconds)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return String(decoding: collected.wait(), as: UTF8.self)
    }

    /// The drained output, handed from the reader thread to the caller.
    private final class Collected: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var data = Data()
        func finish(_ data: Data) {
            self.data = data
            done.signal()
        }
        func wait() -> Data {
            done.wait()
            return data
        }
    }
}
