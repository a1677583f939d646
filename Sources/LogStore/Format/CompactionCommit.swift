import Foundation
import CChecksum

/// The compaction commit file (`COMPACTION`, FORMAT.md "Compaction commit"): written once a
/// compaction's output segments are on stable storage, it is the point after which the
/// compaction counts as done. It lists the output segment ids (still named `*.seg.tmp` until
/// renamed) and the input segment ids to delete; recovery finishes both lists if a crash
/// interrupts them, then deletes the file.
struct CompactionCommit: Equatable {
    static let magic: [UInt8] = Array("UCMP".utf8)
    static let version: UInt16 = 1

    var newSegments: [UInt32]
    var oldSegments: [UInt32]

    func encoded() -> [UInt8] {
        var bytes = Self.magic
        LittleEndian.append16(Self.version, to: &bytes)
        LittleEndian.append16(0, to: &bytes)
        LittleEndian.append32(UInt32(newSegments.count), to: &bytes)
        LittleEndian.append32(UInt32(oldSegments.count), to: &bytes)
        for id in newSegments + oldSegments { LittleEndian.append32(id, to: &bytes) }
        let crc = bytes.withUnsafeBytes { cs_crc32c_extend(0, $0.baseAddress, $0.count) }
        LittleEndian.append32(crc, to: &bytes)
        return bytes
    }

    static func decode(_ bytes: [UInt8], path: String) throws -> CompactionCommit {
        try bytes.withUnsafeBytes { (raw) throws -> CompactionCommit in
            guard let base = raw.baseAddress, raw.count >= 20, raw.prefix(4).elementsEqual(magic) else {
                throw StoreError.corrupt("\(path): not a compaction commit file")
            }
            let end = raw.count - 4
            guard LittleEndian.load32(base, end) == cs_crc32c_extend(0, base, end) else {
                throw StoreError.corrupt("\(path): checksum mismatch at offset \(end)")
            }
            guard LittleEndian.load16(base, 4) == version else { throw StoreError.corrupt("\(path): unsupported version") }
            let newCount = Int(LittleEndian.load32(base, 8))
            let oldCount = Int(LittleEndian.load32(base, 12))
            guard newCount <= end / 4, oldCount <= end / 4, 16 + (newCount + oldCount) * 4 == end else {
                throw StoreError.corrupt("\(path): id counts do not match the file length")
            }
            let ids = (0..<(newCount + oldCount)).map { LittleEndian.load32(base, 16 + $0 * 4) }
            return CompactionCommit(newSegments: Array(ids[..<newCount]), oldSegments: Array(ids[newCount...]))
        }
    }
}

/// Writes a small file atomically: to `name.tmp`, fsync, rename over `name`, fsync the directory.
func writeFileAtomically(_ bytes: [UInt8], directory: String, name: String) throws {
    try writeFileAtomically(directory: directory, name: name) { try $0.write(bytes, at: 0) }
}

/// `writeFileAtomically` with the contents written by `write` into the empty temporary file.
func writeFileAtomically(directory: String, name: String, _ write: (SystemFile) throws -> Void) throws {
    let temporary = directory + "/" + name + StoreFileName.temporarySuffix
    do {
        let file = try SystemFile(path: temporary, flags: O_WRONLY | O_CREAT | O_TRUNC)
        try write(file)
        try file.syncData()
    }
    try Directory.rename(temporary, directory + "/" + name)
    try Directory.sync(directory)
}
