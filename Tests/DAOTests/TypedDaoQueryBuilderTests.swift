import Foundation
import XCTest
@testable import DAO

/// The query builder and its Where conditions, on SQLite and on SQLDatabase.
final class TypedDaoQueryBuilderTests: XCTestCase {
    /// ann(0, 100), bob(1, 90), cy(2, 80), dee(0, 70), Eve(1, 60), nil-name row... names unique.
    private func seed(_ users: Dao<User>) throws {
        for (index, name) in ["ann", "bob", "cy", "dee", "Eve"].enumerated() {
            var user = User(id: nil, name: name, color: index % 3, timestamp: Int64(100 - index * 10))
            try users.create(&user)
        }
    }

    private func names(_ users: Dao<User>, _ build: @escaping (Where<User>) -> Where<User>) throws -> [String] {
        try users.queryBuilder().where(build).orderBy("id").query().map(\.name)
    }

    func testComparisons() throws {
        try forEachBackend(User.self) { users, _ in
            try seed(users)
            XCTAssertEqual(try names(users) { $0.eq("name", "ann") }, ["ann"])
            XCTAssertEqual(try names(users) { $0.ne("color", 0) }, ["bob", "cy", "Eve"])
            XCTAssertEqual(try names(users) { $0.lt("timestamp", Int64(80)) }, ["dee", "Eve"])
            XCTAssertEqual(try names(users) { $0.le("timestamp", 80) }, ["cy", "dee", "Eve"])
            XCTAssertEqual(try names(users) { $0.gt("timestamp", 80.5) }, ["ann", "bob"])
            XCTAssertEqual(try names(users) { $0.ge("timestamp", Int32(90)) }, ["ann", "bob"])
            XCTAssertEqual(try names(users) { $0.eq("name", nil) }, [])
            XCTAssertEqual(try names(users) { $0.ne("name", nil) }.count, 5)
        }
    }

    func testLikeBetweenInNotInAndNullTests() throws {
        try forEachBackend(Setting.self) { settings, _ in
            for (key, group, value) in [("a", "Alpha", 1.0), ("b", nil, 2.0), ("c", "alps", 3.5), ("d", "beta", -4.0)] as [(String, String?, Double)] {
                var setting = Setting(key: key, group: group, value: value)
                try settings.create(&setting)
            }
            func keys(_ build: @escaping (Where<Setting>) -> Where<Setting>) throws -> [String] {
                try settings.queryBuilder().where(build).orderBy("key").query().map(\.key)
            }
            XCTAssertEqual(try keys { $0.like("group", "al%") }, ["a", "c"], "LIKE folds ASCII case")
            XCTAssertEqual(try keys { $0.between("value", 1, 3) }, ["a", "b"])
            XCTAssertEqual(try keys { $0.in("key", ["a", "d", "zz"]) }, ["a", "d"])
            XCTAssertEqual(try keys { $0.in("key", []) }, [])
            XCTAssertEqual(try keys { $0.notIn("key", ["a", "d"]) }, ["b", "c"])
            XCTAssertEqual(try keys { $0.notIn("group", []) }, ["a", "b", "c", "d"])
            XCTAssertEqual(try keys { $0.notIn("group", ["beta"]) }, ["a", "c"], "NULL NOT IN (...) is NULL")
            XCTAssertEqual(try keys { $0.isNull("group") }, ["b"])
            XCTAssertEqual(try keys { $0.isNotNull("group") }, ["a", "c", "d"])
        }
    }

    func testAndOrNotCombineLeftToRight() throws {
        try forEachBackend(User.self) { users, _ in
            try seed(users)
            XCTAssertEqual(try names(users) { $0.eq("color", 0).and().gt("timestamp", 80) }, ["ann"])
            XCTAssertEqual(try names(users) { $0.eq("color", 2).or().eq("name", "ann") }, ["ann", "cy"])
            XCTAssertEqual(try names(users) { $0.not().eq("color", 0) }, ["bob", "cy", "Eve"])
            // (color = 0 OR color = 2) AND timestamp < 90: left to right, not AND-first.
            XCTAssertEqual(try names(users) { $0.eq("color", 0).or().eq("color", 2).and().lt("timestamp", 90) }, ["cy", "dee"])
            XCTAssertEqual(try names(users) { $0.eq("color", 1).and().not().eq("name", "bob") }, ["Eve"])
            // Two clauses with no operator are ANDed.
            XCTAssertEqual(try names(users) { $0.eq("color", 1).lt("timestamp", 70) }, ["Eve"])
        }
    }

    func testMisplacedOperatorsAndUnknownColumnsThrowWhenRun() throws {
        try forEachBackend(User.self) { users, _ in
            try seed(users)
            XCTAssertThrowsError(try users.queryBuilder().where { $0.and().eq("color", 1) }.query()) { error in
                guard case DAOError.syntax = error else { return XCTFail("\(error)") }
            }
            XCTAssertThrowsError(try users.queryBuilder().where { $0.eq("color", 1).or() }.query())
            XCTAssertThrowsError(try users.queryBuilder().where { $0.eq("color", 1).and().or().eq("id", 1) }.countOf())
            XCTAssertThrowsError(try users.queryBuilder().where { $0.not().not().eq("color", 1) }.query())
            let injection = #"name" = 'ann' OR "1"#
            XCTAssertThrowsError(try users.queryBuilder().where { $0.eq(injection, 1) }.query()) { error in
                guard case DAOError.noSuchColumn(injection) = error else { return XCTFail("\(error)") }
            }
            XCTAssertThrowsError(try users.queryBuilder().orderBy("name; DROP TABLE User").query()) { error in
                guard case DAOError.noSuchColumn = error else { return XCTFail("\(error)") }
            }
            XCTAssertThrowsError(try users.queryBuilder().where { $0.in("colour", []) }.query())
            XCTAssertEqual(try users.countOf(), 5)
        }
    }

    func testOrderByLimitOffsetFirstAndCount() throws {
        try forEachBackend(User.self) { users, _ in
            try seed(users)
            XCTAssertEqual(try users.queryBuilder().orderBy("timestamp").query().map(\.name), ["Eve", "dee", "cy", "bob", "ann"])
            XCTAssertEqual(try users.queryBuilder().orderBy("color", ascending: false).orderBy("name").query().map(\.name),
                           ["cy", "Eve", "bob", "ann", "dee"])
            XCTAssertEqual(try users.queryBuilder().orderBy("timestamp").limit(2).query().map(\.name), ["Eve", "dee"])
            XCTAssertEqual(try users.queryBuilder().orderBy("timestamp").limit(2).offset(2).query().map(\.name), ["cy", "bob"])
            XCTAssertEqual(try users.queryBuilder().orderBy("timestamp").offset(3).query().map(\.name), ["bob", "ann"])
            XCTAssertEqual(try users.queryBuilder().where { $0.ge("color", 1) }.orderBy("name", ascending: false).queryForFirst()?.name, "cy")
            XCTAssertNil(try users.queryBuilder().where { $0.gt("color", 5) }.queryForFirst())
            XCTAssertEqual(try users.queryBuilder().where { $0.eq("color", 0) }.limit(1).countOf(), 2)
            XCTAssertEqual(try users.queryBuilder().countOf(), 5)
        }
    }
}
