import DAO
import Foundation
import LogStore
@testable import Preferences
import XCTest

/// `dao(configPath:userDependent:)` and `dao(configPath:databasePath:)` of DataCenter and
/// CustomStorage: which store the tables live in, following the current user.
final class XMLDAOFactoryTests: PreferencesTestCase {
    static let config = """
    <module name="Notes" initializer="create" tableName="notes" version="1.0">
      <update id="create">create table if not exists ${T} (id integer primary key, text text)</update>
      <insert id="add" arguments="$text">insert into ${T} (text) values (#{text})</insert>
      <select id="count" result="int">select count(*) from ${T}</select>
    </module>
    """

    private func writeConfig(_ text: String = XMLDAOFactoryTests.config) throws -> URL {
        let url = root.appendingPathComponent("notes-\(UUID().uuidString).xml")
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    /// Whether the SQL engine is built on this branch (the calls below need it).
    private func requireEngine() throws {
        let store = try center.commonPreferences.store()
        guard (try? SQLDatabase.attached(to: store).execute("SELECT 1")) != nil else {
            throw XCTSkip("SQL engine not built on this branch")
        }
    }

    func testMalformedConfigFailsAtCreationWithLineAndColumn() throws {
        let url = try writeConfig("<module>\n  <select id=\"a\">select 1</selec>\n</module>")
        XCTAssertThrowsError(try center.dao(configPath: url, userDependent: false)) { error in
            guard case DAOError.config(_, let line, let column) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(line, 2)
            XCTAssertEqual(column, 28)
        }
    }

    func testUserDependentProxyWithoutUserThrowsNoCurrentUser() throws {
        let proxy = try center.dao(configPath: try writeConfig(), userDependent: true)
        XCTAssertThrowsError(try proxy.count()) { error in
            guard case StoreError.noCurrentUser = error else { return XCTFail("\(error)") }
        }
    }

    func testUserDependentProxyFollowsTheCurrentUser() throws {
        try requireEngine()
        let url = try writeConfig()
        let common = try center.dao(configPath: url, userDependent: false)
        let perUser = try center.dao(configPath: url, userDependent: true)
        try center.setCurrentUserId("u1")
        _ = try perUser.add(text: "u1 note")
        _ = try perUser.add(text: "u1 note 2")
        try center.setCurrentUserId("u2")
        XCTAssertEqual(try perUser.count() as? Int, 0)
        _ = try perUser.add(text: "u2 note")
        XCTAssertEqual(try common.count() as? Int, 0)
        try center.setCurrentUserId("u1")
        XCTAssertEqual(try perUser.count() as? Int, 2)
        XCTAssertThrowsError(try perUser.add(text: nil)) { error in
            guard case DAOError.nilArgument("text") = error else { return XCTFail("\(error)") }
        }
    }

    func testDatabasePathProxiesShareAStore() throws {
        try requireEngine()
        let url = try writeConfig()
        let a = try center.dao(configPath: url, databasePath: URL(string: "Documents/notes.db")!)
        let b = try center.dao(configPath: url, databasePath: root.appendingPathComponent("Documents/notes.db"))
        _ = try a.add(text: "shared")
        XCTAssertEqual(try b.count() as? Int, 1)
        XCTAssertTrue(FileManager.default.fileExists(atPath: root.appendingPathComponent("Documents/notes.db").path))
        let common = try center.dao(configPath: url, userDependent: false)
        XCTAssertEqual(try common.count() as? Int, 0)
        // A reset closes the database store: proxies made before throw closed, new ones start empty.
        try center.reset()
        // (A write: reads of a closed store's tables are served from the engine's memory, see
        // /work/dao-findings.md, dao-xml 06:31.)
        XCTAssertThrowsError(try a.add(text: "after reset")) { error in
            guard case StoreError.closed = error else { return XCTFail("\(error)") }
        }
        let fresh = try center.dao(configPath: try writeConfig(), databasePath: URL(string: "Documents/notes.db")!)
        XCTAssertEqual(try fresh.count() as? Int, 0)
    }

    func testCustomStorageProxies() throws {
        try requireEngine()
        let url = try writeConfig()
        let folder = makeTemporaryFolder()
        let storage = try CustomStorage(path: folder)
        defer {
            try? storage.close()
            try? FileManager.default.removeItem(at: folder)
        }
        let common = try storage.dao(configPath: url, userDependent: false)
        let perUser = try storage.dao(configPath: url, userDependent: true)
        XCTAssertThrowsError(try perUser.count())
        try center.setCurrentUserId("u1")
        _ = try perUser.add(text: "x")
        XCTAssertEqual(try perUser.count() as? Int, 1)
        XCTAssertEqual(try common.count() as? Int, 0)
        try center.setCurrentUserId("u2")
        XCTAssertEqual(try perUser.count() as? Int, 0)
    }

    /// The demo config of issue 19, run unchanged through `DataCenter.default.dao(configPath:
    /// userDependent:)` as a new user would: its `<const>` holds the `%{...}` macro of
    /// quick_style.md ("Shortcut syntax"), which failed to load when it was read printf-style.
    func testDemoConfigWithTheMacroThroughDataCenterDefault() throws {
        try requireEngine()
        let url = try writeConfig("""
        <module name="Demo" initializer="createTable" tableName="demo_info" version="1.0">
        <const table_columns="(code, name)"/>
        <const table_values="%{'#{m.*}',code,name}"/>
        <update id="createTable">create table if not exists ${T} (code text primary key, name text)</update>
        <insert id = "save_info" arguments = "m">
            replace into ${T} ${table_columns} values(${table_values})
        </insert>
        <select id="name" arguments="code" result="string">select name from ${T} where code = #{code}</select>
        </module>
        """)
        try DataCenter.default.setCurrentUserId("demo-user")
        let proxy = try DataCenter.default.dao(configPath: url, userDependent: true)
        _ = try proxy.save_info(["code": "c1", "name": "first"])
        _ = try proxy.save_info(["code": "c1", "name": "second"])
        XCTAssertEqual(try proxy.name("c1") as? String, "second")
        // transaction.md: calls between begin and rollback are undone together.
        try proxy.beginTransaction()
        _ = try proxy.save_info(["code": "c2", "name": "gone"])
        try proxy.rollback()
        XCTAssertNil(try proxy.name("c2"))
    }

    /// transaction.md: `[APUserPreferences daoTransaction:...]` equals the proxy's own
    /// daoTransaction when the proxy is userDependent (APCommonPreferences' when it is not).
    func testPreferencesDaoTransactionCoversTheProxysCalls() throws {
        try requireEngine()
        let url = try writeConfig()
        try center.setCurrentUserId("u1")
        let perUser = try center.dao(configPath: url, userDependent: true)
        let common = try center.dao(configPath: url, userDependent: false)
        _ = try perUser.add(text: "kept")
        let user = try XCTUnwrap(center.userPreferences)
        try user.daoTransaction(.begin)
        _ = try perUser.add(text: "a")
        _ = try perUser.add(text: "b")
        try user.daoTransaction(.rollback)
        XCTAssertEqual(try perUser.count() as? Int, 1)
        try perUser.daoTransaction(.begin)
        _ = try perUser.add(text: "c")
        try user.daoTransaction(.commit)
        XCTAssertEqual(try perUser.count() as? Int, 2)
        try center.commonPreferences.daoTransaction(.begin)
        _ = try common.add(text: "d")
        try center.commonPreferences.daoTransaction(.rollback)
        XCTAssertEqual(try common.count() as? Int, 0)
        XCTAssertThrowsError(try user.daoTransaction(.commit))
    }
}
