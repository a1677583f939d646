@testable import DAO
import Foundation
import LogStore
import XCTest

/// Config calls through the proxy. Each test runs on SQLite (the oracle: the expected values
/// are what SQLite answers for the SQL the proxy generates) and, once the engine is built, on
/// `SQLDatabase` over a LogStore, whose answers must equal SQLite's.
final class XMLProxyTests: XMLEngineTestCase {
    struct Message: Codable, Equatable {
        var msgId: String
        var time: Int
        var content: String?
        var unread: Bool
    }

    struct DemoModel: Encodable {
        var name: String
        var age: Int
        var score: Double
    }

    override class func setUp() {
        DAOTypeRegistry.register(Message.self, as: "Message")
    }

    private static func messages() -> [Message] {
        [Message(msgId: "a", time: 1, content: "hello", unread: true),
         Message(msgId: "b", time: 2, content: nil, unread: false),
         Message(msgId: "c", time: 3, content: "it's", unread: true)]
    }

    // MARK: Public initializers

    func testConfigFileOnAStoreThroughThePublicInitializers() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dao-xml-file-\(UUID().uuidString)")
        directories.append(directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("messages.xml")
        try XMLCorpus.messages.write(to: file, atomically: true, encoding: .utf8)
        let store = try LogStore(directory: directory.appendingPathComponent("store"))
        let fromFile = try DAOProxy(contentsOf: file, store: store)
        _ = try fromFile.addMessages(messages: Self.messages())
        let fromText = try DAOProxy(configText: XMLCorpus.messages, store: store)
        XCTAssertEqual(try fromText.countMessages() as? Int, 3)
        XCTAssertThrowsError(try DAOProxy(contentsOf: directory.appendingPathComponent("missing.xml"), store: store))
        XCTAssertThrowsError(try DAOProxy(configText: "<module>", store: store)) { error in
            guard case DAOError.config(_, 1, _) = error else { return XCTFail("\(error)") }
        }
    }

    // MARK: The message table

    func testMessageTableInStyleOfSourceExamples() throws {
        try onEveryEngine { runner in
            let proxy = try DAOProxy.testing(XMLCorpus.messages, runner: runner)
            let log = EventLog()
            proxy.eventHandler = log.handler(answer: true)
            let added = try XCTUnwrap(try proxy.call("addMessages", ["messages": Self.messages()]) as? DAOResult)
            XCTAssertEqual(added.changedRowCount, 3)
            XCTAssertEqual(added.flags, [.none, .none, .none])
            XCTAssertEqual(log.all, ["tableCreated(\"messages\")"])
            // insert or replace: the same ids again replace, not add.
            _ = try proxy.addMessages(messages: Self.messages())
            XCTAssertEqual(try proxy.call("countMessages") as? Int, 3)
            XCTAssertEqual(try proxy.call("getMessage", ["msgId": "c"]) as? Message, Self.messages()[2])
            XCTAssertNil(try proxy.call("getMessage", ["msgId": "zz"]))
            XCTAssertEqual(try proxy.getMessage(msgId: "a") as? Message, Self.messages()[0])
            XCTAssertEqual(try proxy.getMessage("b") as? Message, Self.messages()[1])
            let since = try XCTUnwrap(try proxy.call("getMessagesSince", positional: [2, nil]) as? [Message])
            XCTAssertEqual(since.map(\.msgId), ["b", "c"])
            let limited = try XCTUnwrap(try proxy.getMessagesSince(time: 1, limit: 1) as? [Message])
            XCTAssertEqual(limited.map(\.msgId), ["a"])
            let mapped = try XCTUnwrap(try proxy.call("getMessageMapped", ["msgId": "b"]) as? [String: Any])
            XCTAssertEqual(mapped["id"] as? String, "b")
            XCTAssertEqual(mapped["time"] as? Int, 2)
            XCTAssertEqual(try proxy.messageTexts() as? [String], ["hello", "", "it's"])
            let deleted = try XCTUnwrap(try proxy.deleteMessages(ids: ["a", "c", "nope"]) as? DAOResult)
            XCTAssertEqual(deleted.changedRowCount, 2)
            XCTAssertEqual(proxy.lastChangedRowCount, 2)
            XCTAssertEqual(try proxy.call("getMessage", as: Message.self), nil)
            XCTAssertEqual(try proxy.call("getMessage", ["msgId": "b"], as: Message.self)?.time, 2)
            XCTAssertEqual(try proxy.storedVersion(), "1.1")
            return "\(since.count) \(deleted.changedRowCount) \(describe(mapped))"
        }
    }

