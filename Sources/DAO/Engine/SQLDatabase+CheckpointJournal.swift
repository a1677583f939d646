import LogStore

/// The checkpoint journal (`CheckpointJournal`, FORMAT.md "DAO index checkpoint"): commits keep
/// the checkpoint usable by naming the rows they change, and attach replays what they named.
extension SQLDatabase {
    /// What a commit does about the index checkpoint's record.
    enum CheckpointChange {
        /// Nothing: there is no record, or the commit changes no row for the first time.
        case none
        /// Adds the record `journalWriter` holds to the commit's batch.
        case journal
        /// Deletes the record in the commit's batch (the next attach reads the rows): the
        /// commit changes the schema or drops a table, the journal would pass its limits, or an
        /// old row could not be read.
        case drop
    }

    /// Decides, before a commit's batch is built, what it does about the checkpoint record,
    /// writing into `journalWriter` each row it changes for the first time since the checkpoint
    /// with that row's stored version (which is the checkpoint's). Caller holds the statement
    /// lock.
    /// - Complexity: O(changed rows), plus a keyed read and the index entries of each row
    ///   changed for the first time.
    func checkpointChange(forCommitOf tables: [TableState]) -> CheckpointChange {
        guard checkpointRecordPresent else { return .none }
        guard let journal = checkpointJournal, !schemaChangePending, pendingClears.isEmpty else { return .drop }
        journalWriter.reset()
        do {
            for table in tables where !table.overlay.isEmpty {
                journalWriter.beginTable(space: table.space, indexCount: table.indexes.count)
                guard try journalFirstChanges(of: table, journal) else { return .drop }
                journalWriter.endTable()
            }
        } catch {
            // A row that cannot be read costs the checkpoint, not the commit.
            return .drop
        }
        return journalWriter.isEmpty ? .none : .journal
    }

    /// Adds to `journalWriter` the rows of `table`'s overlay not yet named, each with its
    /// entries as the store's version gives them (nil when the store has none); false when a
    /// stored row does not decode, or when the journal would pass its limits (then it stops
    /// reading rows at once: a transaction of millions of rows costs a walk of its overlay).
    private func journalFirstChanges(of table: TableState, _ journal: CheckpointJournal) throws -> Bool {
        var columns: IndexedColumns?
        var decoded = true
        // Looked up once a commit, not once a row.
        let named = journal.namedRows(in: table.space)
        try table.overlay.forEachChange { rowid, _ in
            guard decoded, named?[rowid] == nil else { return }
            guard journal.namedCount + journalWriter.rows.count < journalLimit,
                  journalWriter.bytes.count < CheckpointJournal.recordByteLimit else { decoded = false; return }
            // nil when the store has no version of the row (new since the checkpoint).
            let entries = try table.withStoredBytes(of: rowid, in: store) { bytes -> [[UInt8]] in
                var decoder = columns ?? IndexedColumns(table: table)
                defer { columns = decoder }
                guard decoder.decode(bytes, rowid: rowid) else { decoded = false; return [] }
                return decoder.entries(rowid: rowid, in: table)
            }
            journalWriter.addRow(rowid, entries: entries)
        }
        return decoded
    }

    /// Adds the commit's checkpoint change to its batch (`addCatalogRecords`).
    func addCheckpointChange(to batch: inout LogStore.WriteBatch) {
        guard let checkpointSpace else { return }
        switch pendingCheckpointChange {
        case .none:
            break
        case .journal:
            guard let journal = checkpointJournal else { return }
            batch.put(journalWriter.bytes, forKey: CheckpointJournal.key(stamp: journal.stamp, sequence: journal.nextSequence), space: checkpointSpace)
        case .drop:
            batch.delete(forKey: Self.checkpointKey, space: checkpointSpace)
        }
    }

