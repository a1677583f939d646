import BenchSupport
import DAO
import Foundation
#if canImport(Glibc)
import Glibc
#endif

// sql-bench: the SQL engine (issue 7) against SQLite 3 in the same run.
//
//   swift run -c release sql-bench [--rows N] [--reopen-rows N] [--seconds S] [--engine both|unified|sqlite] [--svg DIR]
//                                  [--only joins|join|join-aggregate|in-subquery|insert|pk|range|covered|order|scan|window]
//                                  [--materialize] [--checkpoint-first]
//
// --engine runs one engine alone, so its process's memory (RssAnon, RssFile, peak VmHWM, read
// from /proc/self/status) is its own; with both, the figures after SQLite include what
// UnifiedStorage left. The 10M-row scale is --reopen-rows 10000000 (about 1.5 GB of rows;
// allow several minutes per engine for the load).
//
// Table bench(id INTEGER PRIMARY KEY, k INTEGER, name TEXT, v REAL) with indexes on k and name.
// Every workload runs the same statements with the same arguments on both engines; each
// statement is its own transaction (autocommit) unless said. Throughput workloads stop after
// --seconds (default 3) or their operation count, whichever comes first. `--only joins` runs the
// join and IN (SELECT) workloads alone (no bench table, no reopen), `--only join` (or another
// of their keys) that one query alone, e.g. under callgrind; `--only pk` (range, covered, order,
// scan) loads the bench table and runs that workload alone (no joins, no reopen); `--only insert`
// measures the inserts alone.
// UnifiedStorage reads each query's rows with SQLDatabase.forEachRow (a row at a time, every
// value read in its storage class), as SQLite's side steps through sqlite3_step and reads each
// column; --materialize reads them as execute's SQLResult.rows ([[DAOValue]]) instead.
// --checkpoint-first writes an index checkpoint (SQLite: a WAL checkpoint) after creating the
// schema, as a store closed cleanly and opened again has one: each insert then also names its
// row in the checkpoint's journal (FORMAT.md "DAO index checkpoint").
// Then the join and IN (SELECT) workloads (JoinWorkloads.swift) on tables orders and customers
// of the same database; their answers on a fixed sample must agree between the engines.

struct Options {
    var rows = 100_000
    var reopenRows = 1_000_000
    var seconds = 3.0
    var svgDirectory: String?
    var engines = ["UnifiedStorage", "SQLite"]
    /// UnifiedStorage reads results as `execute`'s materialized rows instead of `forEachRow`.
    var materialize = false
    /// "joins": only the join workloads; a workload key: only that one.
    var only: String?
    /// An index checkpoint before the inserts (they then journal their rows).
    var checkpointFirst = false

    init(_ arguments: [String]) throws {
        var iterator = arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            if argument == "--materialize" { materialize = true; continue }
            if argument == "--checkpoint-first" { checkpointFirst = true; continue }
            guard let value = iterator.next() else { throw BenchError.usage("\(argument) needs a value") }
            switch argument {
            case "--rows": rows = Int(value) ?? rows
            case "--reopen-rows": reopenRows = Int(value) ?? reopenRows
            case "--seconds": seconds = Double(value) ?? seconds
            case "--svg": svgDirectory = value
            case "--only":
                guard (["joins"] + joinWorkloadKeys + tableWorkloadKeys).contains(value) else {
                    throw BenchError.usage("--only takes joins, \((joinWorkloadKeys + tableWorkloadKeys).joined(separator: ", "))")
                }
                only = value
            case "--engine":
                switch value {
                case "both": engines = ["UnifiedStorage", "SQLite"]
                case "unified": engines = ["UnifiedStorage"]
                case "sqlite": engines = ["SQLite"]
                default: throw BenchError.usage("--engine takes both, unified or sqlite")
                }
            default: throw BenchError.usage("unknown option \(argument)")
            }
        }
    }
}

/// The row with index i: deterministic values, k in insertion order, name and v scrambled.
func row(_ i: Int) -> [DAOValue] {
    let hash = UInt64(i) &* 0x9E37_79B9_7F4A_7C15
    return [.integer(Int64(i + 1)), .integer(Int64(i)), .text("name-\(String(hash >> 20, radix: 36))"),
            .real(Double(hash % 1_000_000) / 1000)]
}