    func testDollarArgumentsRefuseNilAndUnknownMethodsThrow() throws {
        let proxy = try DAOProxy.testing(XMLCorpus.messages, runner: try XMLSQLiteRunner())
        XCTAssertThrowsError(try proxy.call("addMessages", ["messages": nil])) { error in
            guard case DAOError.nilArgument("messages") = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try proxy.call("nothing")) { error in
            guard case DAOError.noSuchMethod = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try proxy.call("getMessage", positional: [1, 2, 3])) { error in
            guard case DAOError.noSuchMethod = error else { return XCTFail("\(error)") }
        }
    }

    // MARK: Results

    static let results = """
    <module name="R" tableName="r" initializer="create">
      <update id="create">create table if not exists ${T} (i integer, r real, s text, b blob)</update>
      <insert id="add" arguments="i, r, s, b">insert into ${T} values (#{i}, #{r}, #{s}, #{b})</insert>
      <select id="int" result="int">select i from ${T} order by i</select>
      <select id="long" result="long long">select i from ${T} order by i</select>
      <select id="bool" result="bool">select i from ${T} order by i</select>
      <select id="double" result="double">select r from ${T} order by i</select>
      <select id="string" result="string">select s from ${T} order by i</select>
      <select id="binary" result="binary">select b from ${T} order by i</select>
      <select id="row" result="{}">select * from ${T} order by i</select>
      <select id="ints" result="[int]">select i from ${T} order by i</select>
      <select id="longs" result="[long long]">select i from ${T} order by i</select>
      <select id="bools" result="[bool]">select i from ${T} order by i</select>
      <select id="doubles" result="[double]">select r from ${T} order by i</select>
      <select id="strings" result="[string]">select s from ${T} order by i</select>
      <select id="binaries" result="[binary]">select b from ${T} order by i</select>
      <select id="rows" result="[{}]">select * from ${T} order by i</select>
      <select id="plain">select i, s from ${T} order by i</select>
      <select id="none" result="int">select i from ${T} where 0</select>
      <update id="bump" result="int">update ${T} set i = i + 10 where i >= 0</update>
      <delete id="wipe" result="bool">delete from ${T} where i > 100</delete>
      <select id="pick" arguments="i" result="string">select s from ${T} where i = #{i}</select>
      <select id="pick" arguments="i, s" result="int">select count(*) from ${T} where i = #{i} or s = #{s}</select>
    </module>
    """

    func testEveryResultFormAndOverloadsByArgumentCount() throws {
        try onEveryEngine { runner in
            let proxy = try DAOProxy.testing(Self.results, runner: runner)
            _ = try proxy.add(i: 0, r: 0.5, s: "zero", b: Data([0]))
            _ = try proxy.add(1, 1.5, "one", Data([1, 1]))
            XCTAssertEqual(try proxy.call("int") as? Int, 0)
            XCTAssertEqual(try proxy.call("long") as? Int64, 0)
            XCTAssertEqual(try proxy.call("bool") as? Bool, false)
            XCTAssertEqual(try proxy.call("double") as? Double, 0.5)
            XCTAssertEqual(try proxy.call("string") as? String, "zero")
            XCTAssertEqual(try proxy.call("binary") as? Data, Data([0]))
            let row = try XCTUnwrap(try proxy.call("row") as? [String: Any])
            XCTAssertEqual(row["s"] as? String, "zero")
            XCTAssertEqual(try proxy.call("ints") as? [Int], [0, 1])
            XCTAssertEqual(try proxy.call("longs") as? [Int64], [0, 1])
            XCTAssertEqual(try proxy.call("bools") as? [Bool], [false, true])
            XCTAssertEqual(try proxy.call("doubles") as? [Double], [0.5, 1.5])
            XCTAssertEqual(try proxy.call("strings") as? [String], ["zero", "one"])
            XCTAssertEqual(try proxy.call("binaries") as? [Data], [Data([0]), Data([1, 1])])
            XCTAssertEqual((try proxy.call("rows") as? [[String: Any]])?.count, 2)
            XCTAssertEqual((try proxy.call("plain") as? [[String: Any]])?.last?["s"] as? String, "one")
            XCTAssertNil(try proxy.call("none"))
            XCTAssertEqual(try proxy.call("pick", positional: [1]) as? String, "one")
            XCTAssertEqual(try proxy.call("pick", positional: [1, "zero"]) as? Int, 2)
            XCTAssertEqual(try proxy.pick(i: 0) as? String, "zero")
            // Unlabelled arguments of a dynamic call take the argument names by position.
            XCTAssertEqual(try proxy.pick(1, s: "zero") as? Int, 2)
            XCTAssertEqual(try proxy.bump() as? Int, 2)
            XCTAssertEqual(try proxy.wipe() as? Bool, true)
            XCTAssertEqual(try proxy.call("ints") as? [Int], [10, 11])
            _ = try proxy.add(i: 2, r: nil, s: nil, b: nil)
            XCTAssertEqual(try proxy.call("strings") as? [String], ["", "zero", "one"])
            return [describe(row), describe(try proxy.call("rows")), describe(try proxy.call("plain"))].joined(separator: "\n")
        }
    }

