@testable import DAO
import Foundation
import LogStore
import XCTest

/// Dynamic SQL run end to end: each call's rows on the product's engine must equal SQLite's for
/// the same generated SQL, and SQLite's answers are checked against what the elements mean.
final class XMLDynamicSQLTests: XCTestCase {
    static let config = """
    <module name = "Dyn" tableName = "people" initializer = "create" version = "1.0">
      <const name="cols" value="id, name, age"/>
      <const name="order" value="%{'order by * desc', age}"/>
      <sql id="filters">
        <if true="minAge != nil">and age >= #{minAge}</if>
        <if true="names.count > 0">and name in <foreach item="n" collection="names" open="(" separator="," close=")">#{n}</foreach></if>
      </sql>
      <update id="create">create table if not exists ${T} (id integer primary key, name text, age integer, note text)</update>
      <insert id="add" arguments="people" foreach="people.p">insert into ${T} (${cols}) values (%{'#{p.*}', id, name, age})</insert>
      <select id="find" arguments="minAge, names" result="[string]">
        select name from ${T} <trim prefix="where" prefixOverrides="and">${filters}</trim> ${order}
      </select>
      <select id="pick" arguments="mode" result="[int]">
        select id from ${T} where
        <choose>
          <when true="mode == 'young'">age &lt; 30</when>
          <when true="mode == 'old'">age >= 30</when>
          <otherwise>1 = 1</otherwise>
        </choose>
        order by id
      </select>
      <update id="touch" arguments="id, name, note">
        update ${T} <set><if true="name != nil">name = #{name},</if><if true="note != nil">note = @{note},</if></set> where id = #{id}
      </update>
      <select id="trimmed" arguments="a, b" result="[int]">
        select id from ${T}
        <trim prefix="where" prefixOverrides="and |or " onVoid="quit"><if true="a">and age > 30</if> <if true="b">or name = 'ann'</if></trim>
        order by id
      </select>
      <select id="ordered" arguments="ids" result="[int]">
        select id from ${T} where id in (<foreach item="i" collection="ids" separator="," reverse="true">@{i}</foreach>) order by id
      </select>
      <select id="schema" result="string">select name from ${T} where id = 1</select>
      <select id="star" result="[{}]">select *from ${T} order by id</select>
    </module>
    """

    private var directories: [URL] = []
    override func tearDown() { for d in directories { try? FileManager.default.removeItem(at: d) } }

    private func proxies() throws -> [(String, DAOProxy)] {
        var list: [(String, DAOProxy)] = [("sqlite", try DAOProxy.testing(Self.config, runner: try XMLSQLiteRunner()))]
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dao-xml-dyn-\(UUID().uuidString)")
        directories.append(directory)
        let store = try LogStore(directory: directory)
        if let db = try? SQLDatabase.attached(to: store), (try? db.execute("SELECT 1")) != nil {
            list.append(("logstore", try DAOProxy.testing(Self.config, runner: db)))
        }
        return list
    }

