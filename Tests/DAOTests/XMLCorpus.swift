@testable import DAO
import Foundation

/// Configs of the XML DAO tests, written as configs for the source component are, and helpers.
enum XMLCorpus {
    /// A message table in the style of the source's examples: insert or replace with foreach,
    /// select by id and by time, `id in` with foreach, an upgrade adding a column, an encrypted
    /// property, a map.
    static let messages = """
    <?xml version="1.0" encoding="UTF-8"?>
    <module name="MessageDAO" initializer="createTable" tableName="messages" version="1.1" upgradeMinVersion="1.0">
      <const name="columns" value="msgId, time, content, unread"/>
      <crypt class="Message" property="content"/>
      <map id="byShortNames" result="{}">
        <result property="id" column="msgId"/>
      </map>
      <update id="createTable">
        create table if not exists ${T} (msgId text primary key, time integer, content text, unread integer, extra text)
      </update>
      <insert id="addMessages" arguments="$messages" foreach="messages.message">
        insert or replace into ${T} (${columns}) values (#{message.msgId}, #{message.time}, #{message.content}, #{message.unread})
      </insert>
      <select id="getMessage" arguments="msgId" result="Message">
        select * from ${T} where msgId = #{msgId}
      </select>
      <select id="getMessagesSince" arguments="time, limit" result="[Message]">
        select * from ${T} where time >= #{time} order by time <if true="limit != nil">limit #{limit}</if>
      </select>
      <delete id="deleteMessages" arguments="ids">
        delete from ${T} where msgId in <foreach item="id" collection="ids" open="(" separator="," close=")">#{id}</foreach>
      </delete>
      <select id="countMessages" result="int">select count(*) from ${T}</select>
      <select id="messageTexts" result="[string]">select content from ${T} order by time</select>
      <select id="getMessageMapped" arguments="msgId" result=":byShortNames">
        select msgId, time from ${T} where msgId = #{msgId}
      </select>
      <upgrade toVersion="1.1">
        <step>alter table ${T} add column extra text</step>
      </upgrade>
    </module>
    """

    /// The same table at version 1.0 (no `extra` column, no upgrade).
    static let messagesV1 = """
    <module name="MessageDAO" initializer="createTable" tableName="messages" version="1.0">
      <update id="createTable">
        create table if not exists ${T} (msgId text primary key, time integer, content text, unread integer)
      </update>
      <insert id="add" arguments="msgId, time, content">
        insert into ${T} (msgId, time, content, unread) values (#{msgId}, #{time}, #{content}, 1)
      </insert>
    </module>
    """

    /// The demo config's shape: columns and values as constants, `replace into`.
    static let demo = """
    <module name="Demo" initializer="createTable" tableName="demoTable" version="1.0">
      <const table_columns="(name, age, score)" table_values="#{model.name}, #{model.age}, #{model.score}"/>
      <update id="createTable">create table if not exists ${T} (name text primary key, age integer, score double)</update>
      <insert id="save" arguments="model">
        replace into ${T} ${table_columns} values(${table_values})
      </insert>
      <select id="load" arguments="name" result="{}">select * from ${T} where name = #{name}</select>
      <select id="names" result="[string]">select name from ${T} order by name</select>
      <delete id="clear">delete from ${T}</delete>
    </module>
    """

    /// Renders method `id` (the overload with as many arguments as given) with `arguments`.
    static func render(_ config: DAOConfig, _ id: String, _ arguments: [String: Any?],
                       globals: [String: Any?] = [:], table: String? = nil) throws -> [RenderedStatement] {
        let overloads = config.methods[id] ?? []
        guard let method = overloads.first(where: { $0.arguments.count == arguments.count }) ?? overloads.first else {
            throw DAOError.noSuchMethod(id)
        }
        let renderer = SQLRenderer(config: config, tableName: table ?? config.tableName, encrypt: nil)
        return try renderer.render(method.statements, scope: ArgumentScope(arguments: arguments, globals: globals))
    }

    /// The single statement method `id` renders to.
    static func sql(_ configText: String, _ id: String, _ arguments: [String: Any?] = [:],
                    globals: [String: Any?] = [:]) throws -> RenderedSQL? {
        let statements = try render(try ConfigLoader.load(configText), id, arguments, globals: globals)
        guard statements.count == 1, case .sql(let list, _) = statements[0], list.count == 1 else { return nil }
        return list[0]
    }

    /// A config of one `<select id="m" arguments=...>` with `body`.
    static func method(_ body: String, arguments: String = "", extra: String = "") -> String {
        """
        <module name="M" tableName="t">
          \(extra)
          <select id="m" arguments="\(arguments)">\(body)</select>
        </module>
        """
    }
}
