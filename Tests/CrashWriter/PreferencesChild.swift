import Caches
import Foundation
import Preferences

/// `logstore-crash-writer prefs <root> <seed> <first op id>`: the Preferences and Caches layers
/// on one DataCenter root until killed. Before each operation it prints `B <id> <op>`, after it
/// returned `A <id>`. Keys are numbers 0..<100; every value derives from its kind and version
/// (the op id), as `PreferencesCrashTests` expects:
///
///   B <id> P <k>        common preferences, business "crash", key "p<k>": kind `prefsKind(id)`
///   B <id> R <k>        removes "p<k>" from the common preferences
///   B <id> U <u> <k>    preferences of user "user<u>": setString "q<k>" to `prefsString(id)`
///   B <id> K <k>        crypted LRUDiskCache<String> "crash-cache": "c<k>" = `cacheString(id)`
///   B <id> E <k>        removes "c<k>" from the disk cache
///   B <id> F <k>        file array "crash-files": writeFile "f<k>" = `fileBytes(id)` (waits for it)
///   B <id> G <k>        removes file "f<k>"
func runPreferencesChild(_ arguments: [String]) -> Never {
    guard arguments.count == 3, let seed = UInt64(arguments[1]), let firstID = Int(arguments[2]) else {
        fail("usage: logstore-crash-writer prefs <root> <seed> <first op id>")
    }
    do {
        DataCenter.loggingEnabled = false
        let center = try DataCenter(root: URL(fileURLWithPath: arguments[0]), appKey: "crash-app", appVersion: "1")
        let storage = center.currentVersionStorage
        let prefs = center.commonPreferences
        let users = try (0..<2).map { try center.preferences(forUser: "user\($0)") }
        let cache = try LRUDiskCache<String>(name: "crash-cache", capacity: 100_000, userDependent: false, crypted: true, in: storage)
        let files = try storage.fileArrayService(name: "crash-files", userDependent: false, capacity: 100_000, crypted: false)
        emit("O")
        var random = Generator(state: seed)
        var id = firstID
        while true {
            id += 1
            let k = Int(random.next() % 100)
            switch random.next() % 20 {
            case 0..<6:
                emit("B \(id) P \(k)")
                try setPreference(prefs, key: "p\(k)", version: id)
            case 6..<8:
                emit("B \(id) R \(k)")
                try prefs.removeObject(forKey: "p\(k)", business: "crash")
            case 8..<11:
                let user = Int(random.next() % 2)
                emit("B \(id) U \(user) \(k)")
                try users[user].setString(prefsString(id), forKey: "q\(k)", business: "crash")
            case 11..<15:
                emit("B \(id) K \(k)")
                cache.setObject(cacheString(id), forKey: "c\(k)")
            case 15..<16:
                emit("B \(id) E \(k)")
                cache.removeObject(forKey: "c\(k)")
            case 16..<19:
                emit("B \(id) F \(k)")
                let done = DispatchSemaphore(value: 0)
                let result = Locked(false)
                files.writeFile(Data(fileBytes(id)), name: "f\(k)") { ok in
                    result.set(ok)
                    done.signal()
                }
                done.wait()
                guard result.get() else { fail("prefs: writeFile f\(k) returned false") }
            default:
                emit("B \(id) G \(k)")
                files.removeFile("f\(k)")
            }
            emit("A \(id)")
        }
    } catch {
        fail("prefs: \(error)")
    }
}

/// A value set by the completion of `writeFile`, read by the waiting thread.
private final class Locked: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Bool
    init(_ value: Bool) { self.value = value }
    func set(_ newValue: Bool) { lock.lock(); value = newValue; lock.unlock() }
    func get() -> Bool { lock.lock(); defer { lock.unlock() }; return value }
}

/// Sets `key` to the value of `version` with the setter of its kind.
private func setPreference(_ prefs: SharedPreferences, key: String, version: Int) throws {
    switch prefsKind(version) {
    case "i": try prefs.set(version, forKey: key, business: "crash")
    case "d": try prefs.set(Double(version) + 0.25, forKey: key, business: "crash")
    case "b": try prefs.set(version % 2 == 1, forKey: key, business: "crash")
    case "s": try prefs.setString(prefsString(version), forKey: key, business: "crash")
    default: try prefs.setObject(["version": version, "name": "n\(version)"], forKey: key, business: "crash")
    }
}

// The value derivations below must match PreferencesCrashTests.

/// The kind of the common-preferences value written at `version`: i, d, b, s or o (a plist).
func prefsKind(_ version: Int) -> Character { Array("idbso")[version % 5] }

func prefsString(_ version: Int) -> String {
    "s\(version)-" + String(repeating: Character(UnicodeScalar(UInt8(97 + version % 26))), count: version % 700)
}

func cacheString(_ version: Int) -> String {
    "c\(version)-" + String(repeating: Character(UnicodeScalar(UInt8(65 + version % 26))), count: version % 3000)
}

/// File contents: mostly small (chunk records in the store), every fourth one 64 KiB or more
/// (a plain file beside the store).
func fileBytes(_ version: Int) -> [UInt8] {
    let count = version % 4 == 0 ? (64 << 10) + version % 70_000 : version % 5000
    return (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ version) }
}
