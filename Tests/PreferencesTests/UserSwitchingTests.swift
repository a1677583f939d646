import Foundation
import XCTest
@testable import Preferences
import LogStore

/// API.md "User switching": the events of every case, in order, on NotificationCenter and on
/// `events`, and which stores are open when each is posted.
final class UserSwitchingTests: PreferencesTestCase {
    private var observers: [NSObjectProtocol] = []
    private let log = Recorder<String>()

    override func setUpWithError() throws {
        try super.setUpWithError()
        let log = self.log
        let names: [Notification.Name] = [.dataCenterWillLastUserResign, .dataCenterDidUserUpdate, .dataCenterDidUserRenew]
        for name in names {
            observers.append(NotificationCenter.default.addObserver(forName: name, object: center, queue: nil) { note in
                let center = note.object as? DataCenter
                let user = center?.currentUserId ?? "nil"
                // Is the store of the user named in the event (or the current one) still open?
                var detail = ""
                if let resigning = note.userInfo?["userId"] as? String {
                    let open = (try? center?.stores.user(resigning).set(1, forKey: "probe", business: "t")) != nil
                    detail = " \(resigning) open=\(open)"
                }
                if let switched = note.userInfo?["switched"] as? Bool { detail = " switched=\(switched)" }
                log.append("\(name.rawValue.replacingOccurrences(of: "UnifiedStorage.DataCenter", with: "")) current=\(user)\(detail)")
            })
        }
    }

    override func tearDownWithError() throws {
        for observer in observers { NotificationCenter.default.removeObserver(observer) }
        try super.tearDownWithError()
    }

    func testNilToUser() async throws {
        let events = center.events
        XCTAssertNil(center.userPreferences)
        try center.setCurrentUserId("u1")
        XCTAssertEqual(log.all, ["DidUserUpdate current=u1 switched=true"])
        let received = await collect(events, count: 1)
        XCTAssertEqual(received, [.didUserUpdate(switched: true)])
        XCTAssertEqual(center.currentUserId, "u1")
        XCTAssertNotNil(center.userPreferences)
    }

    func testSameUserRenews() async throws {
        try center.setCurrentUserId("u1")
        let events = center.events
        try center.setCurrentUserId("u1")
        XCTAssertEqual(log.all.last, "DidUserRenew current=u1")
        let received = await collect(events, count: 1)
        XCTAssertEqual(received, [.didUserRenew])
    }

    func testUserToOtherUser() async throws {
        try center.setCurrentUserId("u1")
        let u1 = try XCTUnwrap(center.userPreferences)
        try u1.set(1, forKey: "k", business: "b")
        let events = center.events
        try center.setCurrentUserId("u2")
        XCTAssertEqual(Array(log.all.dropFirst()), [
            "WillLastUserResign current=u1 u1 open=true",
            "DidUserUpdate current=u2 switched=true",
        ])
        let received = await collect(events, count: 2)
        XCTAssertEqual(received, [.willLastUserResign(userId: "u1"), .didUserUpdate(switched: true)])
        // u1's store was closed: the old handle throws, the new user's store is empty and separate.
        XCTAssertThrowsError(try u1.set(2, forKey: "k", business: "b")) { error in
            guard case StoreError.closed = error else { return XCTFail("\(error)") }
        }
        let u2 = try XCTUnwrap(center.userPreferences)
        XCTAssertEqual(u2.integer(forKey: "k", business: "b", default: -1), -1)
        // u1's data is still there through preferences(forUser:).
        XCTAssertEqual(try center.preferences(forUser: "u1").integer(forKey: "k", business: "b"), 1)
        XCTAssertTrue(try center.preferences(forUser: "u2") === u2)
    }

    func testUserToNil() async throws {
        try center.setCurrentUserId("u1")
        let u1 = try XCTUnwrap(center.userPreferences)
        let events = center.events
        try center.setCurrentUserId(nil)
        XCTAssertEqual(Array(log.all.dropFirst()), [
            "WillLastUserResign current=u1 u1 open=true",
            "DidUserUpdate current=nil switched=true",
        ])
        let received = await collect(events, count: 2)
        XCTAssertEqual(received, [.willLastUserResign(userId: "u1"), .didUserUpdate(switched: true)])
        XCTAssertNil(center.userPreferences)
        XCTAssertNil(center.accessor(forBusiness: "b").userPreferences)
        XCTAssertThrowsError(try u1.set(1, forKey: "k", business: "b"))
        try center.setCurrentUserId(nil)
        XCTAssertEqual(log.all.count, 3, "nil -> nil posts nothing")
    }

    func testNotSwitchingAtLogoutKeepsTheStoreOpen() throws {
        try center.setCurrentUserId("u1")
        let u1 = try XCTUnwrap(center.userPreferences)
        try u1.set(1, forKey: "k", business: "b")
        XCTAssertTrue(center.userPreferences === u1)
        try u1.set(2, forKey: "k", business: "b")
        XCTAssertEqual(u1.integer(forKey: "k", business: "b"), 2)
    }

    func testUserFoldersAreNamedFromAHash() throws {
        try center.setCurrentUserId("alice@example.com")
        try XCTUnwrap(center.userPreferences).set(1, forKey: "k", business: "b")
        let names = try FileManager.default.contentsOfDirectory(atPath: center.preferencesRootPath.path).sorted()
        XCTAssertEqual(names, ["common", "user-" + StableHash.hex("alice@example.com")])
        XCTAssertFalse(names.contains { $0.contains("alice") })
        XCTAssertEqual(StableHash.hex(""), "cbf29ce484222325")
        XCTAssertEqual(StableHash.hex("a"), "af63dc4c8601ec8c")
        XCTAssertEqual(center.preferencesRootPath, root.appendingPathComponent("Documents/Preferences", isDirectory: true))
    }

    func testAccessorFollowsTheCurrentUser() throws {
        let accessor = center.accessor(forBusiness: "biz")
        XCTAssertNil(accessor.userPreferences)
        try center.setCurrentUserId("u1")
        try XCTUnwrap(accessor.userPreferences).set(1, forKey: "k")
        try center.setCurrentUserId("u2")
        XCTAssertEqual(try XCTUnwrap(accessor.userPreferences).integer(forKey: "k", default: -1), -1)
        try center.setCurrentUserId("u1")
        XCTAssertEqual(try XCTUnwrap(accessor.userPreferences).integer(forKey: "k"), 1)
        XCTAssertEqual(center.userPreferences?.integer(forKey: "k", business: "biz"), 1)
    }
}
