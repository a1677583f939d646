import ArgumentParser
import Foundation
import UnifiedStorage

/// `ustore export DIR`: every live record as JSON lines (ExportFormat.swift), for `import`.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write every live record as JSON lines (values decrypted and decompressed), for `import`.",
        discussion: """
            The first line is {"format":"ustore-export","version":1}; then one line per live, \
            unexpired record: space, spaceName (for the spaces of tables, caches and preferences), \
            key_base64, value_base64 (as `get` returns it), expiresAt (ms since 1970) when it \
            expires, purgeable when set. Encrypted values need the store's key. A value written \
            with a custom crypt cannot be decoded, and a damaged record cannot be read: export \
            fails naming it, unless --skip-undecodable (then it is reported on stderr and left \
            out). The output holds \
            values in the clear: protect it as the store's key.
            """
    )

    @OptionGroup var store: StoreDirectoryArgument
    @Option(name: .customLong("output"), help: ArgumentHelp("Write to this file instead of stdout.", valueName: "path"))
    var output: String?
    @Flag(name: .customLong("skip-undecodable"), help: "Leave out values that cannot be decoded instead of failing.")
    var skipUndecodable = false

    func run() throws {
        try reportingFailures {
            let records = try StoreSession.with(store, readOnly: true) { logStore in
                try StoreExporter(store: logStore, skipUndecodable: skipUndecodable).records()
            }
            var text = ExportRecord.header.text + "\n"
            if let output {
                // Written whole, then renamed into place: a failed export leaves no half file.
                for record in records { text += record.json.text + "\n" }
                try Data(text.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
            } else {
                var lines = BufferedLines()
                try lines.append(ExportRecord.header.text)
                for record in records { try lines.append(record.json.text) }
                try lines.flush()
            }
        }
    }
}

/// Collects the live records of a store for export.
struct StoreExporter {
    let store: LogStore
    let skipUndecodable: Bool
    /// The key space name of the DAO index checkpoint record (FORMAT.md).
    static let indexCheckpointSpaceName = "dao.checkpoint"

    private struct Wanted {
        var space: LogStore.KeySpace
        var key: [UInt8]
        var expiresAt: Int64?
        var purgeable: Bool
    }

    /// Every live, unexpired record outside the engine's space, plain values straight from the
    /// segments and transformed ones through `get` (outside `forEachRecord`, which holds the
    /// engine's locks), sorted by space and key.
    /// - Throws: `StoreError` from the store; `ExportError` for an undecodable value unless
    ///   skipping.
    func records() throws -> [ExportRecord] {
        let names = Dictionary(try store.namedSpaces().map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
        let now = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        var records: [ExportRecord] = []
        var transformed: [Wanted] = []
        // The DAO index checkpoint record (FORMAT.md "DAO index checkpoint") is derived data: it
        // names the store's `dao-indexes` file, which an export does not carry.
        let derived = names.filter { $0.value == Self.indexCheckpointSpaceName }.map(\.key)
        var liveFound: [LogStore.KeySpace: Int] = [:]
        try store.forEachRecord { record in
            if record.isLive, !record.isTombstone { liveFound[record.space, default: 0] += 1 }
            guard record.isLive, !record.isTombstone, record.space != LogStore.engineSpace,
                  !derived.contains(record.space) else { return }
            let expiresAt = record.expiresAt.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }
            if let expiresAt, expiresAt <= now { return }
            let purgeable = record.flags & ExportRecord.purgeableFlag != 0
            if record.flags & DumpDecoder.transformFlags == 0 {
                records.append(ExportRecord(space: record.space, spaceName: names[record.space], key: record.key,
                                            value: record.value, expiresAt: expiresAt, purgeable: purgeable))
            } else {
                transformed.append(Wanted(space: record.space, key: record.key, expiresAt: expiresAt, purgeable: purgeable))
            }
        }
        // A key whose record is damaged is in the keydir but not among the records the walk
        // could read (a store opened from its index snapshot trusts the records it covers):
        // an export without it would lose it silently.
        for (space, count) in try store.keyCounts() where space != LogStore.engineSpace && !derived.contains(space) {
            let missing = count - liveFound[space, default: 0]
            guard missing > 0 else { continue }
            let what = "space \(space): \(missing) key(s) whose record cannot be read (`ustore verify` names them)"
            guard skipUndecodable else { throw ExportError(description: "\(what) (--skip-undecodable leaves them out)") }
            Output.error("left out \(what)")
        }
        for wanted in transformed {
            let value: [UInt8]?
            do {
                value = try store.get(forKey: wanted.key, space: wanted.space)
            } catch {
                let what = "space \(wanted.space) key \(JSON.key(wanted.key).text): \(describe(error))"
                guard skipUndecodable else { throw ExportError(description: "cannot decode the value of \(what) (--skip-undecodable leaves it out)") }
                Output.error("left out \(what)")
                continue
            }
            // Expired between the two passes: nothing to export.
            guard let value else { continue }
            records.append(ExportRecord(space: wanted.space, spaceName: names[wanted.space], key: wanted.key,
                                        value: value, expiresAt: wanted.expiresAt, purgeable: wanted.purgeable))
        }
        records.sort { $0.space != $1.space ? $0.space < $1.space : $0.key.lexicographicallyPrecedes($1.key) }
        return records
    }
}

/// A record that cannot be exported.
struct ExportError: Error, CustomStringConvertible {
    var description: String
}
