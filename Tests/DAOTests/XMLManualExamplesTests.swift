@testable import DAO
import Foundation
import LogStore
import XCTest

/// Every example config of the source's manual (mpaas-docs functions/DAO/), loaded as printed
/// (a snippet that is not a whole config is put, unchanged, inside a `<module>` with the table
/// it needs) and called: results are checked against what the page says and, where SQL runs,
/// against SQLite (the product's engine must answer as SQLite does).
final class XMLManualExamplesTests: XMLEngineTestCase {
    struct MessageModel: Codable, Equatable {
        var msgId: Int?
        var content: String?
        var uin: Int?
        var read: Bool?
    }

    override class func setUp() {
        DAOTypeRegistry.register(MessageModel.self, as: "MessageModel")
        DAOTypeRegistry.register(MessageModel.self, as: "PPDynamicTemplate")
    }

    private func render(_ text: String, _ id: String, _ arguments: [String: Any?] = [:]) throws -> [RenderedStatement] {
        try XMLCorpus.render(try ConfigLoader.load(text), id, arguments)
    }

    private func sql(_ text: String, _ id: String, _ arguments: [String: Any?] = [:]) throws -> RenderedSQL? {
        try XMLCorpus.sql(text, id, arguments)
    }

    // MARK: summary.md, "A simple example"

    static let summary = """
    <module name="Demo" initializer="createTable" tableName="demoTable" version="1.0">
      <update id="createTable">
        create table if not exists ${T} (index integer primary key, content text)
      </update>

      <insert id="insertItem" arguments="content">
        insert into ${T} (content) values(#{content})
      </insert>

      <select id="getItem" arguments="index" result="string">
        select * from ${T} where index = #{index}
      </select>
    </module>
    """

    /// The page's config loads; its SQL names a column `index`, a keyword SQLite refuses, so
    /// the first call fails on SQLite and, the same way, on the product's engine.
    func testSummaryExampleLoadsAndFailsAsSQLiteDoes() throws {
        XCTAssertEqual(try DAOProxy.checkConfig(Self.summary), ["createTable", "getItem", "insertItem"])
        try onEveryEngine { runner in
            let proxy = try DAOProxy.testing(Self.summary, runner: runner)
            do {
                _ = try proxy.insertItem("something")
                return "inserted"
            } catch {
                return "failed"
            }
        }
        let proxy = try DAOProxy.testing(Self.summary, runner: try XMLSQLiteRunner())
        XCTAssertThrowsError(try proxy.insertItem("something"))
        // With the column named as SQLite allows, the page's calls do what it says.
        try onEveryEngine { runner in
            let fixed = try DAOProxy.testing(Self.summary.replacingOccurrences(of: "index", with: "idx"), runner: runner)
            _ = try fixed.insertItem("something")
            let content = try fixed.getItem(fixed.lastInsertRowId)
            // `result="string"` is the first column of `select *`: the rowid, as text.
            XCTAssertEqual(content as? String, String(fixed.lastInsertRowId))
            return describe(content)
        }
    }

    // MARK: keyword.md

    static let keywordModule = """
    <module name="demo" initializer="createTable" tableName="tableDemo" version="1.5" resetOnUpgrade="true" upgradeMinVersion="1.2">
    <const table_columns="(id, time, content, uin, read)"/>
    <map id="messageModelMap" result="MessageModel">
      <result property="msgId" column="id"/>
    </map>
    <crypt class="MessageModel" property="content"/>
    <update id="createTable">
      <step>
        create table if not exists ${T} (id integer primary key, content text, uin integer, read boolean)
      </step>
      <step>
        create index if not exists uin_idx on ${T} (uin)
      </step>
    </update>
    <select id="find" arguments="id, time" result=":messageModelMap">
      select * from ${T} where id = #{id} and time > @{time}
    </select>
    <insert id="addMessages" arguments="messages" foreach="messages.model">
        insert or replace into ${T} (id, content, uin, read) values(#{model.msgId}, #{model.content}, #{model.uin}, #{model.read})
    </insert>
    <delete id="remove" arguments="msgId">
      delete from ${T} where msgId = #{msgId}
    </delete>
    <upgrade toVersion="1.1">
      <step>
        alter table...
      </step>
      <step>
        alter table...
      </step>
    </upgrade>
    <insert id="insertMessage" arguments="model">
         insert into ${T} (content) values(#{model.content})
    </insert>
    <select id="getMessage" arguments="msgId" result="MessageModel">
         select * from ${T} where msgId = #{msgId}
    </select>
    </module>
    """

