import Foundation
import LogStore

/// The index checkpoint (FORMAT.md "DAO index checkpoint"): `checkpoint()` writes every
/// table's rowid order and indexes to the file `dao-indexes`, then a record naming the file's
/// stamp; each commit after it journals the rows it changes for the first time, in its own
/// batch (SQLDatabase+CheckpointJournal.swift), or deletes the record there. Attach loads the
/// file instead of reading the rows only when the record is there and names the file's stamp,
/// then replays the journal.
extension SQLDatabase {
    static let checkpointSpaceName = "dao.checkpoint"
    static let checkpointKey = Array("indexes".utf8)
    /// The checkpoint record's first byte since the journal: the file, then the journal
    /// records of its stamp, describe the tables.
    static let journaledRecordVersion: UInt8 = 3

    /// Writes the index checkpoint, so that the next attach of this store opens its tables
    /// without reading their rows (the rowid orders and indexes come from the file), and the
    /// store's index snapshot (`LogStore` writes one at close otherwise). Call it
    /// when the application goes idle (`LogStore.close()` writes one too); it costs a write of
    /// every index (O(rows × indexes)), and does nothing when nothing changed since the last one.
    /// The file is derived data: when it is missing, damaged or older than the tables, attach
    /// rebuilds from the rows and says so in `indexReport`.
    /// - Throws: `SQLExecutionError` inside a transaction; `StoreError.readOnly` on a read-only
    ///   store; `StoreError` from writing the file or the record (then the next attach
    ///   rebuilds from the rows; no row is affected).
    public func checkpoint() throws {
        try withStatementLock { try checkpointLocked() }
    }

    /// `checkpoint()` for a caller that holds the statement lock (`PRAGMA wal_checkpoint`).
    func checkpointLocked() throws {
        guard !explicitTransaction else { throw SQLExecutionError("cannot checkpoint within a transaction") }
        guard !store.options.readOnly else { throw StoreError.readOnly }
        try writeCheckpoint()
        // The store's keydir snapshot too, so the close before the next open has nothing
        // to write (LogStore skips a snapshot that is still exact).
        try store.writeIndexSnapshot()
    }

    /// The checkpoint `LogStore.close()` writes: skipped while a transaction is open (its
    /// changes are not the tables'), on a read-only store, and after a failed fsync; a failure
    /// only means the next attach reads the rows.
    func checkpointAtClose() {
        // A close from inside a `forEachRow` body: the query is still reading the tables.
        if isStreamingHere { return }
        condition.lock()
        defer { condition.unlock() }
        guard transactionOwner == nil, !explicitTransaction, !store.options.readOnly else { return }
        try? writeCheckpoint(serve: false)
    }

    /// Writes the file and the record (then, with `serve`, serves the tables from the new file).
    /// Caller holds the statement lock, outside a transaction.
    private func writeCheckpoint(serve: Bool = true) throws {
        try store.checkNoFailedSync()
        if store.hasWriteKey { return dropCheckpointOfEncryptingStore() }
        // Nothing to do when it is current, or when there are no tables and never was a record.
        if checkpointCurrent || (tables.isEmpty && !checkpointRecordPresent) { return }
        let stamp = UInt64.random(in: 1...UInt64.max)
        let ordered = tables.values.sorted { $0.space < $1.space }
        let directory = store.directory.path
        let path = directory + "/" + IndexCheckpointFile.name
        let temporary = path + ".tmp"
        do {
            let file = try SystemFile(path: temporary, flags: O_CREAT | O_WRONLY | O_TRUNC, mode: 0o600)
            guard try IndexCheckpointFile.write(stamp: stamp, tables: ordered, to: file) else {
                try? Directory.remove(temporary)
                return
            }
            // Writing read every block of the file the tables are served from: a damaged one
            // means what was just written is not the tables. Rebuild them and write again.
            if servedBlocks?.isDamaged == true {
                try? Directory.remove(temporary)
                try rebuildAfterIndexDamage()
                return try writeCheckpoint(serve: serve)
            }
            try file.syncData()
        }
        // Writing read every page of the file served so far: they need not stay in the process.
        servedBlocks?.file.releaseResidentPages()
        try Directory.rename(temporary, path)
        try Directory.sync(directory)
        // The record goes after the file is durable: a record never names a file that is
        // not all there.
        let space = try store.space(named: Self.checkpointSpaceName)
        checkpointSpace = space
        var record: [UInt8] = [Self.journaledRecordVersion]
        for shift in stride(from: 0, through: 56, by: 8) { record.append(UInt8(truncatingIfNeeded: stamp >> UInt64(shift))) }
        // The record, and the journal records of every earlier checkpoint deleted, in one
        // batch: a journal record is only read under the stamp of its own checkpoint, so the
        // old ones are garbage, gone here.
        var batch = LogStore.WriteBatch()
        for key in try store.keys(space: space, prefix: [CheckpointJournal.keyPrefix]) { batch.delete(forKey: key, space: space) }
        batch.put(record, forKey: Self.checkpointKey, space: space)
        checkpointRecordPresent = true
        checkpointJournal = nil
        try store.write(batch)
        checkpointJournal = CheckpointJournal(stamp: stamp)
        checkpointCurrent = true
        if serve { serveWrittenCheckpoint(path: path, ordered: ordered) }
    }

