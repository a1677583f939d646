import CrashTestSupport
import Foundation
import LogStore
@testable import Preferences
import XCTest

/// Power loss simulated at every sync point under a DataCenter whose users switch
/// (PowerLossCampaign). The preference stores run in the default mode (`.processCrashSafe`),
/// which promises nothing against power loss between syncs; a user switch closes the previous
/// user's store, which syncs it. After each simulated power loss a new DataCenter opens the
/// root (no crash, no refusal), every preference reads back as a value written for its key
/// (never a wrong one), and a user's preferences written before switching away from that user
/// are all there (or a later value).
///
/// Each store (each user's, the common one) must also come back as of one moment: its
/// preferences are exactly those after some prefix of the sets made in it (issue 21 item 3;
/// the engine's point-in-time recovery). The second campaign runs the same workload with the
/// background syncer's window shrunk to 10 ms and a 15 ms pause after each set, so that syncer
/// rounds (not only user switches) make writes durable between the cut points.
final class PreferencesPowerLossTests: XCTestCase {
    private struct Write {
        var key: String
        var value: String
        var begin: Int
        var acknowledged: Int
    }

    private func value(_ key: String, _ version: Int) -> String {
        "\(key)#\(version)-" + String(repeating: Character(UnicodeScalar(UInt8(97 + version % 26))), count: 20 + version * 37 % 400)
    }

    /// A DataCenter as `DataCenter(root:appKey:appVersion:)` opens it, with the syncer's window
    /// `interval` (nil: the default options).
    private func center(_ root: URL, interval: TimeInterval?) throws -> DataCenter {
        guard let interval else { return try DataCenter(root: root, appKey: "powerloss-app", appVersion: "1") }
        var options = LogStore.Options()
        options.encryption = try LogStore.Options.Encryption(deriving: "powerloss-app", keyID: 1)
        options.maxUnsyncedInterval = interval
        return DataCenter(root: root, options: options, appVersion: "1")
    }

    func testUserSwitchesKeepTheLeftUsersPreferencesThroughPowerLoss() {
        campaign("preferences-user-switches", interval: nil, pause: 0)
    }

    /// Issue 21 item 3: the default mode with syncer rounds between the sets.
    func testEachUsersPreferencesComeBackAsOfOneMomentInTheDefaultMode() {
        campaign("preferences-processCrashSafe", interval: 0.01, pause: 0.015)
    }

    private func campaign(_ name: String, interval: TimeInterval?, pause: TimeInterval) {
        var writes: [Write] = []
        var leftUser: [(user: String, begin: Int, acknowledged: Int)] = []
        var durableChecks = 0, prefixChecks = 0, olderStores = 0
        DataCenter.loggingEnabled = false
        let users = ["u0", "u1"]
        let report = PowerLossCampaign.run(name, workload: { root in
            let center = try self.center(root, interval: interval)
            var version = 0
            for round in 0..<6 {
                let user = users[round % 2]
                let begin = PowerLossSimulator.mark("begin switch to \(user)")
                try center.setCurrentUserId(user)
                if round > 0 { leftUser.append((users[(round + 1) % 2], begin, PowerLossSimulator.mark("ack switch"))) }
                for k in 0..<4 {
                    version += 1
                    let key = "\(user)/q\((k + round) % 5)"
                    let text = value(key, version)
                    let begin = PowerLossSimulator.mark("begin \(key)")
                    try XCTUnwrap(center.userPreferences).setString(text, forKey: "q\((k + round) % 5)", business: "powerloss")
                    writes.append(Write(key: key, value: text, begin: begin, acknowledged: PowerLossSimulator.mark("ack")))
                    if pause > 0 { Thread.sleep(forTimeInterval: pause) }
                    version += 1
                    let common = "common/p\((k + round) % 5)"
                    let commonText = value(common, version)
                    let commonBegin = PowerLossSimulator.mark("begin \(common)")
                    try center.commonPreferences.setString(commonText, forKey: "p\((k + round) % 5)", business: "powerloss")
                    writes.append(Write(key: common, value: commonText, begin: commonBegin, acknowledged: PowerLossSimulator.mark("ack")))
                    if pause > 0 { Thread.sleep(forTimeInterval: pause) }
                }
            }
            try center.setCurrentUserId(nil)
        }, check: { cut in
            let center = try self.center(cut.directory, interval: interval)
            var foundAll: [String: String] = [:]    // "user/key" -> value
            for key in Set(writes.map(\.key)).sorted() {
                let parts = key.split(separator: "/")
                let prefs = parts[0] == "common" ? center.commonPreferences : try center.preferences(forUser: String(parts[0]))
                let found = prefs.string(forKey: String(parts[1]), business: "powerloss")
                if let found { foundAll[key] = found }
                let candidates = writes.filter { $0.key == key && $0.begin < cut.index }
                if let found {
                    XCTAssertTrue(candidates.contains { $0.value == found }, "\(cut.context): \(key) reads back a value never written: \(found.prefix(30))")
                }
                // Written before a completed switch away from its user: durable.
                guard parts[0] != "common",
                      let left = leftUser.last(where: { $0.user == parts[0] && $0.acknowledged < cut.index }),
                      let floor = candidates.lastIndex(where: { $0.acknowledged < left.begin }) else { continue }
                let allowed = candidates[floor...].map(\.value)
                durableChecks += 1
                XCTAssertTrue(found.map(allowed.contains) ?? false,
                              "\(cut.context): \(key) lost what was written before switching away from \(parts[0]): found \(found?.prefix(30) ?? "nothing")")
            }
            // One moment per store: the preferences of each user (and the common ones) are those
            // after a prefix of the sets made in that store, from the empty one to the one in flight.
            for owner in users + ["common"] {
                let sets = writes.filter { $0.key.hasPrefix(owner + "/") }
                let shown = foundAll.filter { $0.key.hasPrefix(owner + "/") }
                var state: [String: String] = [:]
                var matches = shown.isEmpty
                var length = 0
                for set in sets where set.begin < cut.index && !matches {
                    state[set.key] = set.value
                    length += 1
                    matches = state == shown
                }
                prefixChecks += 1
                if matches && length < sets.filter({ $0.acknowledged < cut.index }).count { olderStores += 1 }
                XCTAssertTrue(matches, "\(cut.context): \(owner)'s preferences are not as of one moment: "
                              + shown.keys.sorted().map { "\($0)=\(shown[$0]?.prefix(12) ?? "")" }.joined(separator: ", "))
            }
        })
        XCTAssertGreaterThan(report.images, 10)
        XCTAssertGreaterThan(durableChecks, 0, "no cut came after a user switch")
        print("\(name): \(prefixChecks) checks of a store as of one moment (\(olderStores) showing fewer sets than were acknowledged), \(durableChecks) checks of a preference written before a user switch")
    }
}
