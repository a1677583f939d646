import CrashTestSupport
import Foundation
import LogStore
import Preferences
import XCTest

/// Power loss simulated at every sync point under a DataCenter whose users switch
/// (PowerLossCampaign). The preference stores run in the default mode (`.processCrashSafe`),
/// which promises nothing against power loss between syncs; a user switch closes the previous
/// user's store, which syncs it. After each simulated power loss a new DataCenter opens the
/// root (no crash, no refusal), every preference reads back as a value written for its key
/// (never a wrong one), and a user's preferences written before switching away from that user
/// are all there (or a later value).
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

    func testUserSwitchesKeepTheLeftUsersPreferencesThroughPowerLoss() {
        var writes: [Write] = []
        var leftUser: [(user: String, begin: Int, acknowledged: Int)] = []
        var durableChecks = 0
        DataCenter.loggingEnabled = false
        let users = ["u0", "u1"]
        let report = PowerLossCampaign.run("preferences-user-switches", workload: { root in
            let center = try DataCenter(root: root, appKey: "powerloss-app", appVersion: "1")
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
                    version += 1
                    let common = "common/p\((k + round) % 5)"
                    let commonText = value(common, version)
                    let commonBegin = PowerLossSimulator.mark("begin \(common)")
                    try center.commonPreferences.setString(commonText, forKey: "p\((k + round) % 5)", business: "powerloss")
                    writes.append(Write(key: common, value: commonText, begin: commonBegin, acknowledged: PowerLossSimulator.mark("ack")))
                }
            }
            try center.setCurrentUserId(nil)
        }, check: { cut in
            let center = try DataCenter(root: cut.directory, appKey: "powerloss-app", appVersion: "1")
            for key in Set(writes.map(\.key)).sorted() {
                let parts = key.split(separator: "/")
                let prefs = parts[0] == "common" ? center.commonPreferences : try center.preferences(forUser: String(parts[0]))
                let found = try prefs.string(forKey: String(parts[1]), business: "powerloss")
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
        })
        XCTAssertGreaterThan(report.images, 10)
        XCTAssertGreaterThan(durableChecks, 0, "no cut came after a user switch")
        print("preferences power loss: \(durableChecks) checks of a preference written before a user switch")
    }
}
