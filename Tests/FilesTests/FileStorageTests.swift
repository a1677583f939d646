import Caches
import Files
import Foundation
import LogStore
import Preferences
import XCTest

final class FileStorageTests: FilesTestCase {
    func testNamesThatLeaveTheFolderAreRefusedWithATypedError() throws {
        let storage = try center.fileStorage()
        for name in ["", "/etc/passwd", "../x", "a/../../b", "a//b", "./a", "a/.", "x.ustmp", "a\u{0}b", "a/.."] {
            XCTAssertThrowsError(try storage.write(Data("x".utf8), to: name), name) { error in
                guard case FileStorageError.invalidName(let given, _) = error else { return XCTFail("\(name): \(error)") }
                XCTAssertEqual(given, name)
            }
            XCTAssertThrowsError(try storage.exists(name), name)
        }
        XCTAssertEqual(try storage.list(), [])
        try storage.write(Data("ok".utf8), to: "a/b/c..d.txt")
        XCTAssertEqual(try storage.list(), ["a/b/c..d.txt"])
    }

    func testCreateExistsSizeListRenameDelete() throws {
        let storage = try center.fileStorage(.external(external))
        for encryption in [FileEncryption.none, .storageKey] {
            let name = encryption.isEncrypted ? "enc/one.bin" : "plain/one.bin"
            XCTAssertFalse(try storage.exists(name))
            XCTAssertTrue(try storage.create(name, encryption: encryption))
            XCTAssertFalse(try storage.create(name, encryption: encryption), "create of an existing file")
            XCTAssertEqual(try storage.size(of: name, encryption: encryption), 0)
            XCTAssertEqual(try storage.data(of: name, encryption: encryption), Data())
            let bytes = testBytes(150_000)
            try storage.write(bytes, to: name, encryption: encryption)
            XCTAssertEqual(try storage.size(of: name, encryption: encryption), 150_000)
            XCTAssertEqual(try storage.data(of: name, encryption: encryption), Data(bytes))
            try storage.rename(name, to: name + ".moved")
            XCTAssertFalse(try storage.exists(name))
            XCTAssertEqual(try storage.data(of: name + ".moved", encryption: encryption), Data(bytes))
            XCTAssertThrowsError(try storage.rename(name, to: "x")) { XCTAssertEqual($0 as? FileStorageError, .notFound(name)) }
            try storage.create("other", encryption: encryption)
            XCTAssertThrowsError(try storage.rename("other", to: name + ".moved")) {
                XCTAssertEqual($0 as? FileStorageError, .alreadyExists(name + ".moved"))
            }
            XCTAssertTrue(try storage.delete("other"))
            XCTAssertFalse(try storage.delete("other"))
            XCTAssertThrowsError(try storage.reader("other", encryption: encryption)) { XCTAssertEqual($0 as? FileStorageError, .notFound("other")) }
        }
        XCTAssertEqual(try storage.list(), ["enc/one.bin.moved", "plain/one.bin.moved"])
        XCTAssertEqual(try storage.list(under: "enc"), ["enc/one.bin.moved"])
        XCTAssertTrue(try storage.delete("enc"))
        XCTAssertEqual(try storage.list(), ["plain/one.bin.moved"])
    }

    func testStringsInAnEncoding() throws {
        let storage = try center.fileStorage()
        let text = "Grüße, 世界"
        for encryption in [FileEncryption.none, .storageKey] {
            try storage.write(text, to: "t.txt", encoding: .utf16, encryption: encryption)
            XCTAssertEqual(try storage.string(of: "t.txt", encoding: .utf16, encryption: encryption), text)
            XCTAssertThrowsError(try storage.write(text, to: "t.txt", encoding: .ascii, encryption: encryption))
            XCTAssertEqual(try storage.string(of: "t.txt", encoding: .utf16, encryption: encryption), text, "a failed write keeps the file")
        }
    }

