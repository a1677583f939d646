import Foundation
import XCTest

/// `ustore dao DIR CONFIG METHOD [NAME=VALUE ...]`.
final class DaoCommandTests: UstoreTestCase {
    static let config = """
        <module name="People" tableName="people" initializer="create">
          <update id="create">create table if not exists ${T} (id integer primary key, name text, age integer, photo blob)</update>
          <insert id="add" arguments="name, age">insert into ${T}(name, age) values (#{name}, #{age})</insert>
          <insert id="addAll" arguments="items" foreach="items.item">insert into ${T}(name, age) values (#{item.name}, #{item.age})</insert>
          <select id="count" result="int">select count(*) from ${T}</select>
          <select id="older" arguments="age" result="[{}]">select name, age from ${T} where age > #{age} order by age</select>
          <select id="names" result="[string]">select name from ${T} order by id</select>
          <select id="byName" arguments="name" result="{}">select id, name, age from ${T} where name = #{name}</select>
        </module>
        """

    func writeConfig(next store: URL, _ text: String = DaoCommandTests.config) throws -> String {
        let url = store.deletingLastPathComponent().appendingPathComponent("people.xml")
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    func testMethodsRunWithTypedArgumentsAndPrintJSON() throws {
        let store = try makeStorePath()
        let config = try writeConfig(next: store)
        let added = try parseObject(try ustoreOK(["dao", store.path, config, "add", "name=ann", "age=41"]).stdoutText)
        XCTAssertEqual(added["succeeded"] as? Bool, true)
        XCTAssertEqual(added["changedRowCount"] as? Int, 1)
        XCTAssertEqual(added["lastInsertRowId"] as? Int, 1)
        // A foreach method takes a JSON array; a quoted JSON string stays text.
        try ustoreOK(["dao", store.path, config, "addAll", #"items=[{"name":"bob","age":29},{"name":"42","age":7}]"#])
        XCTAssertEqual(try ustoreOK(["dao", store.path, config, "count"]).stdoutText, "3\n")
        XCTAssertEqual(try ustoreOK(["dao", store.path, config, "older", "age=10"]).stdoutText,
                       #"[{"age":29,"name":"bob"},{"age":41,"name":"ann"}]"# + "\n")
        XCTAssertEqual(try ustoreOK(["dao", store.path, config, "names"]).stdoutText, #"["ann","bob","42"]"# + "\n")
        XCTAssertEqual(try ustoreOK(["dao", store.path, config, "byName", #"name="42""#]).stdoutText,
                       #"{"age":7,"id":3,"name":"42"}"# + "\n")
        XCTAssertEqual(try ustoreOK(["dao", store.path, config, "byName", "name=nobody"]).stdoutText, "null\n")
        // The rows are the store's: `sql` sees them.
        XCTAssertEqual(try ustoreOK(["sql", store.path, "SELECT count(*) FROM people"]).stdoutText, #"{"ok":true,"rows":[[3]]}"# + "\n")
    }

    func testBadConfigMethodAndArgumentsFailWithAMessage() throws {
        let store = try makeStorePath()
        let config = try writeConfig(next: store)
        let unknown = try ustore(["dao", store.path, config, "nope"])
        XCTAssertEqual(unknown.status, 2)
        XCTAssertTrue(unknown.stderr.contains("nope"), unknown.stderr)
        let broken = try writeConfig(next: store, "<module name=\"X\">\n  <select id=\"a\">select 1</selec>\n</module>")
        let bad = try ustore(["dao", store.path, broken, "a"])
        XCTAssertEqual(bad.status, 2)
        XCTAssertTrue(bad.stderr.contains("line 2"), bad.stderr)
        XCTAssertEqual(try ustore(["dao", store.path, config, "add", "noequals"]).status, 64)
    }
}
