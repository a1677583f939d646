@testable import DAO
import XCTest

/// Dynamic SQL and references rendered without an engine: config + arguments -> SQL + bindings.
final class XMLRenderTests: XCTestCase {
    private func sql(_ body: String, arguments: String = "", extra: String = "", _ values: [String: Any?] = [:],
                     globals: [String: Any?] = [:]) throws -> RenderedSQL {
        try XCTUnwrap(XMLCorpus.sql(XMLCorpus.method(body, arguments: arguments, extra: extra), "m", values, globals: globals))
    }

    struct Model: Encodable {
        var name: String
        var inner: Inner
        var tags: [String]
        struct Inner: Encodable { var level: Int }
    }

    func testReferences() throws {
        let model = Model(name: "o'neil", inner: .init(level: 3), tags: ["a", "b"])
        let r = try sql("select #{a}, @{s}, @{n}, @{x or \"\"}, @{w no \"\"}, #{x or \"\"}, #{x}, @{x}, ${T}, ${t}, #{m.name}, @{m.name}, #{m.inner.level}, #{d.k}, #{m.tags.count}, #{g}",
                        arguments: "a, s, n, x, m, d, w", ["w": "word", "a": 1, "s": "it's", "n": 2.5, "x": nil, "m": model, "d": ["k": "v"]],
                        globals: ["g": "global"])
        XCTAssertEqual(r.text, "select ?, 'it''s', 2.5, '', word, ?, ?, NULL, t, t, ?, 'o''neil', ?, ?, ?, ?")
        XCTAssertEqual(r.bindings, [1, "", nil, "o'neil", 3, "v", 2, "global"])
    }

    func testDollarArgumentsAreReferencedWithOrWithoutTheDollar() throws {
        let r = try sql("select #{a}, #{$a}", arguments: "$a", ["a": 5])
        XCTAssertEqual(r.bindings, [5, 5])
    }

    struct Renamed: Encodable {
        var fullName: String
        enum CodingKeys: String, CodingKey { case fullName = "full_name" }
    }

    class Base { var id = 7 }
    final class Derived: Base { var label: String? = "x" }

    func testPathsReadCodingKeysSuperclassesAndOptionals() throws {
        let r = try sql("select #{r.fullName}, #{r.full_name}, #{d.id}, #{d.label}, #{d.label.count}",
                        arguments: "r, d", ["r": Renamed(fullName: "ann"), "d": Derived()])
        XCTAssertEqual(r.bindings, ["ann", "ann", 7, "x", 1])
    }

    func testIfTrueAndFalse() throws {
        let body = "select 1 <if true=\"a > 1\">A</if> <if false=\"a > 1\">B</if>"
        XCTAssertEqual(try sql(body, arguments: "a", ["a": 2]).text, "select 1 A")
        XCTAssertEqual(try sql(body, arguments: "a", ["a": 1]).text, "select 1 B")
    }

    func testExpressionLanguage() throws {
        let cases: [(String, [String: Any?], Bool)] = [
            ("1 + 2 * 3 == 7", [:], true), ("(1 + 2) * 3 == 9", [:], true), ("7 \\ 2 == 3", [:], true),
            ("7 / 2 == 3.5", [:], true), ("6 / 2 == 3", [:], true), ("7 % 3 == 1", [:], true), ("-a == 0 - 5", ["a": 5], true),
            ("a != nil", ["a": 1], true), ("a == nil", ["a": nil], true), ("a == nil", [:], true), ("a != nil", [:], false),
            ("a AND b", ["a": true, "b": false], false), ("a Or b", ["a": true, "b": false], true),
            ("NOT a", ["a": false], true), ("a xor b", ["a": true, "b": true], false), ("a XOR b", ["a": true, "b": false], true),
            ("s == 'x y'", ["s": "x y"], true), ("s == 'q'", ["s": "q"], true), ("list.count > 2", ["list": [1, 2, 3]], true),
            ("list.count == 0", ["list": [Int]()], true), ("s.count == 3", ["s": "abc"], true), ("d.k >= 10", ["d": ["k": 10]], true),
            ("a < b and b <= c", ["a": 1, "b": 2.5, "c": 2.5], true), ("a <> b", ["a": "x", "b": "y"], true),
            ("not a == 1 or b", ["a": 1, "b": false], false), ("a && !b || c", ["a": true, "b": true, "c": false], false),
            ("s", ["s": ""], false), ("s", ["s": "x"], true), ("n", ["n": 0], false), ("list", ["list": [1]], true),
        ]
        for (expression, values, expected) in cases {
            let config = XMLCorpus.method("x<if true=\"\(expression)\">Y</if>")
            let r = try XCTUnwrap(XMLCorpus.sql(config, "m", values))
            XCTAssertEqual(r.text == "xY", expected, expression)
        }
    }

