import Foundation
import XCTest

/// The base of the `ustore` tests: runs the built binary as a subprocess in scratch
/// directories that are removed after each test.
class UstoreTestCase: XCTestCase {
    /// What one run of `ustore` produced.
    struct Run {
        var status: Int32
        var stdout: [UInt8]
        var stderr: String

        var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
        /// Stdout's lines, without empty ones.
        var lines: [String] { stdoutText.split(separator: "\n").map(String.init) }
    }

    /// A fresh directory (not created) inside a fresh scratch directory removed after the test.
    func makeStorePath(_ name: String = "store") throws -> URL {
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("ustore-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: scratch) }
        return scratch.appendingPathComponent(name, isDirectory: true)
    }

    /// Runs `ustore` with `arguments`, feeding `stdin` (or nothing) as its standard input.
    func ustore(_ arguments: [String], stdin: [UInt8] = [], file: StaticString = #filePath, line: UInt = #line) throws -> Run {
        let binary = try XCTUnwrap(UstoreBinary.url, "ustore binary not found; build it first", file: file, line: line)
        let io = FileManager.default.temporaryDirectory.appendingPathComponent("ustore-io-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: io, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: io) }
        // Files rather than pipes: nothing can block on a full pipe buffer.
        let inURL = io.appendingPathComponent("stdin"), outURL = io.appendingPathComponent("stdout"),
            errURL = io.appendingPathComponent("stderr")
        try Data(stdin).write(to: inURL)
        try Data().write(to: outURL)
        try Data().write(to: errURL)
        let input = try FileHandle(forReadingFrom: inURL)
        let output = try FileHandle(forWritingTo: outURL)
        let errors = try FileHandle(forWritingTo: errURL)
        defer { try? input.close(); try? output.close(); try? errors.close() }

        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .exit, "ustore \(arguments) did not exit normally", file: file, line: line)
        return Run(status: process.terminationStatus,
                   stdout: [UInt8](try Data(contentsOf: outURL)),
                   stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }

    /// Runs `ustore` and fails the test unless it exits 0.
    @discardableResult
    func ustoreOK(_ arguments: [String], stdin: [UInt8] = [], file: StaticString = #filePath, line: UInt = #line) throws -> Run {
        let run = try ustore(arguments, stdin: stdin, file: file, line: line)
        XCTAssertEqual(run.status, 0, "ustore \(arguments) failed: \(run.stderr)", file: file, line: line)
        return run
    }

    /// Parses `text` as one JSON value.
    func parseJSON(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> Any {
        do {
            return try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
        } catch {
            XCTFail("not JSON: \(text)", file: file, line: line)
            throw error
        }
    }

    /// Parses `text` as a JSON object.
    func parseObject(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        try XCTUnwrap(try parseJSON(text, file: file, line: line) as? [String: Any], "not a JSON object: \(text)", file: file, line: line)
    }

    /// The `.seg` files of a store directory, sorted by name.
    func segmentFiles(in store: URL) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: store, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "seg" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    /// A copy of the store directory `store` in a new scratch directory.
    func copyStore(_ store: URL) throws -> URL {
        let copy = try makeStorePath("copy")
        try FileManager.default.copyItem(at: store, to: copy)
        return copy
    }
}

/// Where the built `ustore` executable is.
enum UstoreBinary {
    /// The first candidate that exists: next to the test bundle (the build products directory),
    /// then the package's `.build-cli/debug` and `.build/debug`.
    static let url: URL? = candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }

    static var candidates: [URL] {
        let bundle = Bundle(for: UstoreTestCase.self).bundleURL
        var urls = [
            bundle.deletingLastPathComponent().appendingPathComponent("ustore"),
            bundle.appendingPathComponent("ustore"),
        ]
        if let executable = Bundle.main.executableURL {
            urls.append(executable.deletingLastPathComponent().appendingPathComponent("ustore"))
        }
        // Tests/UstoreTests/UstoreTestCase.swift -> the package root.
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        urls.append(packageRoot.appendingPathComponent(".build-cli/debug/ustore"))
        urls.append(packageRoot.appendingPathComponent(".build/debug/ustore"))
        return urls
    }
}