    /// "module", "const", "select" (its SQL: `where id = ? and time > 2014`), "map", "step",
    /// "insert, update, delete" with foreach, "upgrade", "crypt".
    func testKeywordPageModuleSelectMapStepsAndForeach() throws {
        let config = try ConfigLoader.load(Self.keywordModule)
        XCTAssertEqual(config.tableName, "tableDemo")
        XCTAssertEqual(config.version, "1.5")
        XCTAssertTrue(config.resetOnUpgrade)
        XCTAssertEqual(config.upgradeMinVersion, "1.2")
        let find = try XCTUnwrap(try sql(Self.keywordModule, "find", ["id": 1234, "time": 2014]))
        XCTAssertEqual(find.text, "select * from tableDemo where id = ? and time > 2014")
        XCTAssertEqual(find.bindings, [1234])
        try onEveryEngine { runner in
            let proxy = try DAOProxy.testing(Self.keywordModule, runner: runner)
            let models = [MessageModel(msgId: 1, content: "a", uin: 7, read: true),
                          MessageModel(msgId: 2, content: "b", uin: 8, read: false)]
            let added = try XCTUnwrap(try proxy.addMessages(models) as? DAOResult)
            XCTAssertEqual(added.changedRowCount, 2)
            // The table has no `time` column: the page's find fails as SQLite says. Its map works
            // once the query can run (id -> msgId).
            var out = [(try? proxy.find(1, 0)).map(describe) ?? "find failed"]
            let mapped = try proxy.executeQuery(sql: "select id, content from ${T} order by id")
            out.append(mapped.map { "\($0["id"] ?? .null)=\($0["content"] ?? .null)" }.joined(separator: ","))
            // `remove` names a column the table lacks: it fails on SQLite, so must fail here.
            out.append((try? proxy.remove(1)).map { _ in "removed" } ?? "remove failed")
            XCTAssertEqual(try proxy.schema().lowercased().contains("uin"), true)
            return out.joined(separator: " | ")
        }
        // The map, on a query that runs: id becomes msgId.
        try onEveryEngine { runner in
            let text = Self.keywordModule.replacingOccurrences(of: "and time > @{time}", with: "and uin > @{time}")
            let proxy = try DAOProxy.testing(text, runner: runner)
            _ = try proxy.addMessages([MessageModel(msgId: 5, content: "x", uin: 9, read: true)])
            let found = try proxy.find(5, 1) as? MessageModel
            XCTAssertEqual(found, MessageModel(msgId: 5, content: "x", uin: 9, read: true))
            XCTAssertNil(try proxy.find(5, 9))
            return describe(found.map { "\($0)" })
        }
    }

    /// "step": the upgrade's resumable steps; each of the two runs even when the other fails.
    static let resumableUpgrade = """
    <module name="demo" initializer="createTable" tableName="tableDemo" version="3.2">
    <update id="createTable">create table if not exists ${T} (id integer primary key, column1 text)</update>
    <select id="columns" result="{}">select * from ${T}</select>
    <insert id="add" arguments="id">insert into ${T} (id) values (#{id})</insert>
    <upgrade toVersion='3.2'>
        <step resumable="true">alter table ${T} add column1 text</step>
        <step resumable="true">alter table ${T} add column2 text</step>
    </upgrade>
    </module>
    """

    func testKeywordPageResumableUpgradeSteps() throws {
        try onEveryEngine { runner in
            let old = try DAOProxy.testing(Self.resumableUpgrade.replacingOccurrences(of: "version=\"3.2\"", with: "version=\"3.1\""),
                                           runner: runner)
            _ = try old.add(1)
            let proxy = try DAOProxy.testing(Self.resumableUpgrade, runner: runner)
            // column1 exists: its step fails and is skipped; column2 is added.
            let row = try XCTUnwrap(try proxy.columns() as? [String: Any])
            XCTAssertEqual(row.keys.sorted(), ["column1", "column2", "id"])
            return describe(row)
        }
    }

