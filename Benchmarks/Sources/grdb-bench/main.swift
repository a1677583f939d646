import BenchSupport
import DAO
import Foundation
import GRDB
import LogStore

// grdb-bench: the typed Dao and SQLDatabase beside GRDB 7 (groue/GRDB.swift) in the same run.
//
//   swift run -c release grdb-bench [--rows N] [--seconds S] [--svg DIR]
//
// Typed: Dao<DaoUser> vs GRDB Codable records on the same table User(id INTEGER PRIMARY KEY
// AUTOINCREMENT, name, color, timestamp) with an index on (color, timestamp): insert (one record
// per transaction), fetch by id, filtered query (color = ? ORDER BY timestamp LIMIT 10), update
// by id. SQL: SQLDatabase.execute vs GRDB's Database.execute / Row.fetchAll (cached statements)
// on sql-bench's table and statements. GRDB runs a DatabaseQueue in WAL mode with
// synchronous=NORMAL (as sql-bench's SQLite); the product runs a LogStore with default options.

struct Options {
    var rows = 50_000
    var seconds = 2.0
    var svgDirectory: String?

    init(_ arguments: [String]) throws {
        var iterator = arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            guard let value = iterator.next() else { throw BenchError.usage("\(argument) needs a value") }
            switch argument {
            case "--rows": rows = Int(value) ?? rows
            case "--seconds": seconds = Double(value) ?? seconds
            case "--svg": svgDirectory = value
            default: throw BenchError.usage("unknown option \(argument)")
            }
        }
    }
}

/// Runs `operation` up to `count` times or until `seconds` pass; returns operations per second.
func throughput(count: Int, seconds: Double, _ operation: (Int) throws -> Void) rethrows -> Double {
    let start = Date()
    var done = 0
    while done < count {
        try operation(done)
        done += 1
        if done % 64 == 0, Date().timeIntervalSince(start) > seconds { break }
    }
    return Double(done) / Date().timeIntervalSince(start)
}