    func testExpressionErrorsAtACallNameTheirPlace() throws {
        let config = try ConfigLoader.load(XMLCorpus.method("x\n <if true=\"a \\ 0 == 1\">Y</if> <if true=\"s * 2\">Z</if>", arguments: "a, s"))
        for (values, line, column, fragment) in [(["a": 1, "s": 1], 4, 12, "division by zero"), (["a": nil, "s": "t"], 4, 41, "needs numbers")] as [([String: Any?], Int, Int, String)] {
            XCTAssertThrowsError(try XMLCorpus.render(config, "m", values)) { error in
                guard case DAOError.config(let message, let l, let c) = error else { return XCTFail("\(error)") }
                XCTAssertTrue(message.contains(fragment), message)
                XCTAssertEqual([l, c], [line, column], message)
            }
        }
    }

    func testChooseWhenOtherwise() throws {
        let body = """
        select <choose><when true="k == 1">one</when><when false="k != 2">two</when><otherwise>many</otherwise></choose>
        """
        XCTAssertEqual(try sql(body, arguments: "k", ["k": 1]).text, "select one")
        XCTAssertEqual(try sql(body, arguments: "k", ["k": 2]).text, "select two")
        XCTAssertEqual(try sql(body, arguments: "k", ["k": 3]).text, "select many")
    }

    func testForeachOpenSeparatorCloseReverseAndIndex() throws {
        let body = "in <foreach item=\"x\" index=\"i\" collection=\"xs\" open=\"(\" separator=\", \" close=\")\">#{x}</foreach>"
        let r = try sql(body, arguments: "xs", ["xs": [3, 4, 5]])
        XCTAssertEqual(r.text, "in (?, ?, ?)")
        XCTAssertEqual(r.bindings, [3, 4, 5])
        let reversed = try sql("<foreach item=\"x\" collection=\"xs\" separator=\"|\" reverse=\"true\">@{x}</foreach>",
                               arguments: "xs", ["xs": ["a", "b"]])
        XCTAssertEqual(reversed.text, "'b'|'a'")
        let indexed = try sql("<foreach item=\"x\" index=\"i\" collection=\"xs\" separator=\",\">@{i}=@{x.n}</foreach>",
                              arguments: "xs", ["xs": [["n": 7], ["n": 8]]])
        XCTAssertEqual(indexed.text, "0=7,1=8")
        XCTAssertEqual(try sql("x<foreach item=\"x\" collection=\"xs\" open=\"(\" close=\")\">#{x}</foreach>", arguments: "xs", ["xs": [Int]()]).text, "x")
    }

    /// The statements method `m` of `body` renders to ([] when onVoid="quit" stops it).
    private func statements(_ body: String, arguments: String = "", _ values: [String: Any?] = [:]) throws -> [String] {
        let rendered = try XMLCorpus.render(try ConfigLoader.load(XMLCorpus.method(body, arguments: arguments)), "m", values)
        return rendered.flatMap { statement -> [String] in
            guard case .sql(let list, _) = statement else { return [] }
            return list.map(\.text)
        }
    }