    // MARK: foreach, steps, try/except

    static let batches = """
    <module name="B" tableName="k" initializer="create">
      <update id="create">create table if not exists ${T} (id integer primary key, v text)</update>
      <insert id="strict" arguments="items" foreach="items.item">insert into ${T} values (#{item.id}, #{item.v})</insert>
      <insert id="lenient" arguments="items" foreach="items.item" resumable="true">insert into ${T} values (#{item.id}, #{item.v})</insert>
      <insert id="upsert" arguments="items" foreach="items.item">
        <try>insert into ${T} values (#{item.id}, #{item.v})</try>
        <except>update ${T} set v = #{item.v} where id = #{item.id}</except>
      </insert>
      <update id="steps" arguments="id">
        <step>insert into ${T} values (#{id}, 'first')</step>
        <step>insert into ${T} values (#{id}, 'duplicate')</step>
      </update>
      <update id="resumableSteps" arguments="id">
        <step>insert into ${T} values (#{id}, 'first')</step>
        <step resumable="true">insert into ${T} values (#{id}, 'duplicate')</step>
        <step>update ${T} set v = 'after' where id = #{id}</step>
      </update>
      <select id="all" result="[string]">select id || '=' || v from ${T} order by id</select>
    </module>
    """

    func testForeachIsOneTransactionAndResumableListsFailures() throws {
        try onEveryEngine { runner in
            let proxy = try DAOProxy.testing(Self.batches, runner: runner)
            let items: [[String: Any]] = [["id": 1, "v": "a"], ["id": 1, "v": "dup"], ["id": 2, "v": "b"]]
            XCTAssertThrowsError(try proxy.strict(items: items))
            XCTAssertEqual(try proxy.all() as? [String], [])
            let lenient = try XCTUnwrap(try proxy.lenient(items: items) as? DAOResult)
            XCTAssertEqual(lenient.foreachFailedObjects, [1])
            XCTAssertEqual(lenient.changedRowCount, 2)
            XCTAssertEqual(try proxy.all() as? [String], ["1=a", "2=b"])
            let upsert = try XCTUnwrap(try proxy.upsert(items: [["id": 2, "v": "B"], ["id": 3, "v": "c"]]) as? DAOResult)
            XCTAssertEqual(upsert.flags, [.exceptBlockExecuted, .tryBlockExecuted])
            XCTAssertEqual(try proxy.all() as? [String], ["1=a", "2=B", "3=c"])
            XCTAssertThrowsError(try proxy.steps(id: 9))
            XCTAssertEqual(try proxy.all() as? [String], ["1=a", "2=B", "3=c"])
            _ = try proxy.resumableSteps(id: 9)
            XCTAssertEqual(try proxy.all() as? [String], ["1=a", "2=B", "3=c", "9=after"])
            return describe(try proxy.all()) + " \(upsert.flags)"
        }
    }

    // MARK: Demo shape, forTable, direct SQL, transactions, schema calls

    func testDemoConfigShape() throws {
        try onEveryEngine { runner in
            let proxy = try DAOProxy.testing(XMLCorpus.demo, runner: runner)
            _ = try proxy.save(model: DemoModel(name: "ann", age: 30, score: 1.5))
            _ = try proxy.save(model: DemoModel(name: "bob", age: 40, score: 2))
            _ = try proxy.save(model: DemoModel(name: "ann", age: 31, score: 3.5))
            let ann = try XCTUnwrap(try proxy.load(name: "ann") as? [String: Any])
            XCTAssertEqual(ann["age"] as? Int, 31)
            XCTAssertEqual(ann["score"] as? Double, 3.5)
            XCTAssertEqual(try proxy.names() as? [String], ["ann", "bob"])
            XCTAssertEqual((try proxy.clear() as? DAOResult)?.changedRowCount, 2)
            return describe(ann)
        }
    }

