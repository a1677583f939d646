@testable import DAO
import XCTest

/// Loading configs: every module attribute and element, the tolerances of real configs, and
/// malformed configs as `DAOError.config` with line and column at load time.
final class XMLLoaderTests: XCTestCase {
    func testModuleAttributesAndElementsLoad() throws {
        let config = try ConfigLoader.load(XMLCorpus.messages)
        XCTAssertEqual(config.name, "MessageDAO")
        XCTAssertEqual(config.initializer, "createTable")
        XCTAssertEqual(config.tableName, "messages")
        XCTAssertEqual(config.version, "1.1")
        XCTAssertFalse(config.resetOnUpgrade)
        XCTAssertEqual(config.upgradeMinVersion, "1.0")
        XCTAssertEqual(config.upgrades.map(\.toVersion), ["1.1"])
        XCTAssertEqual(Set(config.methods.keys), ["createTable", "addMessages", "getMessage", "getMessagesSince",
                                                   "deleteMessages", "countMessages", "messageTexts", "getMessageMapped"])
        XCTAssertEqual(config.crypts["Message"], ["content"])
        XCTAssertEqual(config.maps["byShortNames"]?.columns, ["msgId": "id"])
        let add = try XCTUnwrap(config.methods["addMessages"]?.first)
        XCTAssertEqual(add.foreach?.collection, ["messages"])
        XCTAssertEqual(add.foreach?.item, "message")
        XCTAssertEqual(add.arguments, [ArgumentSpec(name: "messages", refusesNil: true)])
        XCTAssertEqual(config.methods["getMessage"]?.first?.result, .type("Message"))
        XCTAssertEqual(config.methods["messageTexts"]?.first?.result, .array(.string))
        XCTAssertEqual(config.methods["getMessageMapped"]?.first?.result, .map("byShortNames"))
    }

    func testPublicChecks() throws {
        XCTAssertEqual(try DAOProxy.checkConfig(XMLCorpus.demo), ["clear", "createTable", "load", "names", "save"])
        XCTAssertNoThrow(try DAOProxy.checkExpression("a.count > 2 AND not (b == nil) xor c \\ 2 == 1"))
        XCTAssertThrowsError(try DAOProxy.checkExpression("a == (1")) { error in
            guard case DAOError.config(_, 1, 8) = error else { return XCTFail("\(error)") }
        }
    }

    func testResultForms() throws {
        let cases: [(String, ResultSpec)] = [
            ("int", .int), ("long long", .longLong), ("bool", .bool), ("double", .double), ("string", .string),
            ("binary", .binary), ("{}", .dictionary), ("Message", .type("Message")), (":m", .map("m")),
            ("[int]", .array(.int)), ("[long long]", .array(.longLong)), ("[{}]", .array(.dictionary)),
            ("[Message]", .array(.type("Message"))), ("[:m]", .array(.map("m"))),
        ]
        for (text, expected) in cases {
            XCTAssertEqual(try ConfigLoader.resultSpec(text, at: SourcePosition(line: 1, column: 1)), expected, text)
        }
    }

