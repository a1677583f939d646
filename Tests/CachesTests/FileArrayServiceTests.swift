import Foundation
import XCTest
@testable import Caches
@testable import Preferences
import LogStore

final class FileArrayServiceTests: CachesTestCase {
    private var storage: CustomStorage!

    override func setUpWithError() throws {
        try super.setUpWithError()
        storage = try CustomStorage.named("Files")
    }

    override func tearDownWithError() throws {
        try storage?.close()
        storage = nil
        try super.tearDownWithError()
    }

    private func bytes(_ count: Int, seed: UInt8 = 1) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
    }

    func testWriteReadAndQueries() async throws {
        let files = try storage.fileArrayService(name: "voice", userDependent: false, capacity: 0, crypted: false)
        let okA = await files.writeFile(bytes(10), name: "a.amr")
        let okB = await files.writeFile(Data(), name: "empty")
        XCTAssertTrue(okA && okB)
        let readA = await files.readFile("a.amr")
        XCTAssertEqual(readA, bytes(10))
        XCTAssertEqual(files.readFileSync("empty"), Data())
        let missing = await files.readFile("missing")
        XCTAssertNil(missing)
        XCTAssertTrue(files.fileExists("a.amr"))
        XCTAssertFalse(files.fileExists("missing"))
        XCTAssertEqual(files.allFileNames(), ["a.amr", "empty"])
        XCTAssertEqual(files.fileCount(), 2)
        _ = await files.writeFile(bytes(5, seed: 9), name: "a.amr")
        XCTAssertEqual(files.readFileSync("a.amr"), bytes(5, seed: 9), "overwrite replaces")
        XCTAssertEqual(files.fileCount(), 2)
    }

    func testCompletionFormsCallBackOnTheGivenQueue() throws {
        let queue = DispatchQueue(label: "callbacks")
        let marker = DispatchSpecificKey<Int>()
        queue.setSpecific(key: marker, value: 7)
        let files = try storage.fileArrayService(name: "cb", userDependent: false, capacity: 0, crypted: false, callbackQueue: queue)
        let done = expectation(description: "callbacks")
        done.expectedFulfillmentCount = 4
        files.writeFile(Data([1]), name: "x") { ok in
            XCTAssertTrue(ok)
            XCTAssertEqual(DispatchQueue.getSpecific(key: marker), 7)
            done.fulfill()
        }
        files.readFile("x") { data in
            XCTAssertEqual(data, Data([1]), "reads queue behind the writes called before")
            XCTAssertEqual(DispatchQueue.getSpecific(key: marker), 7)
            done.fulfill()
        }
        files.readFiles(like: "%") { result in
            XCTAssertEqual(result, ["x": Data([1])])
            done.fulfill()
        }
        files.renameFile("x", to: "y") { ok in
            XCTAssertTrue(ok)
            XCTAssertEqual(DispatchQueue.getSpecific(key: marker), 7)
            done.fulfill()
        }
        wait(for: [done], timeout: 10)
        XCTAssertEqual(files.allFileNames(), ["y"])
    }

    func testCapacityEvictsOldestWriteFirstOverwriteRenewsRenameKeeps() async throws {
        let files = try storage.fileArrayService(name: "ring", userDependent: false, capacity: 3, crypted: false)
        for name in ["a", "b", "c"] { _ = await files.writeFile(Data(name.utf8), name: name) }
        _ = await files.writeFile(Data("a2".utf8), name: "a")      // a is now the newest
        let renamed = await files.renameFile("b", to: "b-renamed")  // keeps b's age: the oldest
        XCTAssertTrue(renamed)
        _ = await files.writeFile(Data("d".utf8), name: "d")
        XCTAssertEqual(Set(files.allFileNames()), ["c", "a", "d"], "the renamed file kept its age and went first")
        XCTAssertEqual(files.fileCount(), 3, "evicted before the write completed")
        _ = await files.writeFile(Data("e".utf8), name: "e")
        XCTAssertEqual(files.allFileNames(), ["a", "d", "e"])
        XCTAssertEqual(files.readFileSync("a"), Data("a2".utf8))
        let renameMissing = await files.renameFile("nope", to: "x")
        XCTAssertFalse(renameMissing)
        let renameOnto = await files.renameFile("a", to: "e")
        XCTAssertTrue(renameOnto)
        XCTAssertEqual(files.allFileNames(), ["e", "d"], "e holds a's older age")
        XCTAssertEqual(files.readFileSync("e"), Data("a2".utf8), "renaming onto a name replaces it, content kept")
    }

    func testLikeReadsAndRemovals() async throws {
        let files = try storage.fileArrayService(name: "like", userDependent: false, capacity: 0, crypted: false)
        for name in ["chat_1.amr", "CHAT_2.amr", "chat-3.amr", "img.png"] { _ = await files.writeFile(Data(name.utf8), name: name) }
        let chats = await files.readFiles(like: "chat__.amr")
        XCTAssertEqual(Set(chats.keys), ["chat_1.amr", "CHAT_2.amr", "chat-3.amr"])
        XCTAssertEqual(chats["CHAT_2.amr"], Data("CHAT_2.amr".utf8))
        files.removeFiles(like: "%.AMR")
        XCTAssertEqual(files.allFileNames(), ["img.png"])
        files.removeFile("img.png")
        XCTAssertEqual(files.fileCount(), 0)
        _ = await files.writeFile(Data([1]), name: "z")
        files.removeAllFiles()
        XCTAssertEqual(files.fileCount(), 0)
        XCTAssertNil(files.readFileSync("z"))
    }

    func testLargeFilesInChunksCryptedAndPersistent() async throws {
        let size = 64 << 20 | 12_345   // past 64 MiB, ending in a partial chunk
        // Every 4 KiB starts with its offset, so a chunk out of place or cut short shows.
        var big = Data(repeating: 0xAB, count: size)
        big.withUnsafeMutableBytes { raw in
            for offset in stride(from: 0, to: size - 8, by: 4096) { raw.storeBytes(of: UInt64(offset), toByteOffset: offset, as: UInt64.self) }
        }
        let path = storage.path
        var files: FileArrayService? = try storage.fileArrayService(name: "big", userDependent: false, capacity: 0, crypted: true)
        let ok = await files?.writeFile(big, name: "movie")
        XCTAssertEqual(ok, true)
        let read = await files?.readFile("movie")
        XCTAssertEqual(read?.count, size)
        XCTAssertTrue(read == big)
        let store = try storage.logStore(userDependent: false)
        let space = try store.space(named: "filearray:big")
        XCTAssertEqual(try store.keys(space: space, prefix: [UInt8(ascii: "c")]).count, 65)
        var encrypted = 0
        try store.forEachRecord { record in
            if record.space == space, record.isLive, record.key.first == UInt8(ascii: "c"), record.flags & 0x10 != 0 { encrypted += 1 }
        }
        XCTAssertEqual(encrypted, 65, "every chunk of a crypted service is encrypted")
        files = nil
        try storage.close()
        storage = nil
        let reopened = try CustomStorage(path: path)
        storage = reopened
        let again = try reopened.fileArrayService(name: "big", userDependent: false, capacity: 0, crypted: true)
        XCTAssertTrue(again.readFileSync("movie") == big)
    }

    func testLargePlainFilesLiveBesideTheStoreAndLeftoversAreCleaned() async throws {
        let path = storage.path
        var files: FileArrayService? = try storage.fileArrayService(name: "external", userDependent: false, capacity: 2, crypted: false)
        let big = bytes(300_000, seed: 5)
        let ok = await files?.writeFile(big, name: "big")
        XCTAssertEqual(ok, true)
        _ = await files?.writeFile(bytes(100), name: "small")
        let store = try storage.logStore(userDependent: false)
        let space = try store.space(named: "filearray:external")
        let folder = path.appendingPathComponent("common.files", isDirectory: true).appendingPathComponent(String(format: "%08x", space))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), [String(format: "%016llx", UInt64(1))])
        XCTAssertEqual(try store.keys(space: space, prefix: [UInt8(ascii: "c")]).count, 1, "only the small file is chunked")
        XCTAssertTrue(files?.readFileSync("big") == big)
        let renamed = await files?.renameFile("big", to: "big2")
        XCTAssertEqual(renamed, true)
        XCTAssertTrue(files?.readFileSync("big2") == big, "a rename keeps the external file")
        // What a crash leaves: a temporary file and an unreferenced one.
        try Data([1]).write(to: folder.appendingPathComponent(String(format: "%016llx", UInt64(90)) + ".tmp"))
        try Data([1]).write(to: folder.appendingPathComponent(String(format: "%016llx", UInt64(91))))
        files = nil
        try storage.close()
        storage = try CustomStorage(path: path)
        let again = try storage.fileArrayService(name: "external", userDependent: false, capacity: 2, crypted: false)
        // The leftovers go after the store's next sync (its background syncer's, or this one).
        let reopenedStore = try storage.logStore(userDependent: false)
        try reopenedStore.sync()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), [String(format: "%016llx", UInt64(1))])
        XCTAssertTrue(again.readFileSync("big2") == big)
        _ = await again.writeFile(bytes(70_000), name: "third")   // evicts big2, the oldest
        XCTAssertFalse(again.fileExists("big2"))
        // Dropped files are unlinked after the store's next sync (the one that makes the batch
        // dropping them durable: FORMAT.md, "Attachments"), by the background syncer or here.
        try reopenedStore.sync()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), [String(format: "%016llx", UInt64(92))],
                       "the evicted file is unlinked; new ids pass every id seen on disk")
        again.removeAllFiles()
        try reopenedStore.sync()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), [])
    }

    func testCompressedServicesStoreZstdChunks() async throws {
        let files = try storage.fileArrayService(name: "zipped", userDependent: false, capacity: 0, crypted: false, compressed: true)
        XCTAssertTrue(files.compressed)
        // 2.5 MiB of text-like bytes (three chunks), then one of random bytes.
        let text = Data(String(repeating: "the quick brown fox jumps over the lazy dog. ", count: 60_000).utf8.prefix(5 << 19))
        var random = Data(count: 200_000)
        random.withUnsafeMutableBytes { raw in for i in 0..<raw.count { raw[i] = UInt8.random(in: 0...255) } }
        _ = await files.writeFile(text, name: "text")
        _ = await files.writeFile(random, name: "random")
        XCTAssertTrue(files.readFileSync("text") == text)
        XCTAssertTrue(files.readFileSync("random") == random)
        let store = try storage.logStore(userDependent: false)
        let space = try store.space(named: "filearray:zipped")
        let chunks = try store.entries(space: space, prefix: [UInt8(ascii: "c")])
        XCTAssertEqual(chunks.count, 4, "compressed services keep every file in chunks, large plain ones too")
        let textChunks = chunks.filter { readBigEndian($0.key, at: 1, width: 8) == 1 }
        XCTAssertEqual(textChunks.map { $0.value.first }, [1, 1, 1])
        XCTAssertLessThan(textChunks.reduce(0) { $0 + $1.value.count }, text.count / 20, "text compresses")
        let randomChunk = try XCTUnwrap(chunks.first { readBigEndian($0.key, at: 1, width: 8) == 2 })
        XCTAssertEqual(randomChunk.value.first, 0, "a chunk that does not shrink is kept raw")
        XCTAssertEqual(randomChunk.value.count, random.count + 1)
        // A damaged frame reads as nil, never as wrong bytes.
        var damaged = textChunks[0].value
        damaged[damaged.count / 2] ^= 0xFF
        try store.put(damaged, forKey: textChunks[0].key, space: space)
        XCTAssertNil(files.readFileSync("text"))
        let both = try storage.fileArrayService(name: "zipped-secret", userDependent: false, capacity: 0, crypted: true, compressed: true)
        _ = await both.writeFile(text, name: "text")
        XCTAssertTrue(both.readFileSync("text") == text)
    }

    func testAWriteCutShortLeavesNothingVisibleAndIsCleanedAtOpen() throws {
        let path = storage.path
        var files: FileArrayService? = try storage.fileArrayService(name: "crash", userDependent: false, capacity: 0, crypted: false)
        XCTAssertNotNil(files)
        // What a crash between the chunks and the manifest leaves: chunks of file id 40, no manifest.
        let store = try storage.logStore(userDependent: false)
        let space = try store.space(named: "filearray:crash")
        try store.put([1, 2, 3], forKey: FileArrayIndex.chunkKey(40, 0), space: space)
        files = nil
        try storage.close()
        storage = try CustomStorage(path: path)
        let reopened = try storage.fileArrayService(name: "crash", userDependent: false, capacity: 0, crypted: false)
        XCTAssertEqual(reopened.fileCount(), 0)
        let reopenedStore = try storage.logStore(userDependent: false)
        XCTAssertEqual(try reopenedStore.keys(space: space), [], "unreferenced chunks are deleted at load")
        XCTAssertTrue(reopened.writeNow(Data([9]), name: "next"))
        let chunkKeys = try reopenedStore.keys(space: space, prefix: [UInt8(ascii: "c")])
        XCTAssertEqual(chunkKeys, [FileArrayIndex.chunkKey(41, 0)], "file ids never reuse one seen in a chunk")
    }

    func testManifestLayoutMatchesFormatDocument() {
        let manifest = FileArrayIndex.Manifest(fileID: 0x0102, size: 5, writtenMillis: 7, chunkSize: 1 << 20)
        XCTAssertEqual(manifest.encoded, [1, 0, 2, 1, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 0])
        XCTAssertEqual(FileArrayIndex.Manifest(manifest.encoded), manifest)
        XCTAssertNil(FileArrayIndex.Manifest([2] + manifest.encoded.dropFirst()), "unknown version")
        XCTAssertNil(FileArrayIndex.Manifest([1, 3] + manifest.encoded.dropFirst(2)), "unknown storage kind")
        let external = FileArrayIndex.Manifest(kind: .external, fileID: 1, size: 1, writtenMillis: 1, chunkSize: 1 << 20)
        XCTAssertEqual(external.encoded[1], 1)
        XCTAssertEqual(external.chunkCount, 0)
        XCTAssertEqual(FileArrayIndex.chunkKey(0x0102, 3), [0x63, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 3])
    }

    func testUserDependentServiceFollowsTheUser() async throws {
        let files = try storage.fileArrayService(name: "mine", userDependent: true, capacity: 0, crypted: false)
        let noUser = await files.writeFile(Data([1]), name: "f")
        XCTAssertFalse(noUser, "no user: the write is refused")
        try center.setCurrentUserId("u1")
        _ = await files.writeFile(Data([1]), name: "f")
        XCTAssertEqual(files.fileCount(), 1)
        try center.setCurrentUserId("u2")
        XCTAssertEqual(files.fileCount(), 0)
        try center.setCurrentUserId("u1")
        XCTAssertEqual(files.readFileSync("f"), Data([1]))
        // Queued writes go to the user current at the call, and finish before that user's store closes.
        for i in 0..<50 { files.writeFile(Data([UInt8(i)]), name: "q\(i)", completion: nil) }
        try center.setCurrentUserId("u2")
        XCTAssertEqual(files.fileCount(), 0)
        try center.setCurrentUserId("u1")
        XCTAssertEqual(files.fileCount(), 51)
        XCTAssertEqual(files.readFileSync("q49"), Data([49]))
    }
}