    static let perTable = """
    <module name="P" initializer="create" version="1.0">
      <update id="create">create table if not exists ${T} (v integer)</update>
      <insert id="add" arguments="v">insert into ${T} values (#{v})</insert>
      <select id="sum" result="int">select coalesce(sum(v), 0) from ${T}</select>
    </module>
    """

    func testForTableDirectSQLTransactionsAndSchemaCalls() throws {
        try onEveryEngine { runner in
            let proxy = try DAOProxy.testing(Self.perTable, runner: runner)
            let log = EventLog()
            proxy.eventHandler = log.handler(answer: true)
            XCTAssertThrowsError(try proxy.sum()) { error in
                guard case DAOError.noSuchTable(let message) = error else { return XCTFail("\(error)") }
                XCTAssertTrue(message.contains("forTable"), message)
            }
            let a = proxy.forTable("ta")
            let b = proxy.forTable("tb")
            XCTAssertEqual(a.tableName, "ta")
            XCTAssertEqual((try a.add(v: 1) as? DAOResult)?.lastInsertRowId, 1)
            let second = try XCTUnwrap(try a.add(v: 2) as? DAOResult)
            XCTAssertEqual(second.lastInsertRowId, 2)
            XCTAssertEqual(second.changedRowCount, 1)
            XCTAssertEqual(second.flags, [.none])
            XCTAssertEqual(a.lastInsertRowId, 2)
            _ = try b.add(v: 10)
            XCTAssertEqual(try a.sum() as? Int, 3)
            XCTAssertEqual(try b.sum() as? Int, 10)
            XCTAssertEqual(try b.storedVersion(), "1.0")
            XCTAssertEqual(proxy.allMethods, ["add", "create", "sum"])
            let inserted = try a.executeUpdate(sql: "INSERT INTO ${T} VALUES (?)", arguments: [5])
            XCTAssertEqual(inserted.changedRowCount, 1)
            XCTAssertEqual(a.lastInsertRowId, inserted.lastInsertRowId)
            XCTAssertEqual(try a.executeQuery(sql: "SELECT count(*) AS n FROM ta"), [["n": .integer(3)]])
            XCTAssertThrowsError(try a.transaction { p -> Void in
                _ = try p.add(v: 100)
                throw DAOError.unsupported("stop")
            })
            XCTAssertEqual(try a.sum() as? Int, 8)
            try a.transaction { p in _ = try p.add(v: 100) }
            XCTAssertEqual(try a.sum() as? Int, 108)
            // A nested transaction joins the outer one: its rows go with the outer rollback.
            XCTAssertThrowsError(try a.transaction { p -> Void in
                try p.transaction { q in _ = try q.add(v: 5000) }
                XCTAssertEqual(try p.sum() as? Int, 5108)
                throw DAOError.unsupported("stop")
            })
            XCTAssertEqual(try a.sum() as? Int, 108)
            try a.beginTransaction()
            _ = try a.add(v: 1000)
            try a.rollback()
            XCTAssertEqual(try a.sum() as? Int, 108)
            XCTAssertTrue(try a.tableExists("ta"))
            XCTAssertFalse(try a.tableExists("nope"))
            let schema = try a.schema()
            XCTAssertTrue(schema.lowercased().contains("integer") && schema.contains("ta") && schema.contains("v"), schema)
            b.eventHandler = proxy.eventHandler
            try b.deleteTable()
            XCTAssertFalse(try a.tableExists("tb"))
            XCTAssertEqual(try b.sum() as? Int, 0)  // set up again on the next call
            try a.deleteTables(matchingRegex: "^t[ab]$")
            XCTAssertFalse(try a.tableExists("ta"))
            XCTAssertFalse(try a.tableExists("tb"))
            XCTAssertNil(try a.storedVersion())   // forgotten with the table
            XCTAssertEqual(log.all.filter { $0.hasPrefix("tableDeleted") }, ["tableDeleted(\"tb\")", "tableDeleted(\"ta\")", "tableDeleted(\"tb\")"])
            return "\(log.all)"
        }
    }

    // MARK: Versions