    func testReaderSeeksAndReadsAnyRange() throws {
        let options = FileStorage.Options(key: [UInt8](repeating: 3, count: 32), segmentSize: 1000)
        let storage = try FileStorage(folder: external, options: options)
        let bytes = testBytes(25_123)
        for encryption in [FileEncryption.none, .storageKey] {
            try storage.write(bytes, to: "r", encryption: encryption)
            let reader = try storage.reader("r", encryption: encryption)
            XCTAssertEqual(reader.size, Int64(bytes.count))
            var generator = SystemRandomNumberGenerator()
            for round in 0..<300 {
                // Every other read starts on a segment boundary and covers whole segments.
                let aligned = round % 2 == 0
                let offset = aligned ? Int.random(in: 0...25, using: &generator) * 1000 : Int.random(in: 0...bytes.count, using: &generator)
                let count = aligned ? Int.random(in: 1...5, using: &generator) * 1000 : Int.random(in: 0...5000, using: &generator)
                try reader.seek(to: Int64(offset))
                let read = try reader.read(upTo: count)
                XCTAssertEqual(read, Data(bytes[offset..<min(bytes.count, offset + count)]), "offset \(offset) count \(count)")
                XCTAssertEqual(reader.offset, Int64(offset + read.count))
            }
            try reader.seek(to: 0)
            var collected = Data()
            while true {
                let chunk = try reader.read(upTo: 777)
                if chunk.isEmpty { break }
                collected += chunk
            }
            XCTAssertEqual(collected, Data(bytes))
            XCTAssertThrowsError(try reader.seek(to: Int64(bytes.count + 1)))
            reader.close()
            XCTAssertThrowsError(try reader.read(upTo: 1)) { XCTAssertEqual($0 as? FileStorageError, .closed("r")) }
        }
    }

    func testAsyncChunks() async throws {
        let storage = try center.fileStorage()
        let bytes = testBytes(300_001)
        for encryption in [FileEncryption.none, .storageKey] {
            try storage.write(bytes, to: "c", encryption: encryption)
            var collected = Data()
            var sizes: [Int] = []
            for try await chunk in try storage.chunks(of: "c", encryption: encryption, chunkSize: 100_000) {
                collected += chunk
                sizes.append(chunk.count)
            }
            XCTAssertEqual(collected, Data(bytes))
            XCTAssertEqual(sizes, [100_000, 100_000, 100_000, 1])
        }
        var failed = false
        do { for try await _ in try storage.chunks(of: "missing") {} } catch { failed = error as? FileStorageError == .notFound("missing") }
        XCTAssertTrue(failed)
    }

    func testReplacementIsAtomicAndDiscardKeepsTheOldFile() throws {
        let storage = try center.fileStorage()
        for encryption in [FileEncryption.none, .storageKey] {
            try storage.write(Data("old".utf8), to: "f", encryption: encryption)
            let writer = try storage.writer("f", encryption: encryption)
            try writer.write(Data(testBytes(500_000)))
            XCTAssertEqual(try storage.string(of: "f", encryption: encryption), "old", "the old file stays until close")
            XCTAssertEqual(try storage.list(), ["f"], "the temporary file is not listed")
            writer.discard()
            XCTAssertEqual(try storage.string(of: "f", encryption: encryption), "old")
            XCTAssertThrowsError(try writer.write(Data([1])))
            do {
                let dropped = try storage.writer("f", encryption: encryption)
                try dropped.write(Data("never closed".utf8))
            }
            XCTAssertEqual(try storage.string(of: "f", encryption: encryption), "old", "a writer released without close changes nothing")
            let folderEntries = try FileManager.default.contentsOfDirectory(atPath: try storage.folder().path)
            XCTAssertEqual(folderEntries, ["f"], "no temporary file is left behind")
        }
    }