    /// keyword.md, "where, set, trim": <where> is <trim prefix="WHERE" prefixOverrides="AND | OR"
    /// onVoid="ignoreAfter">; onVoid="quit" runs nothing.
    func testWhereWithOnVoid() throws {
        let body = "delete from t <where onVoid=\"quit\"><if true=\"a != nil\">and a = #{a}</if> <if true=\"b != nil\">OR b = #{b}</if></where>"
        XCTAssertEqual(try sql(body, arguments: "a, b", ["a": 1, "b": nil]).text, "delete from t WHERE a = ?")
        XCTAssertEqual(try sql(body, arguments: "a, b", ["a": nil, "b": 2]).text, "delete from t WHERE b = ?")
        XCTAssertEqual(try statements(body, arguments: "a, b", ["a": nil, "b": nil]), [])
        // Without onVoid a void <where> is ignoreAfter: the statement ends before it.
        let plain = "select * from t <where><if true=\"a != nil\">a = #{a}</if></where> order by a; select 2"
        XCTAssertEqual(try statements(plain, arguments: "a", ["a": 1]), ["select * from t WHERE a = ? order by a", "select 2"])
        XCTAssertEqual(try statements(plain, arguments: "a", ["a": nil]), ["select * from t"])
        // "and" only as a whole word: "andrew = 1" keeps its name.
        XCTAssertEqual(try sql("select <where>andrew = 1</where>").text, "select WHERE andrew = 1")
    }

    func testSet() throws {
        let body = "update t <set><if true=\"a != nil\">a = #{a},</if><if true=\"b != nil\">b = #{b},</if></set> where id = 1"
        let r = try sql(body, arguments: "a, b", ["a": 1, "b": 2])
        XCTAssertEqual(r.text, "update t SET a = ?,b = ? where id = 1")
        XCTAssertEqual(try sql(body, arguments: "a, b", ["a": nil, "b": 2]).text, "update t SET b = ? where id = 1")
        // A void <set> (no onVoid, as <trim prefix="SET" suffixOverrides=",">) adds nothing.
        XCTAssertEqual(try sql(body, arguments: "a, b", ["a": nil, "b": nil]).text, "update t where id = 1")
    }

    func testTrimPrefixSuffixOverridesAndOnVoid() throws {
        let body = """
        select * from t <trim prefix="WHERE (" suffix=")" prefixOverrides="AND |OR " suffixOverrides=" AND| OR" onVoid="ignoreAfter">\
        <if true="a != nil">AND a = #{a}</if> <if true="b != nil">AND b = #{b} OR</if></trim> order by a
        """
        XCTAssertEqual(try sql(body, arguments: "a, b", ["a": 1, "b": 2]).text, "select * from t WHERE ( a = ? AND b = ? ) order by a")
        XCTAssertEqual(try sql(body, arguments: "a, b", ["a": nil, "b": nil]).text, "select * from t")
        let quit = body.replacingOccurrences(of: "ignoreAfter", with: "quit")
        XCTAssertEqual(try statements(quit, arguments: "a, b", ["a": nil, "b": nil]), [])
        let keepGoing = body.replacingOccurrences(of: " onVoid=\"ignoreAfter\"", with: "")
        XCTAssertEqual(try sql(keepGoing, arguments: "a, b", ["a": nil, "b": nil]).text, "select * from t order by a")
    }