    /// "crypt": the property is encrypted on write and decrypted into the object on read.
    func testKeywordPageCrypt() throws {
        let text = Self.keywordModule.replacingOccurrences(of: "where msgId = #{msgId}", with: "where id = #{msgId}")
        try onEveryEngine { runner in
            let proxy = try DAOProxy.testing(text, runner: runner)
            proxy.encryptCrypt = DataCrypt(encrypt: { $0.map { $0 ^ 0x5A } }, decrypt: { $0.map { $0 ^ 0x5A } })
            _ = try proxy.insertMessage(MessageModel(msgId: 0, content: "secret", uin: nil, read: nil))
            let stored = try proxy.executeQuery(sql: "select content from ${T}")
            guard case .blob(let bytes)? = stored.first?["content"] else { XCTFail("\(stored)"); return "" }
            XCTAssertFalse(String(decoding: bytes, as: UTF8.self).contains("secret"))
            let read = try XCTUnwrap(try proxy.getMessage(proxy.lastInsertRowId) as? MessageModel)
            XCTAssertEqual(read.content, "secret")
            return read.content ?? ""
        }
    }

    /// "if": `model.read or (not onlyRead)`, and the page's "more complex expression".
    static let ifExample = """
    <module name="demo" initializer="createTable" tableName="tableDemo">
    <update id="createTable">create table if not exists ${T} (msgId integer primary key, content text, read boolean)</update>
    <select id="all" result="[int]">select msgId from ${T} order by msgId</select>
    <insert id="addMessages" arguments="messages, onlyRead" foreach="messages.model">
        <if true="model.read or (not onlyRead)">
        insert or replace into ${T} (msgId, content, read) values(#{model.msgId}, #{model.content}, #{model.read})
        </if>
    </insert>
    <select id="books" arguments="title, year, authors" result="int">
      select 1
      <if true="(title != nil and year > 2010) or authors.count >= 2">+ 1</if>
    </select>
    </module>
    """

    func testKeywordPageIf() throws {
        try onEveryEngine { runner in
            let proxy = try DAOProxy.testing(Self.ifExample, runner: runner)
            let models = [MessageModel(msgId: 1, content: "r", uin: nil, read: true),
                          MessageModel(msgId: 2, content: "u", uin: nil, read: false)]
            _ = try proxy.addMessages(models, true)
            XCTAssertEqual(try proxy.all() as? [Int], [1])
            _ = try proxy.addMessages(models, false)
            XCTAssertEqual(try proxy.all() as? [Int], [1, 2])
            // title, year, authors -> 2 when the expression holds, else 1.
            let cases: [(Any?, Any?, [String], Int)] = [
                ("t", 2011, [], 2), (nil, 2011, [], 1), ("t", 2010, [], 1), (nil, 1990, ["a", "b"], 2), (nil, nil, ["a"], 1),
            ]
            for (title, year, authors, expected) in cases {
                XCTAssertEqual(try proxy.books(title, year, authors) as? Int, expected, "\(String(describing: title)) \(String(describing: year)) \(authors)")
            }
            return describe(try proxy.all())
        }
    }

    /// "choose": only the first eligible `<when>`, else `<otherwise>`.
    func testKeywordPageChoose() throws {
        let text = """
        <module name="c" tableName="blog">
        <select id="find" arguments="title, author">
        select * from ${T} where state = 'ACTIVE'
        <choose>
          <when true="title != nil">
            AND title like #{title}
          </when>
          <when true="author != nil and author.name != nil">
            AND author_name like #{author.name}
          </when>
          <otherwise>
            AND featured = 1
          </otherwise>
        </choose>
        </select>
        </module>
        """
        let base = "select * from blog where state = 'ACTIVE'"
        XCTAssertEqual(try sql(text, "find", ["title": "t%", "author": ["name": "a"]])?.text, base + " AND title like ?")
        XCTAssertEqual(try sql(text, "find", ["title": nil, "author": ["name": "a"]])?.text, base + " AND author_name like ?")
        XCTAssertEqual(try sql(text, "find", ["title": nil, "author": ["x": 1]])?.text, base + " AND featured = 1")
    }

    /// "foreach": the first example (reverse="yes", strings quoted by @{}), the `proc` example
    /// ("The execution result will be: (abc1,abc2,abc3)") and the `id in` example.
    func testKeywordPageForeach() throws {
        let text = """
        <module name="f" tableName="t">
        <select id="reversed" arguments="list">
        <foreach item="iterator" collection="list" open="(" separator="," close=")" reverse="yes">
          @{iterator}
        </foreach>
        </select>
        <update id="proc" arguments="list, prefix">
           <foreach item="iterator" collection="list" open="(" separator="," close=")">
               {prefix}{iterator}
           </foreach>
        </update>
        <select id="byIds" arguments="idList" result="[int]">
        select * from ${T} where id in
        <foreach item="id" collection="idList" open="(" separator="," close=")">
        #{id}
        </foreach>
        </select>
        </module>
        """
        XCTAssertEqual(try sql(text, "reversed", ["list": ["1", "2", "3"]])?.text, "( '3' , '2' , '1' )")
        XCTAssertEqual(try sql(text, "proc", ["list": ["1", "2", "3"], "prefix": "abc"])?.text, "( abc1 , abc2 , abc3 )")
        let byIds = try XCTUnwrap(try sql(text, "byIds", ["idList": [3, 1]]))
        XCTAssertEqual(byIds.text, "select * from t where id in ( ? , ? )")
        XCTAssertEqual(byIds.bindings, [3, 1])
        // Braces that are not a name stay text.
        let literal = try sql("<module name=\"b\"><select id=\"s\" arguments=\"a\">select '{\"a\": 1}', '{1x}', {a}</select></module>",
                              "s", ["a": "x"])
        XCTAssertEqual(literal?.text, "select '{\"a\": 1}', '{1x}', x")
    }

