import Foundation
import XCTest
import Preferences
import LogStore

/// Every declaration of API.swift's "module Preferences" section that this layer implements,
/// referenced with its exact labels and types: this file stops compiling if one drifts.
/// (Not yet here: `DataCenter.dao(...)`, `CustomStorage.dao(...)` and `PurgeablePath`.)
final class APIConformanceTests: XCTestCase {
    func testDeclarationsMatchAPISwift() {
        let _: (UInt32) -> DataOptions = DataOptions.init(rawValue:)
        let _: DataOptions = .purgeable
        let _: [PreferencesError] = [.notPropertyList, .decodingFailed(""), .typeMismatch(key: "", stored: "")]
        let _: [DataCenterEvent] = [.willLastUserResign(userId: ""), .didUserUpdate(switched: true), .didUserRenew]
        let _: [Notification.Name] = [.dataCenterWillLastUserResign, .dataCenterDidUserUpdate, .dataCenterDidUserRenew]

        let _: (URL, String, [UInt8]?, String) throws -> Void = DataCenter.configure(root:appKey:defaultKey:appVersion:)
        let _: () -> DataCenter = { DataCenter.default }
        let _: () -> Bool = { DataCenter.loggingEnabled }
        let _: (URL, String, [UInt8]?, String) throws -> DataCenter = DataCenter.init(root:appKey:defaultKey:appVersion:)
        let _: (DataCenter) -> String? = { $0.currentUserId }
        let _: (DataCenter) -> (String?) throws -> Void = DataCenter.setCurrentUserId
        let _: (DataCenter) -> URL = { $0.preferencesRootPath }
        let _: (DataCenter) -> () throws -> Void = DataCenter.reset
        let _: (DataCenter) -> SharedPreferences = { $0.commonPreferences }
        let _: (DataCenter) -> SharedPreferences? = { $0.userPreferences }
        let _: (DataCenter) -> (String) throws -> SharedPreferences = DataCenter.preferences(forUser:)
        let _: (DataCenter) -> (String) -> PreferencesAccessor = DataCenter.accessor(forBusiness:)
        let _: (DataCenter) -> CustomStorage = { $0.currentVersionStorage }
        let _: (DataCenter) -> AsyncStream<DataCenterEvent> = { $0.events }
        let _: (DataCenter) -> (String, String, Bool) throws -> (imported: [String], skipped: [String]) = DataCenter.importUserDefaults(suiteName:into:common:)
        let _: (DataCenter) -> (URL, String, Bool) throws -> (imported: [String], skipped: [String]) = DataCenter.importPropertyList(at:into:common:)

        let _: (PreferencesAccessor) -> BusinessPreferences = { $0.commonPreferences }
        let _: (PreferencesAccessor) -> BusinessPreferences? = { $0.userPreferences }

        let _: (SharedPreferences) -> (String, String, Int) -> Int = SharedPreferences.integer(forKey:business:default:)
        let _: (SharedPreferences) -> (String, String, Int64) -> Int64 = SharedPreferences.int64(forKey:business:default:)
        let _: (SharedPreferences) -> (String, String, Bool) -> Bool = SharedPreferences.bool(forKey:business:default:)
        let _: (SharedPreferences) -> (String, String, Double) -> Double = SharedPreferences.double(forKey:business:default:)
        let _: (SharedPreferences) -> (String, String, DataCrypt?) -> String? = SharedPreferences.string(forKey:business:crypt:)
        let _: (SharedPreferences) -> (Int, String, String) throws -> Void = SharedPreferences.set(_:forKey:business:)
        let _: (SharedPreferences) -> (Int64, String, String) throws -> Void = SharedPreferences.set(_:forKey:business:)
        let _: (SharedPreferences) -> (Bool, String, String) throws -> Void = SharedPreferences.set(_:forKey:business:)
        let _: (SharedPreferences) -> (Double, String, String) throws -> Void = SharedPreferences.set(_:forKey:business:)
        let _: (SharedPreferences) -> (String?, String, String, DataCrypt?) throws -> Void = SharedPreferences.setString(_:forKey:business:crypt:)
        let _: (SharedPreferences) -> (Any?, String, String, DataCrypt?, DataOptions) throws -> Void = SharedPreferences.setObject(_:forKey:business:crypt:options:)
        let _: (SharedPreferences) -> (NSDate?, String, String, DataCrypt?, DataOptions) throws -> Void = SharedPreferences.archiveObject(_:forKey:business:crypt:options:)
        let _: (SharedPreferences) -> ([Int], String, String, DataCrypt?, DataOptions) throws -> Void = SharedPreferences.archive(_:forKey:business:crypt:options:)
        let _: (SharedPreferences) -> ([Int], String, String, DataCrypt?, DataOptions) throws -> Void = SharedPreferences.saveJSON(_:forKey:business:crypt:options:)
        let _: (SharedPreferences) -> (String, String, DataCrypt?) -> Any? = SharedPreferences.object(forKey:business:crypt:)
        let _: (SharedPreferences) -> (Int.Type, String, String, DataCrypt?) throws -> Int? = SharedPreferences.object(_:forKey:business:crypt:)
        let _: (SharedPreferences) -> (String) -> [String] = SharedPreferences.allKeys(business:)
        let _: (SharedPreferences) -> (String) -> [String: Any] = SharedPreferences.dictionary(business:)
        let _: (SharedPreferences) -> (String, String) throws -> Void = SharedPreferences.removeObject(forKey:business:)
        let _: (SharedPreferences) -> (String, String) throws -> Void = SharedPreferences.removeObjects(like:business:)
        let _: (SharedPreferences) -> (String) throws -> Void = SharedPreferences.removeAll(business:)
        let _: (SharedPreferences) -> (String, String) -> Bool = SharedPreferences.contains(_:business:)
        let _: (SharedPreferences) -> () throws -> Void = SharedPreferences.sync
        let _: (SharedPreferences) -> (String) -> AsyncStream<String> = SharedPreferences.changes(business:)

        let _: (BusinessPreferences) -> (String, Int) -> Int = BusinessPreferences.integer(forKey:default:)
        let _: (BusinessPreferences) -> (String, Int64) -> Int64 = BusinessPreferences.int64(forKey:default:)
        let _: (BusinessPreferences) -> (String, Bool) -> Bool = BusinessPreferences.bool(forKey:default:)
        let _: (BusinessPreferences) -> (String, Double) -> Double = BusinessPreferences.double(forKey:default:)
        let _: (BusinessPreferences) -> (String, DataCrypt?) -> String? = BusinessPreferences.string(forKey:crypt:)
        let _: (BusinessPreferences) -> (Int, String) throws -> Void = BusinessPreferences.set(_:forKey:)
        let _: (BusinessPreferences) -> (Int64, String) throws -> Void = BusinessPreferences.set(_:forKey:)
        let _: (BusinessPreferences) -> (Bool, String) throws -> Void = BusinessPreferences.set(_:forKey:)
        let _: (BusinessPreferences) -> (Double, String) throws -> Void = BusinessPreferences.set(_:forKey:)
        let _: (BusinessPreferences) -> (String?, String, DataCrypt?) throws -> Void = BusinessPreferences.setString(_:forKey:crypt:)
        let _: (BusinessPreferences) -> (Any?, String, DataCrypt?, DataOptions) throws -> Void = BusinessPreferences.setObject(_:forKey:crypt:options:)
        let _: (BusinessPreferences) -> (NSDate?, String, DataCrypt?, DataOptions) throws -> Void = BusinessPreferences.archiveObject(_:forKey:crypt:options:)
        let _: (BusinessPreferences) -> ([Int], String, DataCrypt?, DataOptions) throws -> Void = BusinessPreferences.archive(_:forKey:crypt:options:)
        let _: (BusinessPreferences) -> ([Int], String, DataCrypt?, DataOptions) throws -> Void = BusinessPreferences.saveJSON(_:forKey:crypt:options:)
        let _: (BusinessPreferences) -> (String, DataCrypt?) -> Any? = BusinessPreferences.object(forKey:crypt:)
        let _: (BusinessPreferences) -> (Int.Type, String, DataCrypt?) throws -> Int? = BusinessPreferences.object(_:forKey:crypt:)
        let _: (BusinessPreferences) -> () -> [String] = BusinessPreferences.allKeys
        let _: (BusinessPreferences) -> () -> [String: Any] = BusinessPreferences.dictionary
        let _: (BusinessPreferences) -> (String) throws -> Void = BusinessPreferences.removeObject(forKey:)
        let _: (BusinessPreferences) -> (String) throws -> Void = BusinessPreferences.removeObjects(like:)
        let _: (BusinessPreferences) -> () throws -> Void = BusinessPreferences.removeAll
        let _: (BusinessPreferences) -> (String) -> Bool = BusinessPreferences.contains(_:)
        let _: (BusinessPreferences) -> () throws -> Void = BusinessPreferences.sync
        let _: (BusinessPreferences) -> () -> AsyncStream<String> = BusinessPreferences.changes

        let _: (String) throws -> CustomStorage = CustomStorage.named(_:)
        let _: (URL) throws -> CustomStorage = CustomStorage.init(path:)
        let _: (CustomStorage) -> () throws -> Void = CustomStorage.close
        let _: (CustomStorage) -> () throws -> Void = CustomStorage.reset
        let _: (CustomStorage) -> BusinessPreferences = { $0.commonPreferences }
        let _: (CustomStorage) -> BusinessPreferences? = { $0.userPreferences }

        // Default arguments as API.swift gives them.
        let _: (SharedPreferences) -> Int = { $0.integer(forKey: "k", business: "b") }
        let _: (SharedPreferences) throws -> Void = { try $0.setObject(1, forKey: "k", business: "b") }
        let _: (DataCenter) throws -> Void = { _ = try $0.importUserDefaults(suiteName: "s", into: "b") }
        func sendable<T: Sendable>(_: T.Type) {}
        sendable(DataCenter.self); sendable(SharedPreferences.self); sendable(BusinessPreferences.self)
        sendable(PreferencesAccessor.self); sendable(CustomStorage.self); sendable(DataOptions.self)
        sendable(PreferencesError.self); sendable(DataCenterEvent.self)
    }
}