    func testUpgradeAddsColumnFromStoredVersionAndTellsHandler() throws {
        try onEveryEngine { runner in
            let v1 = try DAOProxy.testing(XMLCorpus.messagesV1, runner: runner)
            _ = try v1.add(msgId: "old", time: 1, content: "x")
            let v2 = try DAOProxy.testing(XMLCorpus.messages, runner: runner)
            let events = EventLog()
            v2.eventHandler = events.handler(answer: true)
            XCTAssertEqual(try v2.getMessage(msgId: "old") as? Message, Message(msgId: "old", time: 1, content: "x", unread: true))
            XCTAssertEqual(events.all, ["shouldUpgrade(table: \"messages\", from: \"1.0\", to: \"1.1\")"])
            XCTAssertEqual(try v2.executeQuery(sql: "SELECT extra FROM messages"), [["extra": .null]])
            XCTAssertEqual(try v2.storedVersion(), "1.1")
            // Set up once: a second call does not ask again.
            _ = try v2.countMessages()
            XCTAssertEqual(events.all.count, 1)
            return events.all.joined()
        }
    }

    func testEventHandlerMayCallTheProxy() throws {
        try onEveryEngine { runner in
            let proxy = try DAOProxy.testing(XMLCorpus.messages, runner: runner)
            let seen = EventLog()
            proxy.eventHandler = { [unowned proxy] event in
                if case .tableCreated = event {
                    let count = (try? proxy.countMessages()).map { describe($0) } ?? "threw"
                    _ = seen.handler(answer: true)(.tableCreated("count \(count)"))
                }
                return true
            }
            XCTAssertEqual(try proxy.countMessages() as? Int, 0)
            XCTAssertEqual(seen.all, ["tableCreated(\"count Int(0)\")"])
            return seen.all.joined()
        }
    }

    func testUpgradeRefusedByHandlerLeavesTableAndVersion() throws {
        try onEveryEngine { runner in
            _ = try DAOProxy.testing(XMLCorpus.messagesV1, runner: runner).add(msgId: "old", time: 1, content: "x")
            let v2 = try DAOProxy.testing(XMLCorpus.messages, runner: runner)
            v2.eventHandler = { _ in false }
            XCTAssertEqual(try v2.countMessages() as? Int, 1)
            XCTAssertThrowsError(try v2.executeQuery(sql: "SELECT extra FROM messages"))
            XCTAssertEqual(try v2.storedVersion(), "1.0")
            return "refused"
        }
    }

    func testUpgradeBlocksRunInAscendingOrderAndFailureRollsBack() throws {
        let config = { (version: String, failing: Bool) in """
            <module name="U" tableName="u" initializer="create" version="\(version)">
              <update id="create">create table if not exists ${T} (a integer)</update>
              <upgrade toVersion="1.10"><step>insert into ${T} values (110)</step></upgrade>
              <upgrade toVersion="1.2"><step>insert into ${T} values (12)</step><step>insert into ${T} values (\(failing ? "nosuchcolumn" : "13"))</step></upgrade>
              <upgrade toVersion="2.0"><step>insert into ${T} values (20)</step></upgrade>
              <select id="all" result="[int]">select a from ${T} order by rowid</select>
            </module>
            """ }
        try onEveryEngine { runner in
            _ = try DAOProxy.testing(config("1.0", false), runner: runner).all()
            let failing = try DAOProxy.testing(config("2.0", true), runner: runner)
            let events = EventLog()
            failing.eventHandler = events.handler(answer: true)
            XCTAssertThrowsError(try failing.all())
            XCTAssertEqual(events.all.count, 2)
            XCTAssertTrue(events.all[1].hasPrefix("upgradeFailed(table: \"u\""), events.all[1])
            // 1.2 ran first and was rolled back whole; 1.10 is not reached.
            XCTAssertEqual(try failing.executeQuery(sql: "SELECT a FROM u"), [])
            XCTAssertEqual(try failing.storedVersion(), "1.0")
            let good = try DAOProxy.testing(config("2.0", false), runner: runner)
            XCTAssertEqual(try good.all() as? [Int], [12, 13, 110, 20])
            XCTAssertEqual(try good.storedVersion(), "2.0")
            // The failure's message is the engine's own; compare the events' kinds.
            return events.all.map { $0.prefix { $0 != "(" } }.joined(separator: " ")
        }
    }