    /// "where, set, trim", with the page's bodies.
    static let whereSetTrim = """
    <module name="w" tableName="blog">
    <select id="findWhere" arguments="state, title, author">
    select * from ${T}
    <where onVoid="quit">
      <if true="state != nil">
        state = #{state}
      </if>
      <if true="title != nil">
        AND title like #{title}
      </if>
      <if true="author != nil and author.name != nil">
        AND author_name like #{author.name}
      </if>
    </where>
    </select>
    <update id="updateSet" arguments="username, password, email, bio">
    update ${T}
    <set>
      <if false="username != nil">username=#{username},</if>
      <if false="password != nil">password=#{password},</if>
      <if true="email != nil">email=#{email},</if>
      <if true="bio != nil">bio=#{bio},</if>
    </set>
    where id = 1
    </update>
    <select id="findTrim" arguments="state">
    select * from ${T}
    <trim prefix="WHERE" prefixOverrides="AND | OR | and | or " onVoid="ignoreAfter">
      <if true="state != nil">and state = #{state}</if>
    </trim>
    order by id
    </select>
    <update id="updateTrim" arguments="email">
    update ${T}
    <trim prefix="SET" suffixOverrides=",">
      <if true="email != nil">email=#{email},</if>
    </trim>
    </update>
    </module>
    """

    func testKeywordPageWhereSetTrim() throws {
        // "if only the last judgment is tenable, the statement will correctly return
        // where author_name like XXX".
        XCTAssertEqual(try sql(Self.whereSetTrim, "findWhere", ["state": nil, "title": nil, "author": ["name": "a"]])?.text,
                       "select * from blog WHERE author_name like ?")
        XCTAssertEqual(try sql(Self.whereSetTrim, "findWhere", ["state": 1, "title": "t", "author": nil])?.text,
                       "select * from blog WHERE state = ? AND title like ?")
        // onVoid="quit": nothing runs, and the call succeeds.
        XCTAssertEqual(try render(Self.whereSetTrim, "findWhere", ["state": nil, "title": nil, "author": nil]), [.sql([], resumable: false)])
        XCTAssertEqual(try sql(Self.whereSetTrim, "updateSet", ["username": nil, "password": "p", "email": "e", "bio": nil])?.text,
                       "update blog SET username=?, email=? where id = 1")
        XCTAssertEqual(try sql(Self.whereSetTrim, "findTrim", ["state": 2])?.text, "select * from blog WHERE state = ? order by id")
        XCTAssertEqual(try sql(Self.whereSetTrim, "findTrim", ["state": nil])?.text, "select * from blog")
        XCTAssertEqual(try sql(Self.whereSetTrim, "updateTrim", ["email": "e"])?.text, "update blog SET email=?")
        try onEveryEngine { runner in
            let text = Self.whereSetTrim.replacingOccurrences(of: "<module name=\"w\" tableName=\"blog\">", with: """
            <module name="w" tableName="blog" initializer="create">
            <update id="create">create table if not exists ${T} (id integer primary key, state integer, title text, author_name text)</update>
            <insert id="add" arguments="state, title">insert into ${T} (state, title) values (#{state}, #{title})</insert>
            """).replacingOccurrences(of: "<select id=\"findWhere\" arguments=\"state, title, author\">",
                                      with: "<select id=\"findWhere\" arguments=\"state, title, author\" result=\"[{}]\">")
            let proxy = try DAOProxy.testing(text, runner: runner)
            _ = try proxy.add(1, "one")
            _ = try proxy.add(2, "two")
            let none = try proxy.findWhere(nil, nil, nil)
            XCTAssertEqual((none as? [Any])?.count, 0)
            let two = try proxy.findWhere(2, nil, nil)
            XCTAssertEqual((two as? [[String: Any]])?.first?["title"] as? String, "two")
            return describe(none) + describe(two)
        }
    }

