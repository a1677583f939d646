import Foundation
import LogStore
import XCTest

/// `ustore` against a store another opener holds.
final class LockingTests: UstoreTestCase {
    func testWriterInAnotherProcessMakesEveryCommandExitTwo() throws {
        let store = try makeStorePath()
        try ustoreOK(["put", store.path, "k", "v"])

        let holder = try LogStore(directory: store)
        for arguments in [["get", store.path, "k"], ["put", store.path, "k", "w"], ["delete", store.path, "k"],
                          ["keys", store.path], ["stats", store.path], ["dump", store.path],
                          ["verify", store.path], ["compact", store.path]] {
            let run = try ustore(arguments)
            XCTAssertEqual(run.status, 2, "\(arguments): \(run.stderr)")
            XCTAssertTrue(run.stdout.isEmpty, "\(arguments)")
            XCTAssertTrue(run.stderr.contains("locked"), "\(arguments): \(run.stderr)")
            XCTAssertEqual(run.stderr.split(separator: "\n").count, 1, "one-line message: \(run.stderr)")
        }
        try holder.close()

        // Nothing changed while it was held, and the store is usable again.
        XCTAssertEqual(try ustoreOK(["get", store.path, "k"]).stdoutText, "v")
    }

    func testReadOnlyOpenersShareTheStore() throws {
        let store = try makeStorePath()
        try ustoreOK(["put", store.path, "k", "v"])

        var options = LogStore.Options()
        options.readOnly = true
        let reader = try LogStore(directory: store, options: options)
        XCTAssertEqual(try ustoreOK(["get", store.path, "k"]).stdoutText, "v")
        XCTAssertEqual(try ustore(["verify", store.path]).status, 0)
        XCTAssertEqual(try ustore(["put", store.path, "k", "w"]).status, 2, "a writer needs the lock alone")
        try reader.close()

        try ustoreOK(["put", store.path, "k", "w"])
        XCTAssertEqual(try ustoreOK(["get", store.path, "k"]).stdoutText, "w")
    }
}