    func testResetOnUpgradeAndUpgradeMinVersion() throws {
        let config = { (version: String, extra: String) in """
            <module name="R" tableName="r" initializer="create" version="\(version)" \(extra)>
              <update id="create">create table if not exists ${T} (a integer)</update>
              <upgrade toVersion="3.0"><step>insert into ${T} values (3)</step></upgrade>
              <insert id="add" arguments="a">insert into ${T} values (#{a})</insert>
              <select id="all" result="[int]">select a from ${T} order by rowid</select>
            </module>
            """ }
        try onEveryEngine { runner in
            _ = try DAOProxy.testing(config("1.0", ""), runner: runner).add(a: 1)
            let reset = try DAOProxy.testing(config("2.0", "resetOnUpgrade=\"true\""), runner: runner)
            let events = EventLog()
            reset.eventHandler = events.handler(answer: true)
            XCTAssertEqual(try reset.all() as? [Int], [])
            XCTAssertEqual(events.all, ["shouldUpgrade(table: \"r\", from: \"1.0\", to: \"2.0\")", "tableDeleted(\"r\")", "tableCreated(\"r\")"])
            _ = try reset.add(a: 2)
            // Stored 2.0 is below upgradeMinVersion 2.5: reset instead of running the 3.0 block.
            let tooOld = try DAOProxy.testing(config("3.0", "upgradeMinVersion=\"2.5\""), runner: runner)
            XCTAssertEqual(try tooOld.all() as? [Int], [])
            XCTAssertEqual(try tooOld.storedVersion(), "3.0")
            return events.all.joined()
        }
    }

    // MARK: Crypt

    static let crypted = """
    <module name="C" tableName="secrets" initializer="create">
      <crypt class="Message" property="content"/>
      <update id="create">create table if not exists ${T} (msgId text primary key, time integer, content, unread integer)</update>
      <insert id="add" arguments="m">insert into ${T} values (#{m.msgId}, #{m.time}, #{m.content}, #{m.unread})</insert>
      <select id="get" arguments="msgId" result="Message">select * from ${T} where msgId = #{msgId}</select>
      <select id="raw" arguments="msgId" result="{}">select * from ${T} where msgId = #{msgId}</select>
      <map id="renamed" result="Message"><result property="msgId" column="k"/><result property="content" column="c"/></map>
      <select id="viaMap" arguments="msgId" result=":renamed">select msgId as k, time, content as c, unread from ${T} where msgId = #{msgId}</select>
      <select id="allViaMap" result="[:renamed]">select msgId as k, time, content as c, unread from ${T} order by msgId</select>
    </module>
    """

    func testCryptPropertiesUseTheProxysCrypt() throws {
        try onEveryEngine { runner in
            let proxy = try DAOProxy.testing(Self.crypted, runner: runner)
            let xor = DataCrypt(encrypt: { $0.map { $0 ^ 0x5A } }, decrypt: { $0.map { $0 ^ 0x5A } })
            proxy.encryptCrypt = xor
            let message = Message(msgId: "s", time: 1, content: "secret", unread: false)
            _ = try proxy.add(m: message)
            let raw = try XCTUnwrap(try proxy.raw(msgId: "s") as? [String: Any])
            XCTAssertEqual(raw["content"] as? Data, Data("secret".utf8.map { $0 ^ 0x5A }))
            XCTAssertEqual(try proxy.get(msgId: "s") as? Message, message)
            // A map to a type: columns renamed to properties, the crypt property decrypted.
            XCTAssertEqual(try proxy.viaMap(msgId: "s") as? Message, message)
            XCTAssertEqual(try proxy.allViaMap() as? [Message], [message])
            // decryptCrypt, when set, reads instead of encryptCrypt.
            proxy.decryptCrypt = DataCrypt(encrypt: { $0 }, decrypt: { $0 })
            XCTAssertEqual((try proxy.get(msgId: "s") as? Message)?.content, String(decoding: "secret".utf8.map { $0 ^ 0x5A }, as: UTF8.self))
            return describe(raw)
        }
    }
}

/// Collects a proxy's events.
final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [String] = []
    var all: [String] { lock.lock(); defer { lock.unlock() }; return events }

    func handler(answer: Bool) -> @Sendable (DAOEvent) -> Bool {
        { [self] event in
            lock.lock()
            events.append("\(event)")
            lock.unlock()
            return answer
        }
    }
}

/// A stable text of a call's result for comparing engines (dictionary keys sorted).
func describe(_ value: Any?) -> String {
    guard let value = ArgumentScope.unwrap(value) else { return "nil" }
    if let dictionary = value as? [String: Any] {
        return "{" + dictionary.keys.sorted().map { "\($0): \(describe(dictionary[$0]))" }.joined(separator: ", ") + "}"
    }
    if let array = value as? [Any] { return "[" + array.map(describe).joined(separator: ", ") + "]" }
    if value is NSNull { return "NULL" }
    if let data = value as? Data { return "Data\(Array(data))" }
    return "\(type(of: value))(\(value))"
}