    /// After the commit's batch was written: the journal knows the rows it named, or the
    /// record is gone.
    func checkpointChangeWritten() {
        switch pendingCheckpointChange {
        case .none:
            break
        case .journal:
            checkpointJournal?.add(journalWriter)
        case .drop:
            checkpointRecordPresent = false
            checkpointJournal = nil
        }
        pendingCheckpointChange = .none
    }

    /// Replays the journal of the checkpoint `stamp` over the tables just served from its file:
    /// takes out each named row's entries as the checkpoint has them, then puts in the named
    /// rows as the store has them now. False (with the reason in `indexReport`) when the journal
    /// does not fit the file (a record missing, malformed, naming an entry the file does not
    /// have, or a damaged block): the tables are then half changed and must be rebuilt from
    /// the rows.
    /// - Throws: `StoreError` from reading the store.
    /// - Complexity: O(named rows × (log n + indexes)), plus copying into the heap the chunks
    ///   they touch.
    func replayJournal(stamp: UInt64, bySpace: [LogStore.KeySpace: TableState]) throws -> Bool {
        var journal = CheckpointJournal(stamp: stamp)
        guard let space = checkpointSpace else { return false }
        let records = try store.entries(space: space, prefix: CheckpointJournal.keyPrefix(stamp: stamp))
        func refuse(_ reason: String) -> Bool {
            indexReport.append("\(IndexCheckpointFile.name) journal: \(reason): indexes rebuilt from the rows")
            return false
        }
        // 1. What the checkpoint has of each named row goes.
        var namedRows: [(space: LogStore.KeySpace, rowid: Int64)] = []
        // Every row named so far, this record's too (a row twice in one record is damage).
        var seen: [LogStore.KeySpace: Set<Int64>] = [:]
        for (sequence, entry) in records.enumerated() {
            guard entry.key == CheckpointJournal.key(stamp: stamp, sequence: UInt64(sequence)) else {
                return refuse("record \(sequence) missing")
            }
            let record: JournalRecord
            do { record = try JournalRecord.decode(entry.value) } catch { return refuse("record \(sequence): \(error)") }
            for part in record.tables {
                guard let table = bySpace[part.space], part.indexCount == table.indexes.count else {
                    return refuse("record \(sequence) names a table the checkpoint does not have")
                }
                for row in part.rows {
                    guard seen[part.space, default: []].insert(row.rowid).inserted else {
                        return refuse("record \(sequence) names row \(row.rowid) again")
                    }
                    namedRows.append((part.space, row.rowid))
                    let position = table.rowids.lowerBound { $0 < row.rowid }
                    guard (table.rowids.element(at: position) == row.rowid) == (row.entries != nil) else {
                        return refuse("record \(sequence): row \(row.rowid) of \(table.name) is not in the checkpoint as named")
                    }
                    guard let entries = row.entries else { continue }
                    table.rowids.remove(at: position)
                    for (i, entry) in entries.enumerated() where !table.indexes[i].entries.remove(entry) {
                        return refuse("record \(sequence): an entry of row \(row.rowid) is not in index \(table.indexes[i].schema.name)")
                    }
                }
            }
            journal.add(record)
        }
        // 2. The named rows as they are now come in.
        var columnsBySpace: [LogStore.KeySpace: IndexedColumns] = [:]
        for row in namedRows {
            guard let table = bySpace[row.space] else { continue }
            var columns = columnsBySpace[row.space] ?? IndexedColumns(table: table)
            defer { columnsBySpace[row.space] = columns }
            let rowid = row.rowid
            var decoded = true
            _ = try table.withStoredBytes(of: rowid, in: store) { bytes in
                guard columns.decode(bytes, rowid: rowid) else { decoded = false; return }
                table.insertRowid(rowid)
                table.insertIntoIndexes(rowid: rowid, row: columns.values)
            }
            guard decoded else { throw StoreError.corrupt("DAO table \(table.name): row \(rowid) does not decode") }
        }
        if indexDamaged { return refuse(servedBlocks?.damage ?? "a block failed its check") }
        checkpointJournal = journal
        return true
    }
}