    /// "sql": a fragment, and `#{id}` of an argument the method does not declare is nil.
    func testKeywordPageSqlFragment() throws {
        let text = """
        <module name="s">
        <sql id="userColumns"> id,username,password </sql>
        <select id="selectUsers" result="{}">
          select ${userColumns}
          from some_table
          where id = #{id}
        </select>
        </module>
        """
        let r = try XCTUnwrap(try sql(text, "selectUsers"))
        XCTAssertEqual(r.text, "select id,username,password from some_table where id = ?")
        XCTAssertEqual(r.bindings, [.null])
    }

    // MARK: quick_style.md and keyword.md "try except"

    static let templates = """
    <module name="t" initializer="create" tableName="templates" version="1.0">
    <update id="create">create table if not exists ${T} (tplId text, tplVersion integer, time integer, data text, tag text, primary key (tplId, tplVersion))</update>
    <select id="rows" result="[string]">select rowid || ':' || tplId || ':' || data || ':' || tag from ${T} order by rowid</select>
    <insert id="insertTemplates" arguments="templates" foreach="templates.model">
        <try>
            insert into ${T} (tplId, tplVersion, time, data, tag) values(%{'#{model.*}', tplId, tplVersion, time, data, tag})
            <except>
                update ${T} set %{'* = #{model.*}', data, tag} where tplId = #{model.tplId} and tplVersion = #{model.tplVersion}
            </except>
        </try>
    </insert>
    <update id="updateTemplate" arguments="template">
        update ${T} set %{'* = #{template.*}', data, tag} where tplId = #{template.id} and tplVersion = #{template.tplVersion}
    </update>
    </module>
    """

    /// "TRY EXCEPT": inserting the same model again updates it in place, keeping its rowid.
    func testTryExceptKeepsTheRowid() throws {
        try onEveryEngine { runner in
            let proxy = try DAOProxy.testing(Self.templates, runner: runner)
            let first: [[String: Any]] = [["tplId": "a", "tplVersion": 1, "time": 1, "data": "d1", "tag": "t1"],
                                          ["tplId": "b", "tplVersion": 1, "time": 1, "data": "d2", "tag": "t2"]]
            let inserted = try XCTUnwrap(try proxy.insertTemplates(first) as? DAOResult)
            XCTAssertEqual(inserted.flags, [.tryBlockExecuted, .tryBlockExecuted])
            let again = try XCTUnwrap(try proxy.insertTemplates([["tplId": "a", "tplVersion": 1, "time": 2, "data": "new", "tag": "n"]]) as? DAOResult)
            XCTAssertEqual(again.flags, [.exceptBlockExecuted])
            XCTAssertEqual(try proxy.rows() as? [String], ["1:a:new:n", "2:b:d2:t2"])
            _ = try proxy.updateTemplate(["id": "b", "tplVersion": 1, "data": "D", "tag": "T"])
            XCTAssertEqual(try proxy.rows() as? [String], ["1:a:new:n", "2:b:D:T"])
            return describe(try proxy.rows())
        }
    }

    /// "Shortcut syntax": both pairs of forms render the same SQL; "Non-nil argument" with
    /// `$ model`; "Conditional formatting" with the page's values.
    static let quickStyle = """
    <module name="q" initializer="create" tableName="messages" version="1.0">
    <const table_columns="(id, time, content, uin, read, date)"/>
    <update id="create">create table if not exists ${T} (id text primary key, time integer, content text, uin integer, read boolean, date real)</update>
    <select id="all" result="[{}]">select * from ${T} order by id</select>
    <insert id="addMessages" arguments="messages" foreach="messages.model">
        insert or replace into ${T} (id, time, content, uin, read, date) values(#{model.msgId}, #{model.time}, #{model.content}, #{model.uin}, #{model.read}, #{model.date})
    </insert>
    <insert id="addMessagesShort" arguments="messages" foreach="messages.model">
        insert or replace into ${T} (id, time, content, uin, read, date) values(%{'#{model.*}', msgId, time, content, uin, read, date})
    </insert>
    <insert id="addMessage" arguments="$ model">
        insert or replace into ${T} ${table_columns} values(#{model.msgId}, #{model.time}, #{model.content}, #{model.uin}, #{model.read}, #{model.date})
    </insert>
    <insert id="updateMessage" arguments="values, conditions">
        update ${T} <format prefix="set" pairs="values" join=","/><format prefix="where" pairs="conditions" join="and"/>
    </insert>
    </module>
    """