    func testDynamicElementsEndToEnd() throws {
        var answers: [String: String] = [:]
        for (name, proxy) in try proxies() {
            let people: [[String: Any]] = [["id": 1, "name": "ann", "age": 25], ["id": 2, "name": "bob", "age": 35],
                                           ["id": 3, "name": "cy", "age": 45]]
            XCTAssertEqual((try proxy.add(people: people) as? DAOResult)?.changedRowCount, 3, name)
            var out: [String] = []
            let all = try proxy.call("find", ["minAge": nil, "names": [String]()]) as? [String]
            XCTAssertEqual(all, ["cy", "bob", "ann"], name)
            let older = try proxy.find(minAge: 30, names: ["ann", "bob"]) as? [String]
            XCTAssertEqual(older, ["bob"], name)
            XCTAssertEqual(try proxy.pick(mode: "young") as? [Int], [1], name)
            XCTAssertEqual(try proxy.pick(mode: "old") as? [Int], [2, 3], name)
            XCTAssertEqual(try proxy.pick(mode: nil) as? [Int], [1, 2, 3], name)
            XCTAssertEqual((try proxy.touch(id: 2, name: "rob", note: "it's") as? DAOResult)?.changedRowCount, 1, name)
            XCTAssertEqual((try proxy.touch(id: 3, name: nil, note: "n") as? DAOResult)?.changedRowCount, 1, name)
            XCTAssertEqual(try proxy.trimmed(a: true, b: true) as? [Int], [1, 2, 3], name)
            XCTAssertEqual(try proxy.trimmed(a: false, b: true) as? [Int], [1], name)
            XCTAssertEqual(try proxy.trimmed(a: false, b: false) as? [Int], [], name)
            XCTAssertEqual(try proxy.ordered(ids: [3, 1]) as? [Int], [1, 3], name)
            // A method named like a proxy member is reached through call.
            XCTAssertEqual(try proxy.call("schema") as? String, "ann", name)
            out.append(describe(try proxy.star()))
            out.append(describe(all) + describe(older))
            answers[name] = out.joined(separator: "\n")
        }
        if let ours = answers["logstore"] { XCTAssertEqual(ours, answers["sqlite"]) }
        XCTAssertTrue(answers["sqlite"]?.contains("it''s") == false && answers["sqlite"]?.contains("it's") == true)
    }

    /// Calls from several threads on one proxy (the product's engine serializes statements and
    /// transactions): every foreach insert lands, the table is set up once.
    func testConcurrentCallsOnOneProxy() throws {
        guard let (_, proxy) = try proxies().first(where: { $0.0 == "logstore" }) else {
            throw XCTSkip("SQL engine not built on this branch")
        }
        let created = EventLog()
        proxy.eventHandler = created.handler(answer: true)
        let failures = EventLog()
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for batch in 0..<5 {
                let people: [[String: Any]] = (0..<3).map { ["id": worker * 100 + batch * 10 + $0, "name": "w\(worker)", "age": 20] }
                do { _ = try proxy.add(people: people) } catch { _ = failures.handler(answer: true)(.upgradeFailed(table: "", message: "\(error)")) }
            }
        }
        XCTAssertEqual(failures.all, [])
        XCTAssertEqual(try proxy.executeQuery(sql: "SELECT count(*) AS n FROM people"), [["n": .integer(60)]])
        XCTAssertEqual(created.all, ["tableCreated(\"people\")"])
    }

    /// One thread's transactions roll back while others insert: the others' foreach calls run in
    /// transactions of their own (not inside the rolled-back one), so all their rows stay.
    func testTransactionsOfOneThreadDoNotSwallowAnothersCalls() throws {
        guard let (_, proxy) = try proxies().first(where: { $0.0 == "logstore" }) else {
            throw XCTSkip("SQL engine not built on this branch")
        }
        _ = try proxy.call("find", ["minAge": nil, "names": nil])
        let failures = EventLog()
        DispatchQueue.concurrentPerform(iterations: 3) { worker in
            for round in 0..<5 {
                let people: [[String: Any]] = (0..<2).map { ["id": worker * 100 + round * 10 + $0, "name": "w", "age": 1] }
                do {
                    if worker == 0 {
                        _ = try? proxy.transaction { p -> Void in
                            _ = try p.add(people: people)
                            throw DAOError.unsupported("roll back")
                        }
                    } else {
                        _ = try proxy.add(people: people)
                    }
                } catch {
                    _ = failures.handler(answer: true)(.upgradeFailed(table: "", message: "\(error)"))
                }
            }
        }
        XCTAssertEqual(failures.all, [])
        XCTAssertEqual(try proxy.executeQuery(sql: "SELECT count(*) AS n FROM people WHERE id >= 100"), [["n": .integer(20)]])
        XCTAssertEqual(try proxy.executeQuery(sql: "SELECT count(*) AS n FROM people WHERE id < 100"), [["n": .integer(0)]])
    }
}
