import DAO
import Foundation
import LogStore

/// One store for the whole run, with two tables (typed and typeless columns, a unique and a
/// composite index) and a few rows of every storage class.
private let database: SQLDatabase? = {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-sql-exec-\(getpid())")
    try? FileManager.default.removeItem(at: directory)
    guard let store = try? LogStore(directory: directory), let db = try? SQLDatabase.attached(to: store) else { return nil }
    let setup = [
        "CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT UNIQUE, b REAL, c BLOB, d, e NUMERIC NOT NULL DEFAULT 0)",
        "CREATE INDEX t_bd ON t (b DESC, d)",
        "CREATE TABLE u (k TEXT, v INT, PRIMARY KEY (k, v))",
        "INSERT INTO t VALUES (1, 'one', 1.5, x'00ff', NULL, 1), (2, 'Two', -0.0, x'', 'x', 2), (-5, NULL, 1e308, NULL, 9223372036854775807, '3')",
        "INSERT INTO u VALUES ('a', 1), ('b', NULL), ('', -9223372036854775808)",
    ]
    for statement in setup { _ = try? db.execute(statement) }
    return db
}()

/// libFuzzer entry: the input is one statement, run inside BEGIN ... ROLLBACK so the tables
/// stay small: the evaluator, planner, indexes and constraint checks on arbitrary statements.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSQLExec(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, let database else { return 0 }
    let sql = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    _ = try? database.execute("BEGIN")
    _ = try? database.execute(sql, arguments: [.integer(1), .text("x"), .real(0.5), .null, .blob([1])])
    if database.inTransaction { _ = try? database.execute("ROLLBACK") }
    return 0
}