    func testQuickStylePage() throws {
        let model: [String: Any] = ["msgId": "100", "time": 5, "content": "c", "uin": 1, "read": false, "date": 2.5]
        let config = try ConfigLoader.load(Self.quickStyle)
        XCTAssertEqual(try XMLCorpus.render(config, "addMessagesShort", ["messages": nil]),
                       try XMLCorpus.render(config, "addMessages", ["messages": nil]))
        let long = try XCTUnwrap(try sql(Self.quickStyle, "addMessage", ["model": model]))
        XCTAssertEqual(long.bindings, ["100", 5, "c", 1, 0, 2.5])
        let update = try XCTUnwrap(try sql(Self.quickStyle, "updateMessage", ["values": ["uin": 12345, "content": "12345"], "conditions": ["id": "100"]]))
        // The page: "update table set uin = ?, content = ? where id = ?" (keys here in sorted order).
        XCTAssertEqual(update.text, "update messages set content = ?, uin = ? where id = ?")
        XCTAssertEqual(update.bindings, ["12345", 12345, "100"])
        try onEveryEngine { runner in
            let proxy = try DAOProxy.testing(Self.quickStyle, runner: runner)
            XCTAssertThrowsError(try proxy.addMessage(nil)) { error in
                guard case DAOError.nilArgument("model") = error else { return XCTFail("\(error)") }
            }
            _ = try proxy.addMessage(model)
            _ = try proxy.addMessagesShort([["msgId": "200", "time": 6, "content": "d", "uin": 2, "read": true, "date": 1.0]])
            _ = try proxy.updateMessage(["uin": 12345, "content": "12345"], ["id": "100"])
            let rows = try XCTUnwrap(try proxy.all() as? [[String: Any]])
            XCTAssertEqual(rows.first?["content"] as? String, "12345")
            XCTAssertEqual(rows.first?["uin"] as? Int, 12345)
            XCTAssertEqual(rows.count, 2)
            return describe(rows)
        }
    }

    // MARK: overload.md, select_parallel.md, transaction.md

    static let overloads = """
    <module name="o" initializer="create" tableName="messages">
    <update id="create">create table if not exists ${T} (id text, time integer, state integer)</update>
    <insert id="add" arguments="id, time, state">insert into ${T} values (#{id}, #{time}, #{state})</insert>
    <select id="getMessage" arguments="id" result="[{}]">
        select * from ${T} where id=#{id}
    </select>
    <select id="getMessage" arguments="id, time, state" result="{}">
        select * from ${T} where id=#{id} and time=#{time} and state=#{state}
    </select>
    <select id="getTemplatesById" arguments="id" result="[PPDynamicTemplate]" parallel="true">
        select rowid as msgId, id as content from ${T} where id = #{id}
    </select>
    </module>
    """

    /// Overloads are told apart by argument count; names in the call need not match.
    func testOverloadAndParallelSelect() throws {
        try onEveryEngine { runner in
            let proxy = try DAOProxy.testing(Self.overloads, runner: runner)
            _ = try proxy.add("m", 1, 0)
            _ = try proxy.add("m", 2, 1)
            let all = try XCTUnwrap(try proxy.getMessage("m") as? [[String: Any]])
            XCTAssertEqual(all.count, 2)
            let one = try XCTUnwrap(try proxy.getMessage("m", 2, 1) as? [String: Any])
            XCTAssertEqual(one["time"] as? Int, 2)
            XCTAssertEqual((try proxy.call("getMessage", positional: ["m"]) as? [[String: Any]])?.count, 2)
            let templates = try XCTUnwrap(try proxy.getTemplatesById("m") as? [MessageModel])
            XCTAssertEqual(templates.map(\.msgId), [1, 2])
            return describe(all) + describe(one)
        }
    }

    static let transactionCreate = """
    <module name="tx" initializer="createTable" tableName="chat" version="1.0">
    <update id="createTable">
       <step>
          create table if not exists ${T} (localID long, clientMsgID char(64) primary key, msgID long, userID char(20), userType text, side integer, templateCode text, templateData text, bizMemo text, bizType text, appId text, link text, createTime long, messageState integer, extendData text, mediaState text, contextData text, egg text)
       </step>
       <step>
          create index if not exists messageState_idx on ${T} (messageState)
       </step>
    </update>
    <insert id="addMessages" arguments="messages" foreach="messages.model">
        insert or replace into ${T} (clientMsgID, messageState) values(#{model.id}, #{model.state})
    </insert>
    <select id="count" result="int">select count(*) from ${T}</select>
    <insert id="addTwice" arguments="id">
        <step>insert into ${T} (clientMsgID) values (#{id})</step>
        <step>insert into ${T} (clientMsgID) values (#{id})</step>
    </insert>
    <select id="states" arguments="ids" foreach="ids.id" result="int">select messageState from ${T} where clientMsgID = #{id}</select>
    </module>
    """