func scratch(_ name: String) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("grdb-bench-\(name)-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A GRDB queue as sql-bench's SQLite is set up: WAL, synchronous=NORMAL.
func grdbQueue(_ directory: URL) throws -> DatabaseQueue {
    var configuration = Configuration()
    configuration.prepareDatabase { db in
        try db.execute(sql: "PRAGMA journal_mode = WAL")
        try db.execute(sql: "PRAGMA synchronous = NORMAL")
    }
    return try DatabaseQueue(path: directory.appendingPathComponent("bench.sqlite").path, configuration: configuration)
}

struct Row3 {
    var workload: String
    var unified: Double
    var grdb: Double
    var ratio: Double { grdb > 0 ? unified / grdb : 0 }
}

// MARK: Typed records

func typedWorkloads(_ options: Options) throws -> [Row3] {
    let n = options.rows
    var unified: [String: Double] = [:], grdb: [String: Double] = [:]

    do {
        let directory = try scratch("dao")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try LogStore(directory: directory)
        defer { try? store.close() }
        let users = try store.dao(for: DaoUser.self)
        unified["insert"] = try throughput(count: n, seconds: .infinity) { i in
            let fields = userFields(i)
            var user = DaoUser(id: nil, name: fields.name, color: fields.color, timestamp: fields.timestamp)
            try users.create(&user)
        }
        var random = SplitMix64(seed: 0x4752_4442)
        unified["fetch by id"] = try throughput(count: 200_000, seconds: options.seconds) { _ in
            guard try users.queryForID(Int64.random(in: 1...Int64(n), using: &random)) != nil else { throw BenchError.verification("dao fetch") }
        }
        unified["filtered query"] = try throughput(count: 100_000, seconds: options.seconds) { _ in
            let color = Int.random(in: 0..<64, using: &random)
            let found = try users.queryBuilder().where { $0.eq("color", color) }.orderBy("timestamp").limit(10).query()
            guard found.count == 10 || n < 1000 else { throw BenchError.verification("dao filtered query") }
        }
        unified["update"] = try throughput(count: n, seconds: options.seconds) { _ in
            let id = Int64.random(in: 1...Int64(n), using: &random)
            let fields = userFields(Int(id - 1))
            _ = try users.update(DaoUser(id: id, name: fields.name + "!", color: fields.color, timestamp: fields.timestamp))
        }
    }
    do {
        let directory = try scratch("grdb-records")
        defer { try? FileManager.default.removeItem(at: directory) }
        let queue = try grdbQueue(directory)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE User (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, color INTEGER, timestamp INTEGER)")
            try db.execute(sql: "CREATE INDEX User_color_timestamp ON User (color, timestamp)")
        }
        grdb["insert"] = try throughput(count: n, seconds: .infinity) { i in
            let fields = userFields(i)
            var user = GRDBUser(id: nil, name: fields.name, color: fields.color, timestamp: fields.timestamp)
            try queue.write { db in try user.insert(db) }
        }
        var random = SplitMix64(seed: 0x4752_4442)
        grdb["fetch by id"] = try throughput(count: 200_000, seconds: options.seconds) { _ in
            let id = Int64.random(in: 1...Int64(n), using: &random)
            guard try queue.read({ db in try GRDBUser.fetchOne(db, key: id) }) != nil else { throw BenchError.verification("grdb fetch") }
        }
        grdb["filtered query"] = try throughput(count: 100_000, seconds: options.seconds) { _ in
            let color = Int.random(in: 0..<64, using: &random)
            let found = try queue.read { db in
                try GRDBUser.filter(Column("color") == color).order(Column("timestamp")).limit(10).fetchAll(db)
            }
            guard found.count == 10 || n < 1000 else { throw BenchError.verification("grdb filtered query") }
        }
        grdb["update"] = try throughput(count: n, seconds: options.seconds) { _ in
            let id = Int64.random(in: 1...Int64(n), using: &random)
            let fields = userFields(Int(id - 1))
            let user = GRDBUser(id: id, name: fields.name + "!", color: fields.color, timestamp: fields.timestamp)
            try queue.write { db in try user.update(db) }
        }
    }
    return ["insert", "fetch by id", "filtered query", "update"].map {
        Row3(workload: "typed: \($0)", unified: unified[$0] ?? 0, grdb: grdb[$0] ?? 0)
    }
}

// MARK: SQL

let sqlSchema = [
    "CREATE TABLE bench (id INTEGER PRIMARY KEY, k INTEGER, name TEXT, v REAL)",
    "CREATE INDEX bench_k ON bench (k)",
    "CREATE INDEX bench_name ON bench (name)",
]
let insertSQL = "INSERT INTO bench (id, k, name, v) VALUES (?, ?, ?, ?)"

/// sql-bench's row i.
func sqlRow(_ i: Int) -> [DAOValue] {
    let hash = UInt64(i) &* 0x9E37_79B9_7F4A_7C15
    return [.integer(Int64(i + 1)), .integer(Int64(i)), .text("name-\(String(hash >> 20, radix: 36))"),
            .real(Double(hash % 1_000_000) / 1000)]
}

/// The statements of sql-bench's workloads, run by `execute` (returns the rows produced).
func sqlWorkloads(n: Int, seconds: Double, execute: (String, [DAOValue]) throws -> Int) throws -> [String: Double] {
    for statement in sqlSchema { _ = try execute(statement, []) }
    var figures: [String: Double] = [:]
    figures["insert"] = try throughput(count: n, seconds: .infinity) { _ = try execute(insertSQL, sqlRow($0)) }
    var random = SplitMix64(seed: 0x5153_4C42)
    figures["pk select"] = try throughput(count: 200_000, seconds: seconds) { _ in
        let id = Int64.random(in: 1...Int64(n), using: &random)
        guard try execute("SELECT id, k, name, v FROM bench WHERE id = ?", [.integer(id)]) == 1 else { throw BenchError.verification("pk") }
    }
    figures["range 100"] = try throughput(count: 50_000, seconds: seconds) { _ in
        let low = Int64.random(in: 0...Int64(n - 100), using: &random)
        guard try execute("SELECT id, k, name, v FROM bench WHERE k BETWEEN ? AND ?", [.integer(low), .integer(low + 99)]) == 100 else {
            throw BenchError.verification("range")
        }
    }
    figures["order limit 10"] = try throughput(count: 50_000, seconds: seconds) { _ in
        let from = "name-\(String(UInt64.random(in: 0...UInt64.max, using: &random) >> 20, radix: 36))"
        _ = try execute("SELECT id, k, name, v FROM bench WHERE name > ? ORDER BY name LIMIT 10", [.text(from)])
    }
    figures["scan filter"] = try throughput(count: 1_000, seconds: seconds) { _ in
        let low = Double.random(in: 0...999, using: &random)
        _ = try execute("SELECT id FROM bench WHERE v BETWEEN ? AND ?", [.real(low), .real(low + 1)])
    }
    return figures
}