let schema = [
    "CREATE TABLE bench (id INTEGER PRIMARY KEY, k INTEGER, name TEXT, v REAL)",
    "CREATE INDEX bench_k ON bench (k)",
    "CREATE INDEX bench_name ON bench (name)",
]
let insertSQL = "INSERT INTO bench (id, k, name, v) VALUES (?, ?, ?, ?)"
/// The read workloads on table bench that `--only` can pick.
let tableWorkloadKeys = ["insert", "pk", "range", "covered", "order", "scan", "window"]
/// The workloads of JoinWorkloads.swift.
let joinWorkloadKeys = ["join", "join-aggregate", "in-subquery"]

/// Runs `operation` up to `count` times or until `seconds` pass; returns operations per second.
func throughput(count: Int, seconds: Double, _ operation: (Int) throws -> Void) rethrows -> (opsPerSecond: Double, done: Int) {
    let start = Date()
    var done = 0
    while done < count {
        try operation(done)
        done += 1
        if done % 64 == 0, Date().timeIntervalSince(start) > seconds { break }
    }
    return (Double(done) / Date().timeIntervalSince(start), done)
}

struct Measurement {
    var workload: String
    var unified: Double
    var sqlite: Double
    var unit: String
    var goal: String
    /// nil: a figure with no goal of its own.
    var met: Bool?
}

func scratch(_ name: String) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("sql-bench-\(name)-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// This process's resident memory from /proc/self/status, in MB: anonymous, file-backed, peak.
func memory() -> (anon: Double, file: Double, peak: Double) {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return (0, 0, 0) }
    func field(_ name: String) -> Double {
        for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
            let digits = line.dropFirst(name.count + 1).filter { $0.isNumber }
            return (Double(String(digits)) ?? 0) / 1024
        }
        return 0
    }
    return (field("RssAnon"), field("RssFile"), field("VmHWM"))
}

/// The memory line after handing freed heap back to the system (malloc_trim), so RssAnon counts
/// live memory rather than what the allocator kept from earlier workloads.
func memoryLine(_ label: String) -> String {
    // glibc's malloc_trim (not in the Glibc module), looked up at run time.
    typealias MallocTrim = @convention(c) (Int) -> Int32
    if let symbol = dlsym(nil, "malloc_trim") { _ = unsafeBitCast(symbol, to: MallocTrim.self)(0) }
    let m = memory()
    return String(format: "%@: RssAnon %.0f MB, RssFile %.0f MB, peak RSS (VmHWM) %.0f MB", label, m.anon, m.file, m.peak)
}

func engineMakers(_ options: Options) -> [(URL) throws -> SQLBenchEngine] {
    options.engines.map { name in
        name == "SQLite" ? { try SQLiteBenchEngine(directory: $0) } : { try UnifiedEngine(directory: $0, materialize: options.materialize) }
    }
}

