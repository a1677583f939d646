import Foundation
import DAO
import LogStore
@testable import Preferences
import XCTest

/// The source component's manual, statement by statement, for the layers of this module:
/// ../shared/seeds/mpaas-docs/functions/key_value.md ("KV"), functions/apdatacenter.md ("DC"),
/// functions/custom_storage/summary.md ("CS"), faq.md ("FAQ") and summary.md ("Overview").
/// Each test names the page and section whose statement it checks.
final class ManualPreferencesTests: PreferencesTestCase {

    // MARK: key_value.md

    /// KV 2.2.2 "Storing basic type": each primary type round-trips through its own setter/getter.
    func testBasicTypesRoundTrip() throws {
        try prefs.set(42, forKey: "i", business: "biz")
        try prefs.set(Int64(1) << 40, forKey: "ll", business: "biz")
        try prefs.set(true, forKey: "b", business: "biz")
        try prefs.set(2.5, forKey: "d", business: "biz")
        XCTAssertEqual(prefs.integer(forKey: "i", business: "biz"), 42)
        XCTAssertEqual(prefs.int64(forKey: "ll", business: "biz"), Int64(1) << 40)
        XCTAssertTrue(prefs.bool(forKey: "b", business: "biz"))
        XCTAssertEqual(prefs.double(forKey: "d", business: "biz"), 2.5)
    }

    /// KV 2.2.2: "long long (the same as NSInteger in 64-bit environment)" (2.2.1): a long long
    /// reads back as an integer and the other way round.
    func testLongLongIsTheSameAsIntegerOn64Bit() throws {
        try prefs.set(Int64(1) << 40, forKey: "ll", business: "biz")
        XCTAssertEqual(prefs.integer(forKey: "ll", business: "biz"), 1 << 40)
        try prefs.set(7, forKey: "i", business: "biz")
        XCTAssertEqual(prefs.int64(forKey: "i", business: "biz"), 7)
    }

    /// KV 2.2.2: "The 'defaultValue' argument is the default value returned when the data does
    /// not exist"; the getters without it return 0 / NO.
    func testDefaultValueWhenDataDoesNotExist() throws {
        XCTAssertEqual(prefs.integer(forKey: "none", business: "biz", default: -3), -3)
        XCTAssertEqual(prefs.int64(forKey: "none", business: "biz", default: -4), -4)
        XCTAssertTrue(prefs.bool(forKey: "none", business: "biz", default: true))
        XCTAssertEqual(prefs.double(forKey: "none", business: "biz", default: 1.25), 1.25)
        XCTAssertEqual(prefs.integer(forKey: "none", business: "biz"), 0)
        XCTAssertFalse(prefs.bool(forKey: "none", business: "biz"))
        // The default is for absent data only: a stored 0 reads as 0.
        try prefs.set(0, forKey: "zero", business: "biz")
        XCTAssertEqual(prefs.integer(forKey: "zero", business: "biz", default: 9), 0)
        // Businesses are separate key spaces.
        try prefs.set(5, forKey: "k", business: "a")
        XCTAssertEqual(prefs.integer(forKey: "k", business: "b", default: -1), -1)
    }

    /// KV 2.2.3.1 "setString & stringForKey": strings round-trip; "If the data is not encrypted,
    /// strings stored with this interface can be viewed in Sqlite DB viewer": the store holds the
    /// UTF-8 text as it is.
    func testSetStringIsStoredAsReadableText() throws {
        let text = "plain-text-marker-\(UUID().uuidString)"
        try prefs.setString(text, forKey: "s", business: "biz")
        XCTAssertEqual(prefs.string(forKey: "s", business: "biz"), text)
        try prefs.sync()
        XCTAssertTrue(try storeFilesContain(Array(text.utf8), under: center.preferencesRootPath))
    }