    /// Each call is a transaction (a failing element undoes the call); calls between begin and
    /// rollback are undone together, and committed together.
    func testTransactionPage() throws {
        try onEveryEngine { runner in
            let proxy = try DAOProxy.testing(Self.transactionCreate, runner: runner)
            _ = try proxy.addMessages([["id": "a", "state": 1], ["id": "b", "state": 2]])
            XCTAssertThrowsError(try proxy.addTwice("c"))
            XCTAssertEqual(try proxy.count() as? Int, 2)
            try proxy.beginTransaction()
            _ = try proxy.addMessages([["id": "d", "state": 4]])
            _ = try proxy.addMessages([["id": "e", "state": 5]])
            try proxy.rollback()
            XCTAssertEqual(try proxy.count() as? Int, 2)
            try proxy.beginTransaction()
            _ = try proxy.addMessages([["id": "d", "state": 4]])
            try proxy.commit()
            // A select with foreach answers once per element, in an array.
            let states = try XCTUnwrap(try proxy.states(["d", "zz", "a"]) as? [Any])
            XCTAssertEqual(states.count, 3)
            XCTAssertEqual(states[0] as? Int, 4)
            XCTAssertTrue(states[1] is NSNull)
            XCTAssertEqual(states[2] as? Int, 1)
            return describe(states) + describe(try proxy.count())
        }
    }

    // MARK: reference.md

    func testReferencePage() throws {
        let text = """
        <module name="r" tableName="t">
        <select id="getMessage" arguments="id" result="[MessageModel]">
            select * from ${T} where id = @{id}
        </select>
        <select id="forms" arguments="s, n, x, adict, w">
            select @{s}, '@{s}', "@{s}", @{w no ""}, @{x}, @{x or ""}, #{x or ""}, #{x}, @{n}, #{adict.aaa}, @{adict.aaa}
        </select>
        </module>
        """
        XCTAssertEqual(try sql(text, "getMessage", ["id": "abc"])?.text, "select * from t where id = 'abc'")
        let forms = try XCTUnwrap(try sql(text, "forms", ["s": "it's", "n": 2014, "x": nil, "adict": ["aaa": 5], "w": "word"]))
        // Quotes the config already has are not added again.
        XCTAssertEqual(forms.text, "select 'it''s', 'it''s', \"it's\", word, NULL, '', ?, ?, 2014, ?, 5")
        XCTAssertEqual(forms.bindings, ["", nil, 5])
    }

    // MARK: The demo config of the issue

    static let demo = """
    <module name="DemoInfo" initializer="createTable" tableName="demo_info" version="1.0">
    <const table_columns="(code, name)"/>
    <const table_values="%{'#{m.*}',code,name}"/>
    <update id="createTable">create table if not exists ${T} (code text primary key, name text)</update>
    <insert id = "save_info" arguments = "m">
        replace into ${T} ${table_columns} values(${table_values})
    </insert>
    <select id="info" arguments="code" result="string">select name from ${T} where code = #{code}</select>
    </module>
    """

    func testDemoConfigOfTheIssue() throws {
        let save = try XCTUnwrap(try sql(Self.demo, "save_info", ["m": ["code": "c1", "name": "n1"]]))
        XCTAssertEqual(save.text, "replace into demo_info (code, name) values(?, ?)")
        XCTAssertEqual(save.bindings, ["c1", "n1"])
        try onEveryEngine { runner in
            let proxy = try DAOProxy.testing(Self.demo, runner: runner)
            _ = try proxy.save_info(["code": "c1", "name": "n1"])
            _ = try proxy.save_info(["code": "c1", "name": "n2"])
            XCTAssertEqual(try proxy.info("c1") as? String, "n2")
            return describe(try proxy.info("c1"))
        }
    }

