import Foundation
import LogStore

extension DataCenter {
    /// Copies the persistent domain of the UserDefaults suite `suiteName` into `business` of the
    /// common (or, with `common: false`, the current user's) preferences. Strings go in as
    /// `setString`, Booleans / integers / doubles as the typed setters, other property-list
    /// values (Data, Date, arrays, dictionaries) as `setObject`.
    /// - Returns: the keys imported and the keys skipped (values that are not property lists),
    ///   each sorted.
    /// - Throws: `StoreError.noCurrentUser` with `common: false` and no user; store errors.
    public func importUserDefaults(suiteName: String, into business: String, common: Bool = true) throws -> (imported: [String], skipped: [String]) {
        let domain = UserDefaults(suiteName: suiteName)?.persistentDomain(forName: suiteName) ?? [:]
        return try importValues(domain, into: business, common: common)
    }

    /// Copies the top-level dictionary of the property-list file at `url` into `business`, as
    /// `importUserDefaults` does.
    /// - Throws: `PreferencesError.notPropertyList` when the file is not a property list with a
    ///   dictionary at its root; `StoreError.io` when it cannot be read; as `importUserDefaults`.
    public func importPropertyList(at url: URL, into business: String, common: Bool = true) throws -> (imported: [String], skipped: [String]) {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw StoreError.io(operation: "read \(url.path)", errno: (error as NSError).code == NSFileReadNoSuchFileError ? ENOENT : EIO)
        }
        let root: Any
        do { root = try PropertyListSerialization.propertyList(from: data, options: [], format: nil) } catch {
            throw PreferencesError.notPropertyList
        }
        guard let dictionary = root as? [String: Any] else { throw PreferencesError.notPropertyList }
        return try importValues(dictionary, into: business, common: common)
    }

    private func importValues(_ values: [String: Any], into business: String, common: Bool) throws -> (imported: [String], skipped: [String]) {
        let preferences: SharedPreferences
        if common {
            preferences = commonPreferences
        } else {
            guard let user = userPreferences else { throw StoreError.noCurrentUser }
            preferences = user
        }
        var imported: [String] = []
        var skipped: [String] = []
        for (key, wrapped) in values {
            guard let value = unwrapped(wrapped) else {
                skipped.append(key)
                continue
            }
            if try Self.importValue(value, forKey: key, business: business, into: preferences) {
                imported.append(key)
            } else {
                skipped.append(key)
            }
        }
        return (imported.sorted(), skipped.sorted())
    }

    /// Stores one imported value with the setter that keeps its kind; false when it is not a
    /// property list.
    private static func importValue(_ value: Any, forKey key: String, business: String, into preferences: SharedPreferences) throws -> Bool {
        if let string = value as? String {
            try preferences.setString(string, forKey: key, business: business)
            return true
        }
        if let number = value as? NSNumber, !(value is Data) {
            switch StoredNumber(number) {
            case .bool(let flag): try preferences.set(flag, forKey: key, business: business)
            case .double(let double): try preferences.set(double, forKey: key, business: business)
            case .integer(let integer):
                if let int = Int(exactly: integer) {
                    try preferences.set(int, forKey: key, business: business)
                } else {
                    try preferences.set(integer, forKey: key, business: business)
                }
            }
            return true
        }
        do {
            try preferences.setObject(value, forKey: key, business: business)
            return true
        } catch PreferencesError.notPropertyList {
            return false
        }
    }
}
