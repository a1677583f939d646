import ArgumentParser
import Foundation
import UnifiedStorage

/// `ustore import DIR [--input F]`: writes the records of an export (ExportFormat.swift).
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Write the records of an `export` (JSON lines from stdin or --input) into a store.",
        discussion: """
            Every line is checked before anything is written: a malformed line exits 2 naming \
            it, and the store is left as it was. Records are then written in batches of 1000 \
            (each batch atomic), replacing values of the same keys; values are encrypted and \
            compressed as the key and compression options say; named spaces (tables, caches, \
            preferences) are registered by name; values that expired since the export are \
            skipped. Prints {"imported":N,"skippedExpired":M}. A progress line is shown on \
            stderr when it is a terminal.
            """
    )

    @OptionGroup var store: StoreDirectoryArgument
    @OptionGroup(title: "Compression") var compression: CompressionOptions
    @Option(name: .customLong("input"), help: ArgumentHelp("Read this file instead of stdin.", valueName: "path"))
    var input: String?

    func run() throws {
        try reportingFailures {
            let data = try input.map { try Data(contentsOf: URL(fileURLWithPath: $0)) } ?? FileHandle.standardInput.readDataToEndOfFile()
            let records = try Self.parse(String(decoding: data, as: UTF8.self))
            let progress = ProgressLine("import")
            defer { progress.finish() }
            let outcome = try StoreSession.with(store, readOnly: false, compression: compression.compression) { logStore in
                try Self.write(records, to: logStore) { progress.update($0) }
            }
            try Output.line(JSON.ordered(["imported": .int(outcome.imported), "skippedExpired": .int(outcome.skippedExpired)]).text)
        }
    }

    /// The records of an export's text, header checked.
    /// - Throws: `ExportFormatError` for the first bad line.
    static func parse(_ text: String) throws -> [ExportRecord] {
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        while lines.last?.isEmpty == true { lines.removeLast() }
        guard let first = lines.first else { throw ExportFormatError(line: 1, message: "the input is empty") }
        try ExportRecord.checkHeader(String(first))
        return try lines.enumerated().dropFirst().compactMap { index, line in
            line.allSatisfy(\.isWhitespace) ? nil : try ExportRecord(line: String(line), lineNumber: index + 1)
        }
    }

    /// Writes `records` in atomic batches, calling `progress` with the share done.
    static func write(_ records: [ExportRecord], to store: LogStore,
                      progress: (Double) -> Void) throws -> (imported: Int, skippedExpired: Int) {
        var spaces: [String: LogStore.KeySpace] = [:]
        var batch = LogStore.WriteBatch()
        var imported = 0, skipped = 0
        let now = Date()
        for (index, record) in records.enumerated() {
            var space = record.space
            if let name = record.spaceName {
                if let known = spaces[name] { space = known } else {
                    space = try store.space(named: name)
                    spaces[name] = space
                }
            }
            let expiresAt = record.expiresAt.map { Date(timeIntervalSince1970: Double($0) / 1000) }
            if let expiresAt, expiresAt <= now {
                skipped += 1
            } else {
                batch.put(record.value, forKey: record.key, space: space, expiresAt: expiresAt, crypt: nil, purgeable: record.purgeable)
                imported += 1
            }
            if batch.count >= 1000 {
                try store.write(batch)
                batch = LogStore.WriteBatch()
                progress(Double(index + 1) / Double(records.count))
            }
        }
        if batch.count > 0 { try store.write(batch) }
        progress(1)
        return (imported, skipped)
    }
}