    /// KV 2.2.3.1 "setObject": every Property List kind (NSNumber, NSString, NSData, NSDate,
    /// NSArray, NSDictionary, nested) round-trips; a non-PList sub-object is refused.
    func testSetObjectStoresPropertyListObjects() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        let plist: [String: Any] = [
            "number": 3, "string": "s", "data": Data([1, 2, 3]), "date": date,
            "array": ["a", 1], "dict": ["inner": [true]],
        ]
        try prefs.setObject(plist, forKey: "p", business: "biz")
        let back = try XCTUnwrap(prefs.object(forKey: "p", business: "biz") as? [String: Any])
        XCTAssertEqual(back["number"] as? Int, 3)
        XCTAssertEqual(back["string"] as? String, "s")
        XCTAssertEqual(back["data"] as? Data, Data([1, 2, 3]))
        XCTAssertEqual(back["date"] as? Date, date)
        XCTAssertEqual((back["array"] as? [Any])?.first as? String, "a")
        XCTAssertEqual(((back["dict"] as? [String: Any])?["inner"] as? [Any])?.first as? Bool, true)
        // "The subobjects in NSArray and NSDictionary must also be PList objects."
        XCTAssertThrowsError(try prefs.setObject(["x": NSObject()], forKey: "bad", business: "biz")) { error in
            guard case PreferencesError.notPropertyList = error else { return XCTFail("\(error)") }
        }
        XCTAssertNil(prefs.object(forKey: "bad", business: "biz"), "a refused write leaves nothing")
    }

    /// KV 2.2.3.1 "setObject": "If the setObject method is used for storing Property List
    /// objects, the object acquired using the objectForKey method is mutable. The savedArray
    /// acquired in the codes below is of the NSMutableArray class."
    func testObjectForKeyOfAPropertyListIsMutable() throws {
        let array = NSArray(array: ["str"])
        try prefs.setObject(array, forKey: "array", business: "biz")
        let saved = try XCTUnwrap(prefs.object(forKey: "array", business: "biz") as? NSMutableArray)
        saved.add("more")
        XCTAssertEqual(saved.count, 2)
        try prefs.setObject(["k": "v"], forKey: "dict", business: "biz")
        let dict = try XCTUnwrap(prefs.object(forKey: "dict", business: "biz") as? NSMutableDictionary)
        dict["k2"] = "v2"
        XCTAssertEqual(dict.count, 2)
    }

    /// KV 2.2.3.1 "archiveObject": NSCoding objects go through NSKeyedArchiver and come back
    /// unarchived; "Property List objects can use this interface, too".
    func testArchiveObjectStoresNSCodingObjects() throws {
        let value = NSString(string: "archived")
        try prefs.archiveObject(value, forKey: "a", business: "biz")
        XCTAssertEqual(prefs.object(forKey: "a", business: "biz") as? String, "archived")
        let plist = NSArray(array: [NSNumber(value: 1), NSString(string: "two")])
        try prefs.archiveObject(plist, forKey: "plist", business: "biz")
        let back = try XCTUnwrap(prefs.object(forKey: "plist", business: "biz") as? NSArray)
        XCTAssertEqual(back.count, 2)
        XCTAssertEqual(back[1] as? String, "two")
    }

    private struct Profile: Codable, Equatable { var name: String; var age: Int }

    /// KV 2.2.3.1 "saveJsonObject": an object that is neither PList nor NSCoding is mapped to a
    /// JSON string; "objectForKey": the archiving method is recorded, so objectForKey returns it
    /// (as a JSON object), and the typed read gives the value back.
    func testSaveJSONAndObjectForKeyUsesTheRecordedMethod() throws {
        try prefs.saveJSON(Profile(name: "ann", age: 7), forKey: "j", business: "biz")
        let json = try XCTUnwrap(prefs.object(forKey: "j", business: "biz") as? [String: Any])
        XCTAssertEqual(json["name"] as? String, "ann")
        XCTAssertEqual(json["age"] as? Int, 7)
        XCTAssertEqual(try prefs.object(Profile.self, forKey: "j", business: "biz"), Profile(name: "ann", age: 7))
        // Each method's value comes back as what was stored, under the same getter.
        try prefs.setString("s", forKey: "s", business: "biz")
        try prefs.set(3, forKey: "n", business: "biz")
        XCTAssertEqual(prefs.object(forKey: "s", business: "biz") as? String, "s")
        XCTAssertEqual(prefs.object(forKey: "n", business: "biz") as? Int, 3)
    }

    /// KV 2.2.3.2 "Using default encryption": a value written with APDefaultEncrypt reads back
    /// with APDefaultDecrypt and also without the extension argument; it is not plain on disk.
    func testDefaultEncryptionReadsBackWithOrWithoutTheCrypt() throws {
        let secret = "secret-marker-\(UUID().uuidString)"
        try prefs.setObject(secret, forKey: "key", business: "biz", crypt: .default)
        try prefs.setString(secret, forKey: "str", business: "biz", crypt: .default)
        XCTAssertEqual(prefs.object(forKey: "key", business: "biz", crypt: .default) as? String, secret)
        XCTAssertEqual(prefs.object(forKey: "key", business: "biz") as? String, secret)
        XCTAssertEqual(prefs.string(forKey: "str", business: "biz"), secret)
        try prefs.sync()
        XCTAssertFalse(try storeFilesContain(Array(secret.utf8), under: center.preferencesRootPath))
    }

    /// KV 2.2.3.2 "Using self-defined encryption": a matched encrypt/decrypt pair saves and
    /// recovers the data; without it the value is not readable.
    func testCustomEncryptionNeedsItsPair() throws {
        let crypt = xorCrypt()
        try prefs.setString("custom", forKey: "c", business: "biz", crypt: crypt)
        XCTAssertEqual(prefs.string(forKey: "c", business: "biz", crypt: crypt), "custom")
        XCTAssertNil(prefs.string(forKey: "c", business: "biz"))
        XCTAssertThrowsError(try prefs.object(String.self, forKey: "c", business: "biz")) { error in
            guard case StoreError.cryptRequired = error else { return XCTFail("\(error)") }
        }
    }

    /// KV 2.2.3.2 "Encrypt primary types": convert to a string or put into NSNumber, then call
    /// setString / setObject with the extension.
    func testPrimaryTypesEncryptedAsStringOrNumber() throws {
        try prefs.setObject(NSNumber(value: 12), forKey: "n", business: "biz", crypt: .default)
        try prefs.setString(String(3.5), forKey: "d", business: "biz", crypt: .default)
        XCTAssertEqual(prefs.object(forKey: "n", business: "biz") as? Int, 12)
        XCTAssertEqual(prefs.string(forKey: "d", business: "biz").flatMap(Double.init), 3.5)
    }

    // MARK: apdatacenter.md

    /// DC 2.1.1: "APDataCenter ... is singleton and can be called anywhere": `default` is one
    /// object.
    func testDefaultDataCenterIsASingleton() {
        XCTAssertTrue(DataCenter.default === DataCenter.default)
        XCTAssertTrue(DataCenter.default === center)
    }

    /// DC 2.1.3 currentUserId / setCurrentUserId: "Once the user ID is set, userPreferences will
    /// point to the database of this user"; userPreferences: "When it is not in the login
    /// status, nil will be returned"; FAQ 3.1 the same.
    func testCurrentUserAndUserPreferences() throws {
        XCTAssertNil(center.currentUserId)
        XCTAssertNil(center.userPreferences)
        try center.setCurrentUserId("alice")
        XCTAssertEqual(center.currentUserId, "alice")
        try XCTUnwrap(center.userPreferences).set(1, forKey: "k", business: "b")
        try center.setCurrentUserId("bob")
        XCTAssertEqual(center.userPreferences?.integer(forKey: "k", business: "b", default: -1), -1)
        try center.setCurrentUserId("alice")
        XCTAssertEqual(center.userPreferences?.integer(forKey: "k", business: "b"), 1)
    }

    /// FAQ 3.1: "When a user signs out, you don't have to call the setCurrentUserId method. Data
    /// Center will continue to open the database of last user."
    func testWithoutSignOutTheLastUsersDatabaseStaysOpen() throws {
        try center.setCurrentUserId("alice")
        let user = try XCTUnwrap(center.userPreferences)
        try user.set(2, forKey: "k", business: "b")
        XCTAssertEqual(center.currentUserId, "alice")
        XCTAssertEqual(center.userPreferences?.integer(forKey: "k", business: "b"), 2)
    }

    /// DC 2.1.3 preferencesRootPath: "the path where the commonPreferences and userPreferences
    /// database folders are stored".
    func testPreferencesRootPathHoldsCommonAndUserFolders() throws {
        try prefs.set(1, forKey: "k", business: "b")
        try center.setCurrentUserId("alice")
        try center.userPreferences?.set(1, forKey: "k", business: "b")
        let children = try FileManager.default.contentsOfDirectory(atPath: center.preferencesRootPath.path)
        XCTAssertTrue(children.contains("common"), "\(children)")
        XCTAssertTrue(children.contains { $0.hasPrefix("user-") }, "\(children)")
    }

    /// DC 2.1.3 commonPreferences: "The user independent global storage database": the same data
    /// whoever is logged in. Overview 1.1: "The business layer does not need to care about the
    /// switches of users".
    func testCommonPreferencesAreUserIndependent() throws {
        try prefs.set(9, forKey: "k", business: "b")
        try center.setCurrentUserId("alice")
        XCTAssertEqual(center.commonPreferences.integer(forKey: "k", business: "b"), 9)
        try center.setCurrentUserId("bob")
        XCTAssertEqual(center.commonPreferences.integer(forKey: "k", business: "b"), 9)
        XCTAssertEqual(center.userPreferences?.integer(forKey: "k", business: "b", default: -1), -1)
    }

    /// DC 2.1.3 preferencesForUser: "Return the storage object of the specified user ID ... to
    /// avoid data mess-up": writes through it land in that user's database whoever is current.
    func testPreferencesForUserIsThatUsersDatabase() throws {
        try center.setCurrentUserId("alice")
        try center.preferences(forUser: "bob").set(5, forKey: "k", business: "b")
        XCTAssertEqual(center.userPreferences?.integer(forKey: "k", business: "b", default: -1), -1)
        try center.setCurrentUserId("bob")
        XCTAssertEqual(center.userPreferences?.integer(forKey: "k", business: "b"), 5)
        try center.userPreferences?.set(6, forKey: "k2", business: "b")
        XCTAssertEqual(try center.preferences(forUser: "bob").integer(forKey: "k2", business: "b"), 6)
    }

    /// DC 2.1.3 accessorForBusiness: `[[accessor commonPreferences] doubleForKey:@"aKey"]` is equal
    /// to `[commonPreferences doubleForKey:@"aKey" business:@"aBiz"]`; the same for the user's.
    func testAccessorIsTheBusinessWithoutTheArgument() throws {
        let accessor = center.accessor(forBusiness: "aBiz")
        try prefs.set(1.5, forKey: "aKey", business: "aBiz")
        XCTAssertEqual(accessor.commonPreferences.double(forKey: "aKey"), 1.5)
        try accessor.commonPreferences.setString("x", forKey: "s")
        XCTAssertEqual(prefs.string(forKey: "s", business: "aBiz"), "x")
        XCTAssertNil(prefs.string(forKey: "s", business: "other"))
        XCTAssertNil(accessor.userPreferences)
        try center.setCurrentUserId("alice")
        try XCTUnwrap(accessor.userPreferences).set(3, forKey: "u")
        XCTAssertEqual(center.userPreferences?.integer(forKey: "u", business: "aBiz"), 3)
    }

    /// DC 2.1.3 reset: "Fully reset the Data Center directories": nothing stored before is left.
    func testResetEmptiesTheDataCenter() throws {
        try prefs.set(1, forKey: "k", business: "b")
        try center.setCurrentUserId("alice")
        try center.userPreferences?.set(1, forKey: "k", business: "b")
        try center.reset()
        XCTAssertEqual(center.commonPreferences.integer(forKey: "k", business: "b", default: -1), -1)
        XCTAssertEqual(try center.preferences(forUser: "alice").integer(forKey: "k", business: "b", default: -1), -1)
    }

    /// DC 2.1.3 currentVersionStorage: "When the version is upgraded, the database will be
    /// reset"; the same version keeps it.
    func testCurrentVersionStorageResetsOnUpgrade() throws {
        let folder = makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            let v1 = try DataCenter(root: folder, appKey: "k", appVersion: "1.0")
            try v1.currentVersionStorage.commonPreferences.set(1, forKey: "k")
        }
        do {
            let again = try DataCenter(root: folder, appKey: "k", appVersion: "1.0")
            XCTAssertEqual(again.currentVersionStorage.commonPreferences.integer(forKey: "k", default: -1), 1)
        }
        let v2 = try DataCenter(root: folder, appKey: "k", appVersion: "2.0")
        XCTAssertEqual(v2.currentVersionStorage.commonPreferences.integer(forKey: "k", default: -1), -1)
    }

    /// DC 2.1.2 "Constant definition": kAPDataCenterWillLastUserResign before the previous
    /// user's database closes, kAPDataCenterDidUserUpdated with @"switched" = YES, and
    /// kAPDataCenterDidUserRenew when the same user signs in again.
    func testUserNotifications() throws {
        let log = Recorder<String>()
        let names: [Notification.Name] = [.dataCenterWillLastUserResign, .dataCenterDidUserUpdate, .dataCenterDidUserRenew]
        let observers = names.map { name in
            NotificationCenter.default.addObserver(forName: name, object: center, queue: nil) { note in
                let switched = (note.userInfo?["switched"] as? Bool).map { " switched=\($0)" } ?? ""
                log.append(name.rawValue + switched)
            }
        }
        defer { observers.forEach(NotificationCenter.default.removeObserver) }
        try center.setCurrentUserId("alice")
        try center.setCurrentUserId("alice")
        try center.setCurrentUserId("bob")
        let update = Notification.Name.dataCenterDidUserUpdate.rawValue
        XCTAssertEqual(log.all, [
            update + " switched=true",
            Notification.Name.dataCenterDidUserRenew.rawValue,
            Notification.Name.dataCenterWillLastUserResign.rawValue,
            update + " switched=true",
        ])
    }

    /// DC 2.1.3 daoWithPath:databasePath: "If the file does not exist, it will be created.
    /// Multiple DAO objects can be created pointing to the same databasePath"; "relative paths
    /// such as 'Documents/XXXX.db' or 'Library/Movie/XXX.db' both work".
    func testDAOWithDatabasePathSharedAndRelative() throws {
        let config = try notesConfig()
        let first = try center.dao(configPath: config, databasePath: URL(fileURLWithPath: "Library/Movie/notes.db", relativeTo: nil))
        let second = try center.dao(configPath: config, databasePath: URL(fileURLWithPath: "Library/Movie/notes.db", relativeTo: nil))
        _ = try first.add(text: "one")
        XCTAssertEqual(try second.count() as? Int, 1)
        XCTAssertTrue(FileManager.default.fileExists(atPath: root.appendingPathComponent("Library/Movie/notes.db").path))
        let documents = try center.dao(configPath: config, databasePath: URL(string: "Documents/other.db")!)
        XCTAssertEqual(try documents.count() as? Int, 0, "another file is another database")
        XCTAssertTrue(FileManager.default.fileExists(atPath: root.appendingPathComponent("Documents/other.db").path))
    }

    private func notesConfig() throws -> URL {
        let config = root.appendingPathComponent("notes-\(UUID().uuidString).xml")
        try """
        <module name="Notes" initializer="create" tableName="notes" version="1.0">
          <update id="create">create table if not exists ${T} (id integer primary key, text text)</update>
          <insert id="add" arguments="text">insert into ${T} (text) values (#{text})</insert>
          <select id="count" result="int">select count(*) from ${T}</select>
        </module>
        """.write(to: config, atomically: true, encoding: .utf8)
        return config
    }

    /// DC 2.1.3 daoWithPath:userDependent: "If userDependent=NO ... DAO will create tables in the
    /// database files of commonPreferences. If userDependent=YES, DAO will create tables in the
    /// database files of userPreferences. After the user is switched, the subsequent DAO
    /// operations will automatically switch to the files of the new user". Overview 1.2:
    /// APSharedPreferences "stores DAO-created tables".
    func testDAOTablesLiveInThePreferencesDatabases() throws {
        let config = try notesConfig()
        let common = try center.dao(configPath: config, userDependent: false)
        let perUser = try center.dao(configPath: config, userDependent: true)
        _ = try common.add(text: "c")
        XCTAssertEqual(try center.commonPreferences.store().sql("select count(*) from notes"), [[.integer(1)]])
        try center.setCurrentUserId("alice")
        _ = try perUser.add(text: "a1")
        _ = try perUser.add(text: "a2")
        XCTAssertEqual(try center.preferences(forUser: "alice").store().sql("select count(*) from notes"), [[.integer(2)]])
        try center.setCurrentUserId("bob")
        XCTAssertEqual(try perUser.count() as? Int, 0)
        XCTAssertEqual(try common.count() as? Int, 1)
    }

    // MARK: custom_storage/summary.md

    /// CS 2.5.1: `storageInDocumentsWithName:@"Contact"` "will create a 'Documents/Contact'
    /// directory. The 'commonPreferences' ... and the 'userPreferences' ... also exist in the
    /// directory"; "the business also needs to pay no attention to user switching".
    func testCustomStorageInDocumentsWithCommonAndUserPreferences() throws {
        let storage = try CustomStorage.named("Contact")
        defer { try? storage.close() }
        let folder = root.appendingPathComponent("Documents/Contact")
        var isDirectory: ObjCBool = false
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory) && isDirectory.boolValue)
        // commonPreferences: only the key is required.
        try storage.commonPreferences.set(1, forKey: "k")
        XCTAssertEqual(storage.commonPreferences.integer(forKey: "k"), 1)
        XCTAssertEqual(prefs.integer(forKey: "k", business: "", default: -1), -1, "not the DataCenter's")
        // userPreferences: nil when not logged in, then the current user's, following switches.
        XCTAssertNil(storage.userPreferences)
        try center.setCurrentUserId("alice")
        try XCTUnwrap(storage.userPreferences).set(2, forKey: "u")
        try center.setCurrentUserId("bob")
        XCTAssertEqual(storage.userPreferences?.integer(forKey: "u", default: -1), -1)
        try center.setCurrentUserId("alice")
        XCTAssertEqual(storage.userPreferences?.integer(forKey: "u"), 2)
        try storage.commonPreferences.sync()
        let children = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        XCTAssertTrue(children.contains("common"), "\(children)")
        XCTAssertTrue(children.contains { $0.hasPrefix("user-") }, "\(children)")
    }

    /// CS 2.5.1 daoWithPath:userDependent: "Refer to the homonymic interface in APDataCenter":
    /// tables in the storage's common database, or the current user's, following switches.
    func testCustomStorageDAOFollowsTheDataCenterInterface() throws {
        let storage = try CustomStorage.named("WithDAO")
        defer { try? storage.close() }
        let config = try notesConfig()
        let common = try storage.dao(configPath: config, userDependent: false)
        let perUser = try storage.dao(configPath: config, userDependent: true)
        _ = try common.add(text: "c")
        XCTAssertEqual(try common.count() as? Int, 1)
        XCTAssertThrowsError(try center.commonPreferences.store().sql("select count(*) from notes"), "not in the DataCenter's database")
        XCTAssertThrowsError(try perUser.count()) { error in
            guard case StoreError.noCurrentUser = error else { return XCTFail("\(error)") }
        }
        try center.setCurrentUserId("alice")
        _ = try perUser.add(text: "a")
        try center.setCurrentUserId("bob")
        XCTAssertEqual(try perUser.count() as? Int, 0)
        try center.setCurrentUserId("alice")
        XCTAssertEqual(try perUser.count() as? Int, 1)
    }

    /// CS 2.5.1 initWithPath: "When multiple APCustomStorages share the same path, errors will
    /// occur": the second is refused with a typed error while the first is live.
    func testTwoCustomStoragesOnOnePathAreRefused() throws {
        let path = root.appendingPathComponent("Mine")
        let first = try CustomStorage(path: path)
        XCTAssertThrowsError(try CustomStorage(path: path)) { error in
            guard case StoreError.alreadyOpen = error else { return XCTFail("\(error)") }
        }
        try first.close()
        let again = try CustomStorage(path: path)
        try again.close()
    }

    // MARK: faq.md

    /// FAQ 3.2: the application may pass its own 32-byte default key; data written with the
    /// default encryption under one key is not readable under another (the store refuses the
    /// wrong key), and a key that is not 32 bytes is refused.
    func testOwnDefaultKey() throws {
        let folder = makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = [UInt8](repeating: 7, count: 32)
        do {
            let keyed = try DataCenter(root: folder, appKey: "app", defaultKey: key, appVersion: "1")
            try keyed.commonPreferences.setString("s", forKey: "k", business: "b", crypt: .default)
        }
        do {
            let same = try DataCenter(root: folder, appKey: "app", defaultKey: key, appVersion: "1")
            XCTAssertEqual(same.commonPreferences.string(forKey: "k", business: "b"), "s")
        }
        let other = [UInt8](repeating: 8, count: 32)
        XCTAssertThrowsError(try DataCenter(root: folder, appKey: "app", defaultKey: other, appVersion: "1").commonPreferences.store()) { error in
            guard case StoreError.wrongKey = error else { return XCTFail("\(error)") }
        }
        let short = makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: short) }
        XCTAssertThrowsError(try DataCenter(root: short, appKey: "app", defaultKey: [1, 2, 3], appVersion: "1"))
    }

    /// FAQ 3.2: without its own key, "Its key will be automatically generated by the appKey":
    /// the same appKey reads default-encrypted data back; another appKey is another key.
    func testDefaultKeyDerivedFromTheAppKey() throws {
        let folder = makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            let first = try DataCenter(root: folder, appKey: "app-one", appVersion: "1")
            try first.commonPreferences.setString("s", forKey: "k", business: "b", crypt: .default)
        }
        do {
            let same = try DataCenter(root: folder, appKey: "app-one", appVersion: "1")
            XCTAssertEqual(same.commonPreferences.string(forKey: "k", business: "b"), "s")
        }
        // Another appKey is another key: the store, which knows key id 1, refuses it.
        XCTAssertThrowsError(try DataCenter(root: folder, appKey: "app-two", appVersion: "1").commonPreferences.store()) { error in
            guard case StoreError.wrongKey = error else { return XCTFail("\(error)") }
        }
    }

    /// FAQ 3.3: "All the storage interfaces of Data Center ... can be called in any thread."
    func testCallsFromManyThreads() throws {
        try center.setCurrentUserId("alice")
        let center = self.center!
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for i in 0..<50 {
                try? center.commonPreferences.set(i, forKey: "t\(thread)", business: "b")
                try? center.userPreferences?.setString("\(i)", forKey: "t\(thread)", business: "b")
                _ = center.commonPreferences.integer(forKey: "t\(thread)", business: "b")
            }
        }
        for thread in 0..<8 {
            XCTAssertEqual(center.commonPreferences.integer(forKey: "t\(thread)", business: "b"), 49)
            XCTAssertEqual(center.userPreferences?.string(forKey: "t\(thread)", business: "b"), "49")
        }
    }
}

/// Whether any file under `folder` contains `needle` (for "stored plain" / "not stored plain").
func storeFilesContain(_ needle: [UInt8], under folder: URL) throws -> Bool {
    guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else { return false }
    for case let url as URL in walker {
        guard let data = try? Data(contentsOf: url), data.count >= needle.count else { continue }
        if data.range(of: Data(needle)) != nil { return true }
    }
    return false
}
