import Foundation
import LogStore

/// A table's rows changed and not yet written to the store (`TableState.overlay`): for each
/// changed rowid, its new bytes or a delete.
///
/// The bytes go to an append-only arena, each entry `rowid (8 bytes) | length (4) | bytes`;
/// the map from rowid to its entry (`RowSlots`) is all that grows per row (16 to 32 bytes). The
/// arena is in memory up to `memoryBudget`, then goes on in a scratch file in the store's
/// directory (`dao-pending.tmp`, unlinked the moment it is created: no name while written, no
/// reader, FORMAT.md "Directory layout"), so that a transaction of millions of rows holds its
/// map in the heap, not its rows. A store with a default key never spills: its rows must not
/// reach the disk in plaintext outside its records (`spillPath` nil). A scratch file that
/// cannot be created or written leaves the rest in memory: spilling saves memory, it never
/// fails a statement.
///
/// Entries are never changed or removed until `removeAll`: a slot taken before a later write
/// (an undo entry's previous state) stays readable.
final class PendingRows: @unchecked Sendable {
    /// Where a row's entry starts in the arena, or `deleted`.
    typealias Slot = UInt64
    static let deleted: Slot = .max

    /// Arena bytes kept in memory before it goes on in the scratch file (a variable so that
    /// tests can make small transactions spill).
    @exclusivity(unchecked) var memoryBudget = 8 << 20
    /// Bytes gathered before one write to the scratch file (and read at once when scanning).
    static let fileChunk = 1 << 20
    static let entryHeader = 12
    /// The scratch file's name in the store's directory.
    static let fileName = "dao-pending.tmp"

    /// Each changed rowid's entry. (Exclusivity unchecked: tables are touched only under the
    /// database's statement lock.)
    @exclusivity(unchecked) var slots = RowSlots()
    /// The scratch file to spill to, or nil to keep every row in memory.
    @exclusivity(unchecked) var spillPath: String?

    /// Arena offsets `[0, memory.count)`; frozen once the file is started.
    @exclusivity(unchecked) private var memory: [UInt8] = []
    @exclusivity(unchecked) private var file: SystemFile?
    /// Bytes written to the file; they are arena offsets `[memory.count, memory.count + fileLength)`.
    @exclusivity(unchecked) private var fileLength = 0
    /// Entries after the file's bytes, not yet written to it.
    @exclusivity(unchecked) private var tail: [UInt8] = []
    /// Whether a write to the scratch file failed (the rest then stays in `tail`).
    @exclusivity(unchecked) private var spillFailed = false
    /// A spilled entry read back (`withBytes`), reused from one read to the next.
    @exclusivity(unchecked) private var readBuffer: [UInt8] = []

    init(spillPath: String? = nil) {
        self.spillPath = spillPath
    }

    var isEmpty: Bool { slots.isEmpty }
    var count: Int { slots.count }

    /// The slot of `rowid`: nil when it is not changed, `deleted`, or its entry.
    subscript(rowid: Int64) -> Slot? {
        get { slots[rowid] }
        set { slots[rowid] = newValue }
    }

    /// Records `bytes` as the new row `rowid`.
    func set(_ rowid: Int64, bytes: [UInt8]) {
        slots[rowid] = append(rowid) { $0.append(contentsOf: bytes) }
    }

    /// Records the bytes `write` appends to the arena as the new row `rowid` (encoded in place:
    /// no array of its own).
    func set(_ rowid: Int64, writing write: (inout [UInt8]) -> Void) {
        slots[rowid] = append(rowid, write)
    }

    /// Records that row `rowid` is deleted.
    func setDeleted(_ rowid: Int64) {
        slots[rowid] = Self.deleted
    }

    /// Forgets every change (after a commit or a rollback); the scratch file goes with them.
    func removeAll(keepingCapacity: Bool) {
        slots.removeAll(keepingCapacity: keepingCapacity)
        memory.removeAll(keepingCapacity: keepingCapacity && memory.count <= Self.fileChunk)
        tail = []
        readBuffer = []
        file = nil
        fileLength = 0
        spillFailed = false
    }

    /// Whether entries go to the scratch file.
    var isSpilling: Bool { file != nil }