func measureAll(_ options: Options) throws -> [Measurement] {
    var results: [String: [String: Double]] = [:]
    var joinAnswers: [String: [String: String]] = [:]
    let n = options.rows
    for make in engineMakers(options) {
        let directory = try scratch("main")
        defer { try? FileManager.default.removeItem(at: directory) }
        let engine = try make(directory)
        var figures: [String: Double] = [:]
        func wanted(_ key: String) -> Bool { options.only == nil || options.only == key }
        if let only = options.only, !tableWorkloadKeys.contains(only) {
            let joins = try measureJoins(engine, orders: n, seconds: options.seconds, only: only == "joins" ? nil : only)
            results[engine.name] = joins.figures
            joinAnswers[engine.name] = joins.fingerprints
            try engine.close()
            continue
        }
        for statement in schema { try engine.run(statement, []) }
        if options.checkpointFirst { try engine.checkpoint() }
        // Insert: one row per statement, each its own transaction.
        // With --only the inserts go through `rows`, so that callgrind's --toggle-collect on the
        // engine's `run` witness (`...UnifiedEngineCAA08SQLBenchD0A2aDP3run...`) sees only the
        // one workload.
        let insert = try throughput(count: n, seconds: .infinity) {
            if options.only == nil { try engine.run(insertSQL, row($0)) } else { _ = try engine.rows(insertSQL, row($0)) }
        }
        figures["insert"] = insert.opsPerSecond
        // Seeded, so both engines get the same statements, and free of a system call per draw.
        var random = SplitMix64(seed: 0x5153_4C42)
        let pk = try throughput(count: wanted("pk") ? 200_000 : 0, seconds: options.seconds) { _ in
            let id = Int64.random(in: 1...Int64(n), using: &random)
            guard try engine.run("SELECT id, k, name, v FROM bench WHERE id = ?", [.integer(id)]) == 1 else { throw BenchError.verification("pk select") }
        }
        figures["pk"] = pk.opsPerSecond
        let range = try throughput(count: wanted("range") ? 50_000 : 0, seconds: options.seconds) { _ in
            let low = Int64.random(in: 0...Int64(n - 100), using: &random)
            guard try engine.run("SELECT id, k, name, v FROM bench WHERE k BETWEEN ? AND ?", [.integer(low), .integer(low + 99)]) == 100 else {
                throw BenchError.verification("range")
            }
        }
        figures["range"] = range.opsPerSecond
        // The same ranges with only indexed columns read: both engines answer from the index
        // (SQLite's covering index) without reading the rows.
        let covered = try throughput(count: wanted("covered") ? 50_000 : 0, seconds: options.seconds) { _ in
            let low = Int64.random(in: 0...Int64(n - 100), using: &random)
            guard try engine.run("SELECT id, k FROM bench WHERE k BETWEEN ? AND ?", [.integer(low), .integer(low + 99)]) == 100 else {
                throw BenchError.verification("covered range")
            }
        }
        figures["covered"] = covered.opsPerSecond
        let order = try throughput(count: wanted("order") ? 50_000 : 0, seconds: options.seconds) { _ in
            let from = "name-\(String(UInt64.random(in: 0...UInt64.max, using: &random) >> 20, radix: 36))"
            try engine.run("SELECT id, k, name, v FROM bench WHERE name > ? ORDER BY name LIMIT 10", [.text(from)])
        }
        figures["order"] = order.opsPerSecond
        let scan = try throughput(count: wanted("scan") ? 1_000 : 0, seconds: options.seconds) { _ in
            let low = Double.random(in: 0...999, using: &random)
            try engine.run("SELECT id FROM bench WHERE v BETWEEN ? AND ?", [.real(low), .real(low + 1)])
        }
        figures["scan"] = scan.opsPerSecond
        // Window functions over the 1,000 rows of a rowid range: a moving sum over the last ten
        // rows and a rank within ten groups, as a report or feed screen asks for them.
        let width = min(1_000, n)
        let window = try throughput(count: wanted("window") ? 5_000 : 0, seconds: options.seconds) { _ in
            let low = Int64.random(in: 1...Int64(n - width + 1), using: &random)
            guard try engine.run("SELECT id, sum(v) OVER (ORDER BY id ROWS BETWEEN 9 PRECEDING AND CURRENT ROW), "
                                 + "rank() OVER (PARTITION BY k % 10 ORDER BY v DESC) FROM bench WHERE id BETWEEN ? AND ?",
                                 [.integer(low), .integer(low + Int64(width) - 1)]) == width else {
                throw BenchError.verification("window functions")
            }
        }
        figures["window"] = window.opsPerSecond
        if options.only == nil {
            let joins = try measureJoins(engine, orders: n, seconds: options.seconds)
            figures.merge(joins.figures) { _, new in new }
            joinAnswers[engine.name] = joins.fingerprints
        }
        try engine.close()
        results[engine.name] = figures
        print("  \(engine.name): \(n) rows inserted, \(pk.done) pk selects, \(range.done) ranges, \(order.done) order-limits, \(scan.done) scans")
        print("  " + memoryLine("\(engine.name) after the \(n)-row workloads"))
    }
    if let ours = joinAnswers["UnifiedStorage"], let theirs = joinAnswers["SQLite"], ours != theirs {
        throw BenchError.verification("join/subquery answers differ: UnifiedStorage \(ours), SQLite \(theirs)")
    }
    // Reopen: a table of reopenRows rows with two indexes, loaded in one transaction; then close,
    // open and run the first query.
    var reopen: [String: Double] = [:]
    var reopenUnprepared: [String: Double] = [:]
    var reopenAfterCrash: [String: Double] = [:]
    let crashChanges = 1_000
    for make in engineMakers(options) where options.only == nil {
        let directory = try scratch("reopen")
        defer { try? FileManager.default.removeItem(at: directory) }
        let engine = try make(directory)
        for statement in schema { try engine.run(statement, []) }
        let load = Date()
        try engine.run("BEGIN", [])
        for i in 0..<options.reopenRows { try engine.run(insertSQL, row(i)) }
        try engine.run("COMMIT", [])
        let loadSeconds = Date().timeIntervalSince(load)
        let checkpointStart = Date()
        try engine.checkpoint()
        let checkpointSeconds = Date().timeIntervalSince(checkpointStart)
        func reopenAndQuery() throws -> Double {
            let start = Date()
            try engine.reopen()
            guard try engine.run("SELECT id, k, name, v FROM bench WHERE id = ?", [.integer(Int64(options.reopenRows / 2))]) == 1 else {
                throw BenchError.verification("reopen query")
            }
            return Date().timeIntervalSince(start)
        }
        reopen[engine.name] = try reopenAndQuery()
        if let phases = (engine as? UnifiedEngine)?.lastReopenPhases { print("  UnifiedStorage reopen phases: \(phases)") }
        print("  \(engine.name): \(options.reopenRows) rows loaded in \(String(format: "%.1f", loadSeconds)) s (one transaction), "
              + "checkpoint \(String(format: "%.3f", checkpointSeconds)) s; reopen + first query \(String(format: "%.3f", reopen[engine.name] ?? 0)) s")
        print("  " + memoryLine("\(engine.name) after the reopen"))
        // One change after the checkpoint, then a reopen without the checkpoint file (as after a
        // crash): UnifiedStorage reads every row.
        try engine.run("UPDATE bench SET v = v + 1 WHERE id = ?", [.integer(1)])
        (engine as? UnifiedEngine)?.dropCheckpointOnReopen = true
        reopenUnprepared[engine.name] = try reopenAndQuery()
        (engine as? UnifiedEngine)?.dropCheckpointOnReopen = false
        if let phases = (engine as? UnifiedEngine)?.lastReopenPhases { print("  UnifiedStorage reopen phases: \(phases)") }
        print("  \(engine.name): reopen + first query without a checkpoint file \(String(format: "%.3f", reopenUnprepared[engine.name] ?? 0)) s")
        print("  " + memoryLine("\(engine.name) after the second reopen"))
        // A checkpoint, 1,000 rows changed after it (each UPDATE its own transaction: both
        // indexed columns), then a crash: the files copied while open, the copy opened.
        try engine.checkpoint()
        var random = SystemRandomNumberGenerator()
        for _ in 0..<crashChanges {
            let id = Int64.random(in: 0..<Int64(options.reopenRows), using: &random)
            try engine.run("UPDATE bench SET k = k + 1, name = name || 'x' WHERE id = ?", [.integer(id)])
        }
        let crashed = try engine.crash()
        defer { try? FileManager.default.removeItem(at: crashed) }
        let crashStart = Date()
        try engine.openAfterCrash()
        guard try engine.run("SELECT id, k, name, v FROM bench WHERE id = ?", [.integer(Int64(options.reopenRows / 2))]) == 1 else {
            throw BenchError.verification("query after the crash")
        }
        reopenAfterCrash[engine.name] = Date().timeIntervalSince(crashStart)
        if let phases = (engine as? UnifiedEngine)?.lastReopenPhases { print("  UnifiedStorage open after the crash: \(phases)") }
        print("  \(engine.name): open + first query after a crash, \(crashChanges) rows changed since the checkpoint, \(String(format: "%.3f", reopenAfterCrash[engine.name] ?? 0)) s")
        print("  " + memoryLine("\(engine.name) after the open after the crash"))
        try engine.close()
    }
    func ratio(_ key: String) -> (Double, Double, Double) {
        let u = results["UnifiedStorage"]?[key] ?? 0, s = results["SQLite"]?[key] ?? 0
        return (u, s, s > 0 ? u / s : 0)
    }
    var measurements: [Measurement] = []
    for (key, label, goal) in [("insert", "insert (1 row/statement)", 10.0), ("pk", "primary-key select", 3.0), ("range", "indexed range, 100 rows", 2.0),
                               ("covered", "indexed range, 100 rows, index columns only (covering)", 2.0),
                               ("order", "ORDER BY indexed LIMIT 10", 2.0), ("scan", "full-scan filter", 1.0),
                               ("join", "join 100 orders to customers (rowid)", 1.0),
                               ("join-aggregate", "join region's customers to orders (index), count/sum", 1.0),
                               ("in-subquery", "IN (SELECT) on indexed column", 1.0)] {
        let (u, s, r) = ratio(key)
        if let only = options.only, results.values.allSatisfy({ $0[key] == nil }) || (only != "joins" && only != key) { continue }
        measurements.append(Measurement(workload: label, unified: u, sqlite: s, unit: "ops/s", goal: ">= \(goal)x (is \(String(format: "%.2f", r))x)", met: r >= goal))
    }
    // No issue sets a goal for window functions; the ratio is reported.
    if let only = options.only, only != "window" {} else if results.values.contains(where: { $0["window"] != nil }) {
        let (u, s, r) = ratio("window")
        measurements.append(Measurement(workload: "window functions over 1,000 rows (moving sum, rank)", unified: u, sqlite: s, unit: "ops/s",
                                        goal: "- (is \(String(format: "%.2f", r))x)", met: nil))
    }
    if options.only != nil { return measurements }
    let u = reopen["UnifiedStorage"] ?? .infinity
    measurements.append(Measurement(workload: "reopen \(options.reopenRows) rows + first query, from the checkpoint", unified: u, sqlite: reopen["SQLite"] ?? 0,
                                    unit: "s", goal: "<= 0.010 s", met: u <= 0.010))
    let v = reopenUnprepared["UnifiedStorage"] ?? .infinity
    measurements.append(Measurement(workload: "reopen \(options.reopenRows) rows + first query, no checkpoint file (rows read)", unified: v,
                                    sqlite: reopenUnprepared["SQLite"] ?? 0, unit: "s", goal: "<= 0.010 s", met: v <= 0.010))
    let c = reopenAfterCrash["UnifiedStorage"] ?? .infinity, sc = reopenAfterCrash["SQLite"] ?? 0
    measurements.append(Measurement(workload: "open \(options.reopenRows) rows + first query after a crash, \(crashChanges) rows changed since the checkpoint",
                                    unified: c, sqlite: sc, unit: "s", goal: "-", met: nil))
    return measurements
}