    /// quick_style.md, "Conditional formatting": pairs names a dictionary argument.
    func testFormatPairsPrefixJoin() throws {
        let body = "update ${T} <format prefix=\"set\" pairs=\"values\" join=\",\"/><format prefix=\"where\" pairs=\"conditions\" join=\"and\"/>"
        let r = try sql(body, arguments: "values, conditions", ["values": ["uin": 12345, "content": "12345"], "conditions": ["id": "100", "kind": 2]])
        XCTAssertEqual(r.text, "update t set content = ?, uin = ? where id = ? and kind = ?")
        XCTAssertEqual(r.bindings, ["12345", 12345, "100", 2])
        // "When a condition passes an empty value for pairs, the prefix argument will not be
        // concatenated into the SQL statements either."
        let empty = try sql(body, arguments: "values, conditions", ["values": ["a": 1], "conditions": [String: Any]()])
        XCTAssertEqual(empty.text, "update t set a = ?")
        XCTAssertEqual(try sql(body, arguments: "values, conditions", ["values": ["a": 1], "conditions": nil]).text, "update t set a = ?")
        // A key is a column name, never SQL text.
        let config = XMLCorpus.method(body, arguments: "values, conditions")
        XCTAssertThrowsError(try XMLCorpus.sql(config, "m", ["values": ["a = 1; drop table t; --": 1], "conditions": nil]))
        XCTAssertThrowsError(try XMLCorpus.sql(config, "m", ["values": 5, "conditions": nil]))
    }

    /// quick_style.md, "Shortcut syntax": the format once per name, `*` replaced, joined by ", ".
    func testMacroInTextAndInConst() throws {
        let model: [String: Any] = ["msgId": "m1", "time": 7, "content": "c", "uin": 3, "read": true, "date": 1.5]
        let short = try sql("values(%{'#{model.*}', msgId, time, content, uin, read, date})", arguments: "model", ["model": model])
        let long = try sql("values(#{model.msgId}, #{model.time}, #{model.content}, #{model.uin}, #{model.read}, #{model.date})",
                           arguments: "model", ["model": model])
        XCTAssertEqual(short, long)
        XCTAssertEqual(short.text, "values(?, ?, ?, ?, ?, ?)")
        XCTAssertEqual(short.bindings, ["m1", 7, "c", 3, 1, 1.5])
        let set = try sql("set %{'* = #{model.*}', data, tag, id, version}", arguments: "model",
                          ["model": ["data": "d", "tag": "t", "id": 1, "version": 2]])
        XCTAssertEqual(set.text, "set data = ?, tag = ?, id = ?, version = ?")
        XCTAssertEqual(set.bindings, ["d", "t", 1, 2])
        // In a <const>, without spaces, with a chain, a quote written \' and a nested ${...}.
        let r = try sql("select ${c} from ${T} where %{'* = \\'x\\'', a.b}", arguments: "m",
                        extra: "<const name=\"c\" value=\"%{'@{m.*}',code,name}\"/>", ["m": ["code": 1, "name": "n"]])
        XCTAssertEqual(r.text, "select 1, 'n' from t where a.b = 'x'")
        XCTAssertEqual(try sql("select %{'${T}.*', a, b}").text, "select t.a, t.b")
    }

    func testNestedSqlFragments() throws {
        let extra = """
        <sql id="cols">a, ${more}</sql>
        <sql id="more">b<if true="x">, c</if></sql>
        """
        XCTAssertEqual(try sql("select ${cols} from ${T}", arguments: "x", extra: extra, ["x": true]).text, "select a, b, c from t")
        XCTAssertEqual(try sql("select ${cols} from ${T}", arguments: "x", extra: extra, ["x": false]).text, "select a, b from t")
    }