extension DAOValue {
    /// The value as GRDB binds it.
    var grdbValue: DatabaseValue {
        switch self {
        case .null: return .null
        case .integer(let v): return v.databaseValue
        case .real(let v): return v.databaseValue
        case .text(let v): return v.databaseValue
        case .blob(let v): return Data(v).databaseValue
        }
    }
}

func sqlComparison(_ options: Options) throws -> [Row3] {
    let unified: [String: Double]
    do {
        let directory = try scratch("sql")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try LogStore(directory: directory)
        defer { try? store.close() }
        let database = try SQLDatabase.attached(to: store)
        unified = try sqlWorkloads(n: options.rows, seconds: options.seconds) { sql, arguments in
            try database.execute(sql, arguments: arguments).rows.count
        }
    }
    let grdb: [String: Double]
    do {
        let directory = try scratch("grdb-sql")
        defer { try? FileManager.default.removeItem(at: directory) }
        let queue = try grdbQueue(directory)
        grdb = try sqlWorkloads(n: options.rows, seconds: options.seconds) { sql, arguments in
            let values = StatementArguments(arguments.map(\.grdbValue))
            if sql.hasPrefix("SELECT") {
                let rows = try queue.read { db in try Row.fetchAll(db.cachedStatement(sql: sql), arguments: values) }
                // Read every value, as the product's result rows hold them all.
                var sink = 0
                for row in rows { for value in row.databaseValues where !value.isNull { sink += 1 } }
                return sink >= 0 ? rows.count : 0
            }
            try queue.write { db in try db.cachedStatement(sql: sql).execute(arguments: values) }
            return 0
        }
    }
    return ["insert", "pk select", "range 100", "order limit 10", "scan filter"].map {
        Row3(workload: "SQL: \($0)", unified: unified[$0] ?? 0, grdb: grdb[$0] ?? 0)
    }
}

do {
    let options = try Options(CommandLine.arguments)
    let sqliteVersion = try DatabaseQueue().read { db in try String.fetchOne(db, sql: "SELECT sqlite_version()") } ?? "?"
    print("grdb-bench: \(options.rows) rows, up to \(options.seconds) s per read/update workload; GRDB 7 on SQLite \(sqliteVersion) (DatabaseQueue, WAL, synchronous=NORMAL, one transaction per write); UnifiedStorage LogStore default options")
    let rows = try typedWorkloads(options) + sqlComparison(options)
    print("| workload | UnifiedStorage ops/s | GRDB ops/s | ratio |")
    print("| --- | ---: | ---: | ---: |")
    for row in rows {
        print("| \(row.workload) | \(String(format: "%.0f", row.unified)) | \(String(format: "%.0f", row.grdb)) | \(String(format: "%.2f", row.ratio))x |")
    }
    if let directory = options.svgDirectory {
        let chart = RatioChart(title: "UnifiedStorage vs GRDB 7 (ops/s ratio; > 1: UnifiedStorage faster)",
                               peer: "GRDB", bars: rows.map { ($0.workload, $0.ratio) })
        let url = try chart.write(to: URL(fileURLWithPath: directory), name: "grdb-bench")
        print("chart: \(url.path)")
    }
} catch {
    FileHandle.standardError.write(Data("grdb-bench: \(error)\n".utf8))
    exit(1)
}