    /// Bytes of row entries in the heap (memory part, unwritten tail) and in the scratch file.
    var arenaBytes: (heap: Int, file: Int) { (memory.count + tail.count, fileLength) }

    private func append(_ rowid: Int64, _ write: (inout [UInt8]) -> Void) -> Slot {
        if file == nil, spillPath != nil, !spillFailed, memory.count >= memoryBudget {
            startSpilling()
        }
        if file == nil && tail.isEmpty {
            let offset = memory.count
            Self.appendEntry(rowid, write, to: &memory)
            return Slot(offset)
        }
        let offset = memory.count + fileLength + tail.count
        Self.appendEntry(rowid, write, to: &tail)
        if tail.count >= Self.fileChunk && !spillFailed { flushTail() }
        return Slot(offset)
    }

    private static func appendEntry(_ rowid: Int64, _ write: (inout [UInt8]) -> Void, to buffer: inout [UInt8]) {
        let start = buffer.count
        // Byte by byte: appending a buffer or an array literal went through the generic
        // append(contentsOf:) and an allocation (~900 instructions a row).
        let bits = UInt64(bitPattern: rowid)
        for shift in stride(from: 0, to: 64, by: 8) { buffer.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        for _ in 0..<4 { buffer.append(0) }
        write(&buffer)
        let length = UInt32(truncatingIfNeeded: buffer.count - start - entryHeader)
        buffer.withUnsafeMutableBytes { $0.storeBytes(of: length.littleEndian, toByteOffset: start + 8, as: UInt32.self) }
    }

    /// Creates and unlinks the scratch file; on failure rows stay in memory.
    private func startSpilling() {
        guard let spillPath else { spillFailed = true; return }
        do {
            let created = try SystemFile(path: spillPath, flags: O_RDWR | O_CREAT | O_TRUNC, mode: 0o600)
            try Directory.remove(spillPath)
            file = created
            tail.reserveCapacity(Self.fileChunk + Self.entryHeader)
        } catch {
            spillFailed = true
        }
    }

    private func flushTail() {
        guard let file else { return }
        do {
            try tail.withUnsafeBytes { try file.write($0, at: fileLength) }
            fileLength += tail.count
            tail.removeAll(keepingCapacity: true)
        } catch {
            spillFailed = true   // the tail keeps growing in memory from here
        }
    }

    /// Calls `body` with the row bytes of entry `slot` (not `deleted`).
    /// - Throws: `StoreError.io` when the scratch file cannot be read back.
    @inline(__always)
    func withBytes<Result>(_ slot: Slot, _ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result {
        let offset = Int(slot)
        if offset < memory.count { return try Self.entryBytes(memory, at: offset, body) }
        let tailStart = memory.count + fileLength
        if offset >= tailStart { return try Self.entryBytes(tail, at: offset - tailStart, body) }
        guard let file else { throw StoreError.corrupt("DAO pending rows: entry \(offset) past the arena") }
        var header = [UInt8](repeating: 0, count: Self.entryHeader)
        try header.withUnsafeMutableBytes { try file.read(into: $0, at: offset - memory.count) }
        let length = Int(header.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt32.self)) })
        if readBuffer.count < length { readBuffer = [UInt8](repeating: 0, count: max(length, 256)) }
        return try readBuffer.withUnsafeMutableBytes { buffer in
            let bytes = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<length])
            try file.read(into: bytes, at: offset - memory.count + Self.entryHeader)
            return try body(UnsafeRawBufferPointer(bytes))
        }
    }

    @inline(__always)
    private static func entryBytes<Result>(_ buffer: [UInt8], at offset: Int, _ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result {
        try buffer.withUnsafeBytes { raw in
            let length = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)))
            return try body(UnsafeRawBufferPointer(rebasing: raw[(offset + entryHeader)..<(offset + entryHeader + length)]))
        }
    }

    // MARK: Walking every change

    /// Where a walk over the changes is: the deletes (in map order), then the arena's live
    /// entries in arena order (the scratch file read sequentially, a chunk at a time).
    struct Cursor {
        var deletes = RowSlots.Position()
        var offset = 0
        /// Scratch-file bytes read ahead: arena offsets `[chunkStart, chunkStart + chunk.count)`.
        var chunk: [UInt8] = []
        var chunkStart = 0
    }

    /// Calls `body` with every change, as walking with `next` does: the arena's memory part in
    /// one loop (a small transaction's whole walk, at every one-row statement's commit), then,
    /// after a spill, the cursor's walk over the rest.
    /// - Throws: `StoreError.io` when the scratch file cannot be read back; what `body` throws.
    func forEachChange(_ body: (Int64, UnsafeRawBufferPointer?) throws -> Void) throws {
        var deletes = RowSlots.Position()
        while let rowid = slots.nextDeleted(after: &deletes) { try body(rowid, nil) }
        try memory.withUnsafeBytes { raw in
            var at = 0
            while at + Self.entryHeader <= raw.count {
                let rowid = Int64(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt64.self)))
                let length = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: at + 8, as: UInt32.self)))
                let end = at + Self.entryHeader + length
                // An entry is live when its row's slot still points at it.
                if slots[rowid] == Slot(at) { try body(rowid, UnsafeRawBufferPointer(rebasing: raw[(at + Self.entryHeader)..<end])) }
                at = end
            }
        }
        guard fileLength > 0 || !tail.isEmpty else { return }
        var cursor = Cursor()
        cursor.deletes = deletes
        cursor.offset = memory.count
        while try next(&cursor, body) {}
    }

    /// Calls `body` with the next change after `cursor` (bytes nil for a delete); false when
    /// there is none left. The bytes are valid during the call only.
    /// - Throws: `StoreError.io` when the scratch file cannot be read back; what `body` throws.
    func next(_ cursor: inout Cursor, _ body: (Int64, UnsafeRawBufferPointer?) throws -> Void) throws -> Bool {
        if let rowid = slots.nextDeleted(after: &cursor.deletes) {
            try body(rowid, nil)
            return true
        }
        let end = memory.count + fileLength + tail.count
        while cursor.offset < end {
            let offset = cursor.offset
            var length = 0
            let found: Bool = try withEntry(at: offset, &cursor) { rowid, bytes in
                length = Self.entryHeader + bytes.count
                // An entry is live when its row's slot still points at it.
                guard slots[rowid] == Slot(offset) else { return false }
                try body(rowid, bytes)
                return true
            }
            cursor.offset = offset + length
            if found { return true }
        }
        return false
    }

    /// Calls `body` with the entry at `offset` (scratch-file entries through the cursor's chunk).
    private func withEntry(at offset: Int, _ cursor: inout Cursor, _ body: (Int64, UnsafeRawBufferPointer) throws -> Bool) throws -> Bool {
        func decode(_ raw: UnsafeRawBufferPointer, _ at: Int) throws -> Bool {
            let rowid = Int64(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt64.self)))
            let length = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: at + 8, as: UInt32.self)))
            return try body(rowid, UnsafeRawBufferPointer(rebasing: raw[(at + Self.entryHeader)..<(at + Self.entryHeader + length)]))
        }
        if offset < memory.count { return try memory.withUnsafeBytes { try decode($0, offset) } }
        let tailStart = memory.count + fileLength
        if offset >= tailStart { return try tail.withUnsafeBytes { try decode($0, offset - tailStart) } }
        guard let file else { throw StoreError.corrupt("DAO pending rows: entry \(offset) past the arena") }
        // Read ahead from the scratch file when the entry is not whole in the chunk.
        func holds(_ cursor: Cursor) -> Bool {
            let at = offset - cursor.chunkStart
            guard at >= 0, at + Self.entryHeader <= cursor.chunk.count else { return false }
            let length = cursor.chunk.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: at + 8, as: UInt32.self))) }
            return at + Self.entryHeader + length <= cursor.chunk.count
        }
        if !holds(cursor) {
            var header = [UInt8](repeating: 0, count: Self.entryHeader)
            try header.withUnsafeMutableBytes { try file.read(into: $0, at: offset - memory.count) }
            let length = header.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt32.self))) }
            let count = min(tailStart - offset, max(Self.fileChunk, Self.entryHeader + length))
            if cursor.chunk.count != count { cursor.chunk = [UInt8](repeating: 0, count: count) }
            try cursor.chunk.withUnsafeMutableBytes { try file.read(into: $0, at: offset - memory.count) }
            cursor.chunkStart = offset
        }
        return try cursor.chunk.withUnsafeBytes { try decode($0, offset - cursor.chunkStart) }
    }
}
