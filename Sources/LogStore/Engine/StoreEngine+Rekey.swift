import Foundation

extension StoreEngine {
    /// Re-encrypts every AES-GCM record under `newKey` and makes it the default key.
    ///
    /// Crash-safe at every point: before the first record is rewritten, a `rekey` record holding
    /// each key wrapped under the other is written, so a store reopened with either key reads
    /// every record (and finishes the rekey). Records are rewritten in atomic batches, each only
    /// if no newer write of its key happened meanwhile. At the end the rekey record is deleted,
    /// the old key id is marked retired, and a compaction removes the old ciphertexts.
    ///
    /// Throws only while the old key still opens the store (the rekey record lets it finish the
    /// rekey on reopen); once the old key is retired it returns, even if the final compaction
    /// fails (that failure is kept with the background errors).
    func rekey(to newKey: LogStore.Options.Encryption, progress: (@Sendable (Double) -> Void)?) throws {
        guard !options.readOnly else { throw StoreError.readOnly }
        guard newKey.key.count == AESGCM.keySize else { throw StoreError.wrongKey(keyID: newKey.keyID) }
        let newCheck = try KeyCheck.value(of: newKey.key)
        if let stored = try get(key: KeyCheck.recordKey(for: newKey.keyID), space: LogStore.engineSpace, crypt: nil), stored != newCheck {
            throw StoreError.wrongKey(keyID: newKey.keyID)
        }
        let current: (id: UInt32, cipher: AESGCM)? = try writeMutex.withLock {
            guard !isClosed else { throw StoreError.closed }
            return writeKeyID.flatMap { id in rw.withReadLock { ciphers[id] }.map { (id, $0) } }
        }
        var batch: [PendingRecord] = [metadata(KeyCheck.recordKey(for: newKey.keyID), newCheck)]
        if let current, current.id != newKey.keyID {
            let state = try RekeyState(oldKeyID: current.id, oldKey: current.cipher.key, newKeyID: newKey.keyID, newKey: newKey.key)
            batch.append(metadata(RekeyState.recordKey, state.encoded()))
        }
        try write(batch: batch)
        try install(newKey)
        try finishRekey(oldKeyID: current?.id, progress: progress)
    }

    /// Makes `key` readable and the key new records are sealed with.
    func install(_ key: LogStore.Options.Encryption) throws {
        let cipher = try AESGCM(key: key.key)
        writeMutex.withLock {
            rw.withWriteLock {
                ciphers[key.keyID] = cipher
                currentCipher = (key.keyID, cipher)
            }
            writeKeyID = key.keyID
        }
    }

    /// Rewrites every readable AES-GCM record not under the write key, then closes the rekey.
    func finishRekey(oldKeyID: UInt32?, progress: (@Sendable (Double) -> Void)?) throws {
        guard let target = writeMutex.withLock({ writeKeyID }) else { return }
        var total: Int?
        var done = 0
        while true {
            let candidates = try recordsToRekey(target: target)
            if total == nil { total = candidates.count }
            if candidates.isEmpty { break }
            for chunk in stride(from: 0, to: candidates.count, by: 256).map({ candidates[$0..<min($0 + 256, candidates.count)] }) {
                try rewriteIfUnchanged(Array(chunk))
                done += chunk.count
                progress?(min(0.99, Double(done) / Double(max(total ?? 1, 1))))
            }
        }
        var closing: [PendingRecord] = [PendingRecord(flags: .tombstone, space: LogStore.engineSpace, key: RekeyState.recordKey,
                                                      value: [], expiresAtMillis: nil)]
        if let oldKeyID, oldKeyID != target {
            var id = [UInt8]()
            LittleEndian.append32(target, to: &id)
            closing.append(metadata(RekeyState.retiredRecordKey(oldKeyID), id))
        }
        try write(batch: closing)
        // The rekey is committed: from here on only the new key opens the store, so a failure
        // below must not make the caller believe the old key still works. Old ciphertexts (and
        // the wrapped keys) are dead; compaction takes them off the disk, and if it fails now the
        // next compaction does (the failure is kept with the background errors).
        do {
            try compact(sealActive: true)
        } catch {
            writeMutex.withLock { backgroundErrors.append("compaction after rekey: \(error)") }
        }
        progress?(1)
    }

    private struct RekeyCandidate {
        var tag: UInt32
        var space: UInt32
        var location: RecordLocation
    }

    /// Live, unexpired AES-GCM records under a key the store holds other than `target`.
    /// - Throws: `corrupt` when the keydir is damaged (a record missed would lose its key).
    private func recordsToRekey(target: UInt32) throws -> [RekeyCandidate] {
        try rw.withReadLock {
            var found: [RekeyCandidate] = []
            let now = Clock.nowMillis()
            keydir.forEach { space, entry in
                guard let header = header(at: entry.location), header.flags.contains(.encrypted),
                      header.keyID != target, ciphers[header.keyID] != nil, !header.isExpired(nowMillis: now) else { return }
                found.append(RekeyCandidate(tag: entry.tag, space: space, location: entry.location))
            }
            guard !keydir.isDamaged else { throw indexDamagedError() }
            return found
        }
    }

    /// Re-encrypts the records at `candidates` under the write key, as one atomic batch of those
    /// whose key still points at the same record (a newer write already uses the new key).
    private func rewriteIfUnchanged(_ candidates: [RekeyCandidate]) throws {
        let written: UInt64? = try writeMutex.withLock {
            guard !isClosed else { throw StoreError.closed }
            var records: [PendingRecord] = []
            try rw.withReadLock {
                for candidate in candidates where findEntry(tag: candidate.tag, space: candidate.space, location: candidate.location) != nil {
                    guard let base = segments.base(of: candidate.location.segment),
                          let header = header(at: candidate.location) else { continue }
                    let offset = Int(candidate.location.offset)
                    let stored = try storedValue(base: base, offset: offset, header: header, segment: candidate.location.segment)
                    records.append(PendingRecord(
                        flags: header.flags.intersection([.compressed, .purgeable]).union(.encrypted),
                        space: header.space,
                        key: [UInt8](UnsafeRawBufferPointer(start: base + offset + header.keyOffset, count: header.keyLength)),
                        value: stored.bytes, expiresAtMillis: header.expiresAtMillis, rawLength: header.rawLength))
                }
            }
            return records.isEmpty ? nil : try records.withUnsafeBufferPointer { try appendLocked($0) }
        }
        if let written { try awaitDurability(written) }
    }

    /// A plain record in the engine's key space.
    func metadata(_ key: [UInt8], _ value: [UInt8]) -> PendingRecord {
        PendingRecord(flags: [], space: LogStore.engineSpace, key: key, value: value, expiresAtMillis: nil, crypt: .plain)
    }
}
