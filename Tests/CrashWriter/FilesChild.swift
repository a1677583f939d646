import Files
import Foundation
import LogStore

/// The content of version `version` of file `name`. Must match `FilesCrashTests.content`.
func filesCrashContent(name: String, version: Int) -> [UInt8] {
    var bytes = Array("\(name)=\(version);".utf8)
    let length = (version &* 7919) % 150_000 + 1
    bytes.reserveCapacity(bytes.count + length)
    for i in 0..<length { bytes.append(UInt8(truncatingIfNeeded: i &* 31 &+ version)) }
    return bytes
}

/// `logstore-crash-writer files <dir> <first version> <crash|fsync>`: replaces the encrypted
/// file "doc" (odd versions) and the plain file "notes/plain.txt" (even versions) over and
/// over, each in several writes, printing `B <version> <name>` before and `A <version>` after
/// the writer's close returned; the parent kills it at a random moment. The key (0x5A x 32)
/// and segment size (4096) must match `FilesCrashTests`.
func runFilesChild(_ arguments: [String]) -> Never {
    guard arguments.count == 3, let first = Int(arguments[1]) else {
        fail("usage: logstore-crash-writer files <dir> <first version> <crash|fsync>")
    }
    let options = FileStorage.Options(key: [UInt8](repeating: 0x5A, count: 32),
                                      durability: arguments[2] == "fsync" ? .fsyncEachWrite : .processCrashSafe, segmentSize: 4096)
    do {
        let storage = try FileStorage(folder: URL(fileURLWithPath: arguments[0]), options: options)
        var version = first
        while true {
            let encrypted = version % 2 == 1
            let name = encrypted ? "doc" : "notes/plain.txt"
            emit("B \(version) \(name)")
            let content = filesCrashContent(name: name, version: version)
            let writer = try storage.writer(name, encryption: encrypted ? .storageKey : .none)
            var offset = 0
            while offset < content.count {
                let end = min(content.count, offset + 10_007)
                try writer.write(content[offset..<end])
                offset = end
            }
            try writer.close()
            emit("A \(version)")
            version += 1
        }
    } catch {
        fail("files: \(error)")
    }
}
