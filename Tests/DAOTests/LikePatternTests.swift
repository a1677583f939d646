import XCTest
@testable import DAO

final class LikePatternTests: XCTestCase {
    func testPercentMatchesAnyRunIncludingEmpty() {
        let pattern = LikePattern("a%c")
        XCTAssertTrue(pattern.matches("ac"))
        XCTAssertTrue(pattern.matches("abc"))
        XCTAssertTrue(pattern.matches("abbbbc"))
        XCTAssertFalse(pattern.matches("abcd"))
        XCTAssertTrue(LikePattern("%").matches(""))
        XCTAssertTrue(LikePattern("%%").matches("anything"))
        XCTAssertTrue(LikePattern("%b%").matches("abc"))
        XCTAssertFalse(LikePattern("%b%").matches("acd"))
    }

    func testUnderscoreMatchesExactlyOneCharacter() {
        XCTAssertTrue(LikePattern("a_c").matches("abc"))
        XCTAssertFalse(LikePattern("a_c").matches("ac"))
        XCTAssertFalse(LikePattern("a_c").matches("abbc"))
        XCTAssertTrue(LikePattern("___").matches("日本語"))
        XCTAssertTrue(LikePattern("_").matches("é"))
    }

    func testASCIICaseFoldingOnly() {
        XCTAssertTrue(LikePattern("HeLLo%").matches("hello world"))
        XCTAssertTrue(LikePattern("abc").matches("ABC"))
        XCTAssertFalse(LikePattern("é").matches("É"))
        XCTAssertTrue(LikePattern("é").matches("é"))
        XCTAssertFalse(LikePattern("straße").matches("STRASSE"))
    }

    func testOtherCharactersAreLiteral() {
        XCTAssertTrue(LikePattern("user.name").matches("user.name"))
        XCTAssertFalse(LikePattern("user.name").matches("userXname"))
        XCTAssertTrue(LikePattern("a*b").matches("a*b"))
        XCTAssertFalse(LikePattern("a*b").matches("aXb"))
        XCTAssertTrue(LikePattern("[x]\\").matches("[x]\\"))
    }

    func testEmptyPattern() {
        XCTAssertTrue(LikePattern("").matches(""))
        XCTAssertFalse(LikePattern("").matches("a"))
    }

    func testBacktrackingAcrossSeveralPercents() {
        XCTAssertTrue(LikePattern("%a%b%c%").matches("xxaxxbxxcxx"))
        XCTAssertFalse(LikePattern("%a%b%c%").matches("xxcxxbxxaxx"))
        XCTAssertTrue(LikePattern("%ab").matches("aab"))
        XCTAssertTrue(LikePattern("a%a%a").matches("aaa"))
        XCTAssertFalse(LikePattern("a%a%a").matches("aa"))
    }

    func testEscape() {
        let pattern = LikePattern("100!%", escape: "!")
        XCTAssertTrue(pattern.matches("100%"))
        XCTAssertFalse(pattern.matches("1000"))
        XCTAssertTrue(LikePattern("a!_b", escape: "!").matches("a_b"))
        XCTAssertFalse(LikePattern("a!_b", escape: "!").matches("axb"))
        XCTAssertFalse(LikePattern("ab!", escape: "!").matches("ab"))
        XCTAssertFalse(LikePattern("ab!", escape: "!").matches("ab!"))
    }
}