    func testToleratesSpacesAroundEqualsQuotesEntitiesCDATAAndComments() throws {
        let text = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!-- a comment before the root -->
        <module name = "T" tableName= 'items' version ="1.0">
          <const   name  =  "cols"   value = "(a, b)" />
          <select id = "lt" arguments = "x" result = "[{}]">
            <!-- comment in SQL -->
            select *from ${T} where a &lt; #{x} and b &gt;= 1 and c = '&amp;&quot;&apos;&apos;&#65;&#x42;'
            <![CDATA[ and d < 5 ]]>
          </select>
        </module>
        """
        let config = try ConfigLoader.load(text)
        let statements = try XMLCorpus.render(config, "lt", ["x": 3])
        XCTAssertEqual(statements, [.sql([RenderedSQL(text: "select *from items where a < ? and b >= 1 and c = '&\"''AB' and d < 5",
                                                      bindings: [3])], resumable: false)])
    }

    func testConstForms() throws {
        let text = """
        <module name="C" tableName="t">
          <const name="a" value="x1"/>
          <const name="b">x2</const>
          <const c="x3" d="x4"/>
          <select id="s">select ${a}, ${b}, ${c}, ${d} from ${t}</select>
        </module>
        """
        let statements = try XMLCorpus.render(try ConfigLoader.load(text), "s", [:])
        XCTAssertEqual(statements, [.sql([RenderedSQL(text: "select x1, x2, x3, x4 from t", bindings: [])], resumable: false)])
    }

    func testMalformedConfigsFailAtLoadWithLineAndColumn() {
        let cases: [(String, Int, Int, String)] = [
            ("<module>\n  <select id=\"a\">select 1\n</module>", 3, 3, "does not close"),
            ("<module>\n  <select id=a>select 1</select>\n</module>", 2, 14, "quoted"),
            ("<module>\n  <frobnicate/>\n</module>", 2, 3, "unknown element"),
            ("<module>\n  <select id=\"a\">select <if true=\"a ==\">1</if></select>\n</module>", 2, 39, "ends too early"),
            ("<module>\n  <select id=\"a\">select ${nothing}</select>\n</module>", 2, 25, "names no"),
            ("<module>\n  <sql id=\"x\">${y}</sql>\n  <sql id=\"y\">${x}</sql>\n</module>", 3, 15, "includes itself"),
            ("<module>\n<select id=\"a\">1</select>\n<select id=\"a\">2</select>\n</module>", 3, 1, "defined twice"),
            ("<module version=\"one\">\n</module>", 1, 9, "not a version"),
            ("<module>\n  <select>select 1</select>\n</module>", 2, 3, "needs a id"),
            ("<module>\n  <select id=\"a\">\n    select #{x from t</select>\n</module>", 3, 12, "unterminated"),
            ("<module>\n  <select id=\"a\">select &bogus;</select>\n</module>", 2, 25, "unknown entity"),
            ("<module>\n  <select id=\"a\" result=\"[[int]]\">1</select>\n</module>", 2, 18, "nested"),
            ("<module initializer=\"missing\">\n</module>", 1, 9, "names no method"),
            ("<module>\n  <update id=\"u\"><except>x</except></update>\n</module>", 2, 18, "without a <try>"),
            ("<module>\n  <select id=\"a\">select %{noformat}</select>\n</module>", 2, 25, "single quotes"),
            // The printf-style reading is gone: names are bare words, and there is at least one.
            ("<module>\n  <select id=\"a\">select %{'%@', 'x'}</select>\n</module>", 2, 25, "bad name"),
            ("<module>\n  <select id=\"a\">select %{'#{m.*}'}</select>\n</module>", 2, 25, "at least one name"),
            ("<module>\n  <select id=\"a\">select %{'#{m.*}', a,}</select>\n</module>", 2, 25, "bad name"),
            // keyword.md, "step": no text outside the steps; "try except": nothing before or after.
            ("<module>\n  <update id=\"u\">x <step>y</step></update>\n</module>", 2, 18, "outside the <step>s"),
            ("<module>\n  <update id=\"u\">x <try>y</try></update>\n</module>", 2, 18, "before or after"),
            ("<module>\n  <upgrade toVersion=\"1.1\"><try>y</try></upgrade>\n</module>", 2, 28, "belongs in a method"),
            // keyword.md, "@foreach": the collection is an argument, the item is not.
            ("<module>\n  <insert id=\"i\" arguments=\"a\" foreach=\"b.x\">y</insert>\n</module>", 2, 32, "not an argument"),
            ("<module>\n  <insert id=\"i\" arguments=\"a, x\" foreach=\"a.x\">y</insert>\n</module>", 2, 35, "also an argument"),
            // keyword.md, "where, set, trim": onVoid "has two values".
            ("<module>\n  <select id=\"a\">select <where onVoid=\"where 0\"></where></select>\n</module>", 2, 32, "ignoreAfter nor quit"),
            ("", 1, 1, "no root"),
            ("<dao/>", 1, 1, "root element"),
        ]
        for (text, line, column, fragment) in cases {
            XCTAssertThrowsError(try ConfigLoader.load(text), text) { error in
                guard case DAOError.config(let message, let l, let c) = error else {
                    return XCTFail("\(text): \(error)")
                }
                XCTAssertTrue(message.contains(fragment), "\(text): \(message)")
                XCTAssertEqual(l, line, "\(text): \(message)")
                XCTAssertEqual(c, column, "\(text): \(message)")
            }
        }
    }

    /// Nested macros multiply (a format holding a macro is repeated per name): their expansion
    /// is bounded, a config error rather than gigabytes of SQL.
    func testNestedMacrosAreBounded() throws {
        var macro = "x"
        for _ in 0..<40 { macro = "%{'" + macro.replacingOccurrences(of: "'", with: "\\'") + "', a, b}" }
        let nested = XMLCorpus.method("select " + macro)
        XCTAssertThrowsError(try ConfigLoader.load(nested)) { error in
            guard case DAOError.config(let message, _, _) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("expand to more than"), message)
        }
        let two = XMLCorpus.method("select %{'%{\\'*\\', a, b}', x}")
        XCTAssertEqual(try XMLCorpus.sql(two, "m")?.text, "select x, x")
    }

    /// Mutated configs (bytes dropped, inserted, replaced) load or fail with a config error, and
    /// those that load render every method (with no arguments) or fail with a DAOError; they never
    /// trap or hang. Deterministic; more rounds with DAO_XML_FUZZ_ROUNDS (e.g. 20000).
    func testMutatedConfigsNeverCrash() {
        let rounds = Int(ProcessInfo.processInfo.environment["DAO_XML_FUZZ_ROUNDS"] ?? "") ?? 300
        var generator = SplitMix(seed: 42)
        let corpus = [XMLCorpus.messages, XMLCorpus.demo, XMLDynamicSQLTests.config, XMLProxyTests.batches,
                      XMLProxyTests.results, XMLManualExamplesTests.templates, XMLManualExamplesTests.whereSetTrim,
                      XMLManualExamplesTests.quickStyle].map { Array($0.utf8) }
        let alphabet = Array("<>/=\"'&;#{}$@%![]-?.abc \n".utf8)
        for round in 0..<rounds {
            var bytes = corpus[round % corpus.count]
            for _ in 0..<(1 + Int(generator.next() % 4)) {
                let i = Int(generator.next() % UInt64(bytes.count))
                switch generator.next() % 3 {
                case 0: bytes.remove(at: i)
                case 1: bytes.insert(alphabet[Int(generator.next() % UInt64(alphabet.count))], at: i)
                default: bytes[i] = alphabet[Int(generator.next() % UInt64(alphabet.count))]
                }
            }
            do {
                let config = try ConfigLoader.load(String(decoding: bytes, as: UTF8.self))
                for id in config.methods.keys {
                    _ = try? XMLCorpus.render(config, id, [:], table: "t")
                }
            } catch let error as DAOError {
                guard case .config = error else { return XCTFail("unexpected \(error)") }
            } catch {
                XCTFail("unexpected \(error)")
            }
        }
    }
}

/// A small deterministic generator for the mutation test.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