    /// The checkpoint file, when the store's record names it and it reads back whole; nil (with
    /// the reason in `indexReport` when there is one) when the rows must be read instead.
    func readCheckpoint() throws -> MappedCheckpoint? {
        let path = store.directory.path + "/" + IndexCheckpointFile.name
        if store.hasWriteKey {
            if let space = try existingSpace(named: Self.checkpointSpaceName) {
                checkpointSpace = space
                checkpointRecordPresent = try store.get(forKey: Self.checkpointKey, space: space) != nil
            }
            if checkpointRecordPresent || Directory.exists(path) {
                indexReport.append("\(IndexCheckpointFile.name) is not kept in a store that encrypts (its entries hold indexed values in plaintext): indexes rebuilt from the rows")
                dropCheckpointOfEncryptingStore()
            }
            return nil
        }
        guard let space = try existingSpace(named: Self.checkpointSpaceName),
              let record = try store.get(forKey: Self.checkpointKey, space: space) else {
            if Directory.exists(path) {
                indexReport.append("\(IndexCheckpointFile.name) is older than the tables' last change: indexes rebuilt from the rows")
            }
            return nil
        }
        checkpointSpace = space
        checkpointRecordPresent = true
        // Version 2 records were written before the journal: no commit journals under them.
        guard record.count == 9, record[0] == 2 || record[0] == Self.journaledRecordVersion else {
            indexReport.append("index checkpoint record of \(record.count) bytes not understood: indexes rebuilt from the rows")
            return nil
        }
        var stamp: UInt64 = 0
        for i in (1...8).reversed() { stamp = stamp << 8 | UInt64(record[i]) }
        guard Directory.exists(path) else {
            indexReport.append("\(IndexCheckpointFile.name) is missing: indexes rebuilt from the rows")
            return nil
        }
        var decoded: MappedCheckpoint
        do {
            decoded = try IndexCheckpointFile.decode(try MappedFile(path: path))
        } catch {
            indexReport.append("\(IndexCheckpointFile.name) unreadable (\(error)): indexes rebuilt from the rows")
            return nil
        }
        guard decoded.stamp == stamp else {
            indexReport.append("\(IndexCheckpointFile.name) is not the checkpoint the store names: indexes rebuilt from the rows")
            return nil
        }
        decoded.journaled = record[0] == Self.journaledRecordVersion
        return decoded
    }

    /// Gives the tables just read from the catalog their rowid orders and indexes from the
    /// checkpoint. False (with the reason in `indexReport`) when it does not describe exactly
    /// these tables and indexes: the rows must be read instead.
    func applyCheckpoint(_ decoded: MappedCheckpoint) -> Bool {
        var bySpace: [LogStore.KeySpace: TableState] = [:]
        for table in tables.values { bySpace[table.space] = table }
        let matches = decoded.tables.count == bySpace.count && decoded.tables.allSatisfy { part in
            guard let table = bySpace[part.space], table.name.lowercased() == part.name,
                  part.indexes.count == table.indexes.count else { return false }
            return zip(part.indexes, table.indexes).allSatisfy { $0.name == $1.schema.name && $0.count == part.rowidCount }
        }
        guard matches else {
            indexReport.append("\(IndexCheckpointFile.name) does not match the catalog: indexes rebuilt from the rows")
            return false
        }
        serve(decoded, bySpace)
        checkpointCurrent = true
        // A version 2 record: no journal was written under it, and none may be (a reader that
        // knows only version 2 would take the file alone); the first commit deletes it.
        guard decoded.journaled else { return true }
        do {
            if try replayJournal(stamp: decoded.stamp, bySpace: bySpace) {
                if checkpointJournal?.namedCount ?? 0 > 0 { checkpointCurrent = false }
                return true
            }
        } catch {
            indexReport.append("\(IndexCheckpointFile.name) journal: \(error): indexes rebuilt from the rows")
        }
        // The journal did not fit: the tables are half replayed; the caller reads the rows.
        // The record goes now (not on a read-only store), so no attach tries this one again.
        servedBlocks = nil
        checkpointCurrent = false
        checkpointJournal = nil
        if !store.options.readOnly { deleteCheckpointRecord() }
        return false
    }

    /// Deletes the checkpoint record in its own batch, when there is one. When the delete
    /// fails the record stays known: with no journal, the next commit deletes it in its batch.
    private func deleteCheckpointRecord() {
        if checkpointRecordPresent, let checkpointSpace, (try? store.delete(forKey: Self.checkpointKey, space: checkpointSpace)) != nil {
            checkpointRecordPresent = false
        }
    }