    /// A replacing close exchanges the new file with the old one and unlinks the old
    /// (RenameExchange): the new content is in place, no temporary file stays, a reader opened
    /// before keeps reading the old file, and a folder in the way is not swapped away.
    func testReplacingAnExistingFileLeavesOnlyTheNewOne() throws {
        let storage = try center.fileStorage()
        for encryption in [FileEncryption.none, .storageKey] {
            try storage.write(Data("old".utf8), to: "r/f", encryption: encryption)
            let before = try storage.reader("r/f", encryption: encryption)
            for round in 0..<3 { try storage.write(Data(testBytes(10_000 + round)), to: "r/f", encryption: encryption) }
            XCTAssertEqual(try storage.data(of: "r/f", encryption: encryption), Data(testBytes(10_002)))
            XCTAssertEqual(try before.readToEnd(), Data("old".utf8), "an open reader keeps the old file")
            before.close()
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: try storage.folder().appendingPathComponent("r").path), ["f"])
            try FileManager.default.createDirectory(at: try storage.url(of: "r/dir"), withIntermediateDirectories: true)
            XCTAssertThrowsError(try storage.write(Data("x".utf8), to: "r/dir", encryption: encryption))
            XCTAssertTrue(FileManager.default.fileExists(atPath: try storage.url(of: "r/dir").path))
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: try storage.folder().appendingPathComponent("r").path).sorted(), ["dir", "f"])
            try storage.delete("r")
        }
    }

    func testLeftoverTemporaryFilesAreRemovedAtTheNextOpen() throws {
        let storage = try center.fileStorage()
        try storage.write(Data("kept".utf8), to: "sub/kept")
        let leftover = try storage.folder().appendingPathComponent("sub/.kept.0123456789abcdef.ustmp")
        try Data("partial".utf8).write(to: leftover)
        let inFlight = try storage.writer("sub/new")
        try inFlight.write(Data("in flight".utf8))
        _ = try center.fileStorage()  // the next open
        XCTAssertFalse(FileManager.default.fileExists(atPath: leftover.path))
        try inFlight.close()  // a writer of this process keeps its temporary file
        XCTAssertEqual(try storage.list(), ["sub/kept", "sub/new"])
        XCTAssertEqual(try storage.string(of: "sub/new"), "in flight")
    }

    func testAppendModeForPlainFiles() throws {
        let storage = try center.fileStorage()
        try storage.write(Data("one,".utf8), to: "log.txt")
        let writer = try storage.writer("log.txt", append: true)
        try writer.write(Data("two,".utf8))
        try writer.close()
        let stream = try FileOutputStream(storage: storage, name: "log.txt", append: true)
        stream.open()
        XCTAssertEqual(stream.write(Array("three".utf8), maxLength: 5), 5)
        stream.close()
        XCTAssertEqual(try storage.string(of: "log.txt"), "one,two,three")
        XCTAssertThrowsError(try storage.writer("log.txt", encryption: .storageKey, append: true)) { error in
            guard case FileStorageError.unsupported = error else { return XCTFail("\(error)") }
        }
    }

    func testUserDependentFilesFollowTheCurrentUser() throws {
        let storage = try center.fileStorage(userDependent: true)
        XCTAssertThrowsError(try storage.write(Data("x".utf8), to: "f")) { error in
            guard case StoreError.noCurrentUser = error else { return XCTFail("\(error)") }
        }
        try center.setCurrentUserId("alice")
        try storage.write("alice's", to: "f", encryption: .storageKey)
        try center.setCurrentUserId("bob")
        XCTAssertFalse(try storage.exists("f"))
        try storage.write("bob's", to: "f", encryption: .storageKey)
        try center.setCurrentUserId("alice")
        XCTAssertEqual(try storage.string(of: "f", encryption: .storageKey), "alice's")
        XCTAssertEqual(try storage.folder().lastPathComponent, DataCenter.userFolderName("alice"))
        let common = try center.fileStorage()
        XCTAssertEqual(try common.list(), [])
    }

    func testCustomStorageHasItsOwnFiles() throws {
        let custom = try CustomStorage.named("docs")
        let storage = try custom.fileStorage()
        try storage.write("in custom", to: "note", encryption: .storageKey)
        XCTAssertEqual(try storage.folder().path, custom.path.appendingPathComponent("Files/common").path)
        XCTAssertEqual(try storage.string(of: "note", encryption: .storageKey), "in custom")
        // The DataCenter's key opens it from the DataCenter's external view of the same folder.
        let same = try center.fileStorage(.external(custom.path.appendingPathComponent("Files")))
        XCTAssertEqual(try same.string(of: "note", encryption: .storageKey), "in custom")
        try custom.close()
    }

    func testAGivenKeyAndAStorageWithoutKey() throws {
        let keyless = try FileStorage(folder: external)
        XCTAssertThrowsError(try keyless.write(Data([1]), to: "k", encryption: .storageKey)) { XCTAssertEqual($0 as? FileStorageError, .noKey) }
        let key = [UInt8](repeating: 9, count: 32)
        try keyless.write(Data("secret".utf8), to: "k", encryption: .key(key))
        XCTAssertEqual(try keyless.string(of: "k", encryption: .key(key)), "secret")
        XCTAssertThrowsError(try keyless.string(of: "k", encryption: .key([UInt8](repeating: 8, count: 32)))) {
            XCTAssertEqual($0 as? FileStorageError, .wrongKey(file: "k"))
        }
        XCTAssertThrowsError(try keyless.write(Data([1]), to: "k", encryption: .key([1, 2]))) { error in
            guard case FileStorageError.unsupported = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try FileStorage(folder: external, options: .init(segmentSize: 10)))
    }

    func testPurgeableFoldersAndTheCleanerTreatTheseFilesLikeAnyOther() async throws {
        let folder = try PurgeablePath.path("Library/Caches/Docs", type: .threeDays)
        let storage = try center.fileStorage(.external(folder))
        try storage.write(Data(testBytes(10_000)), to: "old.bin", encryption: .storageKey)
        try storage.write(Data(testBytes(10_000)), to: "new.bin", encryption: .storageKey)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-5 * 86_400)],
                                              ofItemAtPath: try storage.url(of: "old.bin").path)
        try PurgeablePath.sweep()
        XCTAssertEqual(try storage.list(), ["new.bin"])
        XCTAssertEqual(try storage.data(of: "new.bin", encryption: .storageKey), Data(testBytes(10_000)))

        try storage.write(Data("c".utf8), to: "x.cache")
        try storage.write(Data("k".utf8), to: "keep.bin")
        _ = await CacheCleaner.execute(tasks: [.paths(path: "Library/Caches/Docs/common", entries: ["*.cache"])]) { _, _ in }
        XCTAssertEqual(try storage.list(), ["keep.bin", "new.bin"])
        try PurgeablePath.resetAll()
        XCTAssertEqual(try storage.list(), [])
        try storage.write(Data("again".utf8), to: "after.bin", encryption: .storageKey)
        XCTAssertEqual(try storage.string(of: "after.bin", encryption: .storageKey), "again")
    }

    func testDataCryptMapsOntoFileEncryption() throws {
        XCTAssertEqual(try FileEncryption(.default), .storageKey)
        XCTAssertEqual(try FileEncryption(.plain), FileEncryption.none)
        let custom = DataCrypt(encrypt: { $0 }, decrypt: { $0 })
        XCTAssertThrowsError(try FileEncryption(custom)) { error in
            guard case FileStorageError.unsupported = error else { return XCTFail("\(error)") }
        }
        let storage = try center.fileStorage()
        try storage.write("by DataCrypt.default", to: "d", encryption: try FileEncryption(.default))
        XCTAssertEqual(try storage.string(of: "d", encryption: .storageKey), "by DataCrypt.default")
        XCTAssertNotEqual(try storage.data(of: "d"), Data("by DataCrypt.default".utf8))
    }
}