    /// keyword.md, "@result": int is [NSNumber numberWithInt] (32 bits), long long keeps 64.
    func testIntResultIsThirtyTwoBits() throws {
        let text = """
        <module name="i">
        <select id="asInt" result="int">select 4294967301</select>
        <select id="asInts" result="[int]">select 4294967301</select>
        <select id="asLong" result="long long">select 4294967301</select>
        </module>
        """
        try onEveryEngine { runner in
            let proxy = try DAOProxy.testing(text, runner: runner)
            XCTAssertEqual(try proxy.asInt() as? Int, 5)
            XCTAssertEqual(try proxy.asInts() as? [Int], [5])
            XCTAssertEqual(try proxy.asLong() as? Int64, 4_294_967_301)
            return describe(try proxy.asLong())
        }
    }
}

extension XMLManualExamplesTests {
    /// keyword.md, "@foreach": the container "must be of the NSArray or NSSet type when called";
    /// an NSSet, a Swift Set and nil (no element) are fine, anything else is a typed error.
    func testForeachContainerIsAnArrayOrSet() throws {
        try onEveryEngine { runner in
            let proxy = try DAOProxy.testing(Self.transactionCreate, runner: runner)
            _ = try proxy.addMessages(NSSet(array: [["id": "a", "state": 1] as NSDictionary]))
            _ = try proxy.addMessages(Set(["b"]).map { ["id": $0, "state": 2] })
            _ = try proxy.addMessages(nil)
            for wrong: Any in [["id": "c", "state": 3], "text", 5] {
                XCTAssertThrowsError(try proxy.addMessages(wrong)) { error in
                    guard case DAOError.config(let message, _, _) = error else { return XCTFail("\(error)") }
                    XCTAssertTrue(message.contains("not an array or set"), message)
                }
            }
            XCTAssertEqual(try proxy.count() as? Int, 2)
            return describe(try proxy.count())
        }
    }

    /// keyword.md, "if": strings in single quotes, `\'` for a quote, `xor`, `\` and `%`.
    func testIfExpressionStringsAndOperators() throws {
        let text = """
        <module name="e">
        <select id="m" arguments="name, a, b" result="int">
          select 0 <if true="name == 'it\\'s'">+ 1</if> <if true="a xor b">+ 10</if> <if true="7 \\ 2 == 3 and 7 % 2 == 1 and -a == 0 - a">+ 100</if>
        </select>
        </module>
        """
        try onEveryEngine { runner in
            let proxy = try DAOProxy.testing(text, runner: runner)
            XCTAssertEqual(try proxy.m("it's", 1, 0) as? Int, 111)
            XCTAssertEqual(try proxy.m("its", 1, 1) as? Int, 100)
            return describe(try proxy.m("it's", 0, 0))
        }
    }
}

extension XMLManualExamplesTests {
    /// proxy.md: deleteTable (the proxy works on, re-creating the table), deleteTablesWithRegex
    /// with progress and autovacuum, vacuumDatabase, prepareParallelConnection, tableName,
    /// lastInsertRowId, allMethodsList.
    func testProxyPageCalls() throws {
        try onEveryEngine { runner in
            let proxy = try DAOProxy.testing(Self.overloads, runner: runner)
            proxy.prepareParallelConnection(0)
            XCTAssertEqual(proxy.allMethods, ["add", "create", "getMessage", "getTemplatesById"])
            _ = try proxy.add("m", 1, 0)
            XCTAssertEqual(proxy.lastInsertRowId, 1)
            try proxy.deleteTable()
            XCTAssertFalse(try proxy.tableExists("messages"))
            _ = try proxy.add("n", 1, 0)
            XCTAssertEqual((try proxy.getMessage("n") as? [[String: Any]])?.count, 1)
            let other = proxy.forTable("messages_2")
            _ = try other.add("x", 1, 0)
            proxy.tableName = "messages_3"
            _ = try proxy.add("y", 1, 0)
            let progress = ProgressLog<[Float]>([])
            try proxy.deleteTables(matchingRegex: "^messages_", autovacuum: true) { value in progress.withLock { $0.append(value) } }
            XCTAssertEqual(progress.withLock { $0 }, [50, 100])
            XCTAssertFalse(try proxy.tableExists("messages_2"))
            XCTAssertTrue(try proxy.tableExists("messages"))
            try proxy.vacuumDatabase()
            try proxy.deleteTables(matchingRegex: "^nothing$", autovacuum: false) { value in progress.withLock { $0.append(value) } }
            XCTAssertEqual(progress.withLock { $0 }, [50, 100, 100])
            return describe(try proxy.tableExists("messages"))
        }
    }
}

/// A value behind a lock (test callbacks).
final class ProgressLog<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