    func testStepsTryExceptAndStatementSplitting() throws {
        let config = try ConfigLoader.load("""
        <module name="S" tableName="t">
          <update id="u" arguments="a">
            <step>insert into t values (#{a})</step>
            <step resumable="true">insert into u values (#{a}); insert into v values ('x;y', #{a})</step>
          </update>
          <update id="e" arguments="a">
            <try>insert into t values (#{a})</try>
            <except>update t set a = #{a} -- a comment; not split, #{a} binds nothing
            /* nor #{a} here */ where b = '?' and c = '#{a}' and d = #{a}
            </except>
          </update>
          <update id="inside" arguments="a">
            <try>insert into t values (#{a})
              <except>update t set a = #{a}</except>
            </try>
          </update>
        </module>
        """)
        XCTAssertEqual(try XMLCorpus.render(config, "u", ["a": 1]), [
            .sql([RenderedSQL(text: "insert into t values (?)", bindings: [1])], resumable: false),
            .sql([RenderedSQL(text: "insert into u values (?)", bindings: [1]),
                  RenderedSQL(text: "insert into v values ('x;y', ?)", bindings: [1])], resumable: true),
        ])
        XCTAssertEqual(try XMLCorpus.render(config, "e", ["a": 1]), [
            .tryExcept([RenderedSQL(text: "insert into t values (?)", bindings: [1])],
                       except: [RenderedSQL(text: "update t set a = ? where b = '?' and c = '?' and d = ?", bindings: [1, 1])]),
        ])
        // keyword.md writes the <except> inside the <try>, at its end.
        XCTAssertEqual(try XMLCorpus.render(config, "inside", ["a": 1]), [
            .tryExcept([RenderedSQL(text: "insert into t values (?)", bindings: [1])],
                       except: [RenderedSQL(text: "update t set a = ?", bindings: [1])]),
        ])
    }

    /// Scalar results read other storage classes as SQLite's sqlite3_column_int64/double do.
    func testScalarResultConversions() throws {
        let oracle = try XMLSQLiteRunner()
        for text in ["12abc", " 3.5e1x", "abc", "-7", "+2.5", "1e", ".5", "", "99999999999999999999", "-99999999999999999999"] {
            let row = try oracle.execute("SELECT CAST(? AS INTEGER), CAST(? AS REAL)", arguments: [.text(text), .text(text)]).rows[0]
            XCTAssertEqual(ResultMapper.integer(.text(text)).map(DAOValue.integer), row[0], text)
            XCTAssertEqual(ResultMapper.double(.text(text)).map(DAOValue.real), row[1], text)
        }
        XCTAssertEqual(ResultMapper.integer(.real(2.9)), 2)
        XCTAssertNil(ResultMapper.integer(.null))
        XCTAssertEqual(ResultMapper.string(.integer(5)), "5")
        XCTAssertEqual(ResultMapper.data(.text("ab")), Data("ab".utf8))
    }

    func testValueConversions() {
        XCTAssertEqual(ValueConversion.daoValue(true), 1)
        XCTAssertEqual(ValueConversion.daoValue(Int32(-4)), -4)
        XCTAssertEqual(ValueConversion.daoValue(UInt64.max), .real(Double(UInt64.max)))
        XCTAssertEqual(ValueConversion.daoValue(Float(0.5)), 0.5)
        XCTAssertEqual(ValueConversion.daoValue(Data([1, 2])), .blob([1, 2]))
        XCTAssertEqual(ValueConversion.daoValue(Date(timeIntervalSince1970: 12)), 12.0)
        XCTAssertEqual(ValueConversion.daoValue(NSNull()), nil)
        XCTAssertEqual(ValueConversion.daoValue(Optional<Int>.none as Any), nil)
        XCTAssertEqual(ValueConversion.daoValue([1, 2]), "[1,2]")
        XCTAssertEqual(SQLLiteral.literal(.blob([0xAB, 1])), "X'AB01'")
        XCTAssertEqual(SQLLiteral.literal(.real(3)), "3.0")
    }

    func testExponentialFragmentsAreRefusedNotRendered() throws {
        var fragments = "<sql id=\"f0\">xxxxxxxxxxxxxxxx</sql>"
        for i in 1...40 { fragments += "<sql id=\"f\(i)\">${f\(i - 1)}${f\(i - 1)}</sql>" }
        let config = try ConfigLoader.load(XMLCorpus.method("select ${f40}", extra: fragments))
        XCTAssertThrowsError(try XMLCorpus.render(config, "m", [:])) { error in
            guard case DAOError.config(let message, _, _) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("exceeds"), message)
        }
    }
}