    /// A store that encrypts keeps no checkpoint: the file's entries are indexed values as
    /// they are (FORMAT.md "DAO index checkpoint"), and nothing of an encrypting store reaches
    /// the disk in plaintext outside its records. Deletes the file, the record and its journal
    /// records (one written before the store got its key, or before a rekey added one), not on
    /// a read-only store; a failure leaves them for the next try (attach never uses them here).
    private func dropCheckpointOfEncryptingStore() {
        checkpointJournal = nil
        checkpointCurrent = false
        guard !store.options.readOnly else { return }
        try? Directory.remove(store.directory.path + "/" + IndexCheckpointFile.name)
        guard let checkpointSpace, let journal = try? store.keys(space: checkpointSpace, prefix: [CheckpointJournal.keyPrefix]) else { return }
        var batch = LogStore.WriteBatch()
        for key in journal { batch.delete(forKey: key, space: checkpointSpace) }
        if checkpointRecordPresent { batch.delete(forKey: Self.checkpointKey, space: checkpointSpace) }
        if batch.count > 0, (try? store.write(batch)) != nil { checkpointRecordPresent = false }
    }

    /// Points every table's rowid order and indexes at the mapped file: nothing is copied, and
    /// what the tables held in the heap before is released.
    private func serve(_ decoded: MappedCheckpoint, _ bySpace: [LogStore.KeySpace: TableState]) {
        for part in decoded.tables {
            guard let table = bySpace[part.space] else { continue }
            table.rowids = SortedChunks(mapped: decoded.blocks, offset: part.rowidsOffset, count: part.rowidCount,
                                        firstBlock: part.firstBlock, perBlock: IndexCheckpointFile.rowidsPerBlock)
            for (i, index) in part.indexes.enumerated() {
                table.indexes[i].entries = KeyChunks(mapped: decoded.blocks, arenaOffset: index.arenaOffset, arenaLength: index.arenaLength,
                                                     endsOffset: index.endsOffset, count: index.count, firstBlock: index.firstBlock,
                                                     perBlock: IndexCheckpointFile.entriesPerBlock)
            }
        }
        servedBlocks = decoded.blocks
    }

    /// Whether a block of the checkpoint the tables are served from failed its check when a
    /// statement touched it (`CheckpointBlocks`). O(1).
    var indexDamaged: Bool { servedBlocks?.isDamaged == true }

    /// After a damaged block was found: the checkpoint file and its record go (the next attach
    /// must not trust them; nothing on a read-only store), and every table's rowid order and
    /// indexes are rebuilt from the rows as the open transaction sees them (the store's records,
    /// then its pending rows), so no chunk reads from the damaged file any more. Says so in
    /// `indexReport`. Caller holds the statement lock; a failed statement's changes are rolled
    /// back before.
    /// - Throws: `StoreError` when a row cannot be read or does not decode (the store itself is
    ///   damaged then).
    func rebuildAfterIndexDamage() throws {
        let damage = servedBlocks?.damage ?? "\(IndexCheckpointFile.name): a block failed its check"
        servedBlocks = nil
        checkpointCurrent = false
        if !store.options.readOnly {
            try? Directory.remove(store.directory.path + "/" + IndexCheckpointFile.name)
            deleteCheckpointRecord()
        }
        checkpointJournal = nil
        var loaders: [LogStore.KeySpace: TableLoader] = [:]
        for table in tables.values where !table.isTransient { loaders[table.space] = TableLoader(table: table) }
        try loadRows(into: loaders)
        indexReport.append("\(damage): indexes rebuilt from the rows")
    }

    /// After a checkpoint was written: serves the tables from the new file, so the changes
    /// they held in the heap since the last checkpoint (chunks copied or added) are merged into
    /// the file and released. The file was just written from these tables; only its layout is
    /// read again. Leaves the tables as they are when the file cannot be mapped.
    private func serveWrittenCheckpoint(path: String, ordered: [TableState]) {
        guard let file = try? MappedFile(path: path),
              let decoded = try? IndexCheckpointFile.decode(file),
              decoded.tables.count == ordered.count else { return }
        var bySpace: [LogStore.KeySpace: TableState] = [:]
        for table in ordered { bySpace[table.space] = table }
        serve(decoded, bySpace)
    }
}

/// A mapped index checkpoint file whose layout was checked: the file, where each table's parts
/// are in it, and its blocks (checked when first touched).
struct MappedCheckpoint {
    let file: MappedFile
    let stamp: UInt64
    let tables: [IndexCheckpointFile.Table]
    let blocks: CheckpointBlocks
    /// Whether the store's record is version 3: the journal records of the stamp apply.
    var journaled = false
}
