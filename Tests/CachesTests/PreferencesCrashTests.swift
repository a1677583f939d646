import Caches
import CrashTestSupport
import Foundation
import Preferences
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// kill -9 of a process using the Preferences and Caches layers on one DataCenter root
/// (Tests/CrashWriter/PreferencesChild.swift): typed common preferences of every kind and their
/// removal, two users' preferences, a crypted LRUDiskCache, and a file array with small (chunked)
/// and large (plain) files. After each kill a new DataCenter opens the root and must show exactly
/// the acknowledged operations, plus possibly the one in flight; the file array must list no
/// file that was not acknowledged.
///
/// 8 kill cycles by default; `PREFS_CRASH_CYCLES=N` for more, `PREFS_CRASH_SEED` to replay.
final class PreferencesCrashTests: XCTestCase {
    /// What a key shows: a description of its value that two equal values share.
    private typealias State = [String: String]

    func testKillDuringPreferencesAndCacheWritesLosesNothing() throws {
        let environment = ProcessInfo.processInfo.environment
        let cycles = environment["PREFS_CRASH_CYCLES"].flatMap(Int.init) ?? 8
        let seed = environment["PREFS_CRASH_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        let binary = try CrashWriterProcess.binary(nextTo: PreferencesCrashTests.self)
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("prefs-crash-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let campaign = KillCampaign<State>(
            cycles: cycles, seed: seed, binary: binary,
            arguments: { cycle, random in ["prefs", root.path, "\(random)", "\(cycle * 1_000_000)"] },
            killAfter: { random in UInt32(150_000 + Int(random >> 33) % 400_000) },
            parse: { line in self.effect(of: line).map { change in (change.id, { $0[change.effect.key] = change.effect.value }) } },
            read: { context in try self.readState(root, context: context) },
            difference: { expected, found in
                let wrong = Set(expected.keys).union(found.keys).filter { expected[$0] != found[$0] }.sorted().prefix(5)
                return wrong.map { "\($0): expected \(expected[$0]?.prefix(40) ?? "nil"), found \(found[$0]?.prefix(40) ?? "nil")" }.joined(separator: "; ")
            })
        let summary = try campaign.run(from: [:])
        let acknowledged = summary.acknowledged
        XCTAssertGreaterThan(acknowledged, cycles * 10, "the child hardly ran")
        print("preferences crash test: seed \(seed), \(cycles) cycles, \(acknowledged) acknowledged operations, "
              + "\(summary.inFlightApplied) in-flight found applied, \(summary.state.count) live keys")
    }

    /// The key a `B` line changes and the value it leaves (nil: removed).
    private func effect(of line: Substring) -> (id: Int, effect: (key: String, value: String?))? {
        let parts = line.split(separator: " ")
        guard parts.count >= 4, let id = Int(parts[1]), let k = Int(parts[parts.count - 1]) else { return nil }
        switch parts[2] {
        case "P": return (id, ("p\(k)", preferenceDescription(id)))
        case "R": return (id, ("p\(k)", nil))
        case "U": return (id, ("user\(parts[3])/q\(k)", prefsString(id)))
        case "K": return (id, ("c\(k)", cacheString(id)))
        case "E": return (id, ("c\(k)", nil))
        case "F": return (id, ("f\(k)", fileDescription(fileBytes(id))))
        case "G": return (id, ("f\(k)", nil))
        default: return nil
        }
    }

    /// Everything the child could have written, read through a fresh DataCenter on `root`. Every
    /// handle is released on return, so the next child can open the root.
    private func readState(_ root: URL, context: String) throws -> State {
        DataCenter.loggingEnabled = false
        let center = try DataCenter(root: root, appKey: "crash-app", appVersion: "1")
        let storage = center.currentVersionStorage
        let prefs = center.commonPreferences
        let cache = try LRUDiskCache<String>(name: "crash-cache", capacity: 100_000, userDependent: false, crypted: true, in: storage)
        let files = try storage.fileArrayService(name: "crash-files", userDependent: false, capacity: 100_000, crypted: false)
        var state: State = [:]
        for k in 0..<100 {
            if prefs.contains("p\(k)", business: "crash") {
                state["p\(k)"] = describe(prefs.object(forKey: "p\(k)", business: "crash"))
            }
            for user in 0..<2 {
                if let value = try center.preferences(forUser: "user\(user)").string(forKey: "q\(k)", business: "crash") {
                    state["user\(user)/q\(k)"] = value
                }
            }
            if let value = cache.object(forKey: "c\(k)") { state["c\(k)"] = value }
            if let data = files.readFileSync("f\(k)") { state["f\(k)"] = fileDescription([UInt8](data)) }
        }
        // The file array lists exactly the files that read back: no half-written file is visible.
        XCTAssertEqual(Set(files.allFileNames()), Set(state.keys.filter { $0.hasPrefix("f") }), "\(context): file array names")
        XCTAssertEqual(files.fileCount(), state.keys.filter { $0.hasPrefix("f") }.count, "\(context): file count")
        return state
    }

    // The value derivations below must match Tests/CrashWriter/PreferencesChild.swift.

    private func preferenceDescription(_ version: Int) -> String {
        switch Array("idbso")[version % 5] {
        case "i": return describe(version)
        case "d": return describe(Double(version) + 0.25)
        case "b": return describe(version % 2 == 1)
        case "s": return describe(prefsString(version))
        default: return "plist version \(version) name n\(version)"
        }
    }

    /// A value as `object(forKey:)` returns it, with its type, so an Int never equals a Double.
    private func describe(_ value: Any?) -> String {
        guard let value else { return "nil" }
        if let plist = value as? [String: Any] {
            let version = (plist["version"] as? Int) ?? (plist["version"] as? NSNumber)?.intValue ?? -1
            return "plist version \(version) name \(plist["name"] as? String ?? "?")"
        }
        return "\(type(of: value)) \(value)"
    }

    private func prefsString(_ version: Int) -> String {
        "s\(version)-" + String(repeating: Character(UnicodeScalar(UInt8(97 + version % 26))), count: version % 700)
    }

    private func cacheString(_ version: Int) -> String {
        "c\(version)-" + String(repeating: Character(UnicodeScalar(UInt8(65 + version % 26))), count: version % 3000)
    }

    private func fileBytes(_ version: Int) -> [UInt8] {
        let count = version % 4 == 0 ? (64 << 10) + version % 70_000 : version % 5000
        return (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ version) }
    }

    /// Length and FNV-1a hash: equal for equal contents, and short enough to print.
    private func fileDescription(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return "\(bytes.count) bytes, fnv \(String(hash, radix: 16))"
    }
}