do {
    let options = try Options(CommandLine.arguments)
    let version = (try? SQLiteBenchEngine(directory: try scratch("probe")))?.version ?? "unavailable"
    print("sql-bench: \(options.rows) rows, reopen table \(options.reopenRows) rows, up to \(options.seconds) s per read workload; SQLite \(version) (WAL, synchronous=NORMAL, autocommit); UnifiedStorage LogStore default options")
    let measurements = try measureAll(options)
    print("| workload | UnifiedStorage | SQLite | unit | goal | met |")
    print("| --- | ---: | ---: | --- | --- | --- |")
    for m in measurements {
        let digits = m.unit == "s" ? 3 : 0
        print("| \(m.workload) | \(String(format: "%.\(digits)f", m.unified)) | \(String(format: "%.\(digits)f", m.sqlite)) | \(m.unit) | \(m.goal) | \(m.met.map { $0 ? "met" : "not met" } ?? "-") |")
    }
    if let directory = options.svgDirectory, options.engines.count == 2 {
        // Speed ratios: ops/s UnifiedStorage / SQLite, or SQLite's time / UnifiedStorage's.
        let bars = measurements.map { m in (label: m.workload, ratio: m.unit == "s" ? m.sqlite / m.unified : m.unified / m.sqlite) }
        let chart = RatioChart(title: "sql-bench: SQLDatabase vs SQLite (> 1x: UnifiedStorage faster)", peer: "SQLite", bars: bars)
        print("chart: \(try chart.write(to: URL(fileURLWithPath: directory), name: "sql-bench").path)")
    }
} catch {
    FileHandle.standardError.write(Data("sql-bench: \(error)\n".utf8))
    exit(1)
}
