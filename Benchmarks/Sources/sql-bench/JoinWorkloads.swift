import BenchSupport
import DAO
import Foundation

// The join and subquery workloads (issue 15): orders(--rows rows) referencing customers
// (--rows / 10 rows, five customers per region), loaded in one transaction, then three queries
// timed like the other read workloads. Before timing, each query runs on a fixed sample of
// arguments and its sorted answer is fingerprinted; main compares the fingerprints of the two
// engines, so a fast wrong answer fails the run.

let joinSchema = [
    "CREATE TABLE customers (id INTEGER PRIMARY KEY, region INTEGER, name TEXT)",
    "CREATE INDEX customers_region ON customers (region)",
    "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, cents INTEGER, note TEXT)",
    "CREATE INDEX orders_customer ON orders (customer_id)",
]

/// 100 orders by a rowid range, each joined to its customer through the customers' rowid.
let joinSQL = "SELECT o.id, o.cents, c.id, c.name FROM orders AS o JOIN customers AS c ON o.customer_id = c.id WHERE o.id BETWEEN ? AND ?"
/// The five customers of a region (index on region), each joined to its orders through the
/// index on orders.customer_id, counted and summed (integer cents, so both sums are exact).
let joinAggregateSQL = "SELECT count(*), sum(o.cents), max(c.name) FROM customers AS c JOIN orders AS o ON o.customer_id = c.id WHERE c.region = ?"
/// The orders of a region's five customers: an uncorrelated subquery on the indexed region
/// whose ids probe the index on orders.customer_id.
let inSubquerySQL = "SELECT id, customer_id, cents FROM orders WHERE customer_id IN (SELECT id FROM customers WHERE region = ?)"

struct JoinData {
    let orders: Int
    var customers: Int { max(orders / 10, 5) }
    var regions: Int { max(customers / 5, 1) }

    func customer(_ id: Int) -> [DAOValue] {
        [.integer(Int64(id)), .integer(Int64(id % regions)), .text("customer-\(id)")]
    }

    /// Order `id` (1-based) of a customer drawn from a hash of the id, so a customer's orders
    /// are spread over the table.
    func order(_ id: Int) -> [DAOValue] {
        let hash = UInt64(id) &* 0x9E37_79B9_7F4A_7C15
        return [.integer(Int64(id)), .integer(Int64((hash >> 20) % UInt64(customers)) + 1), .integer(Int64(hash % 100_000)),
                .text("note-\(id % 97)")]
    }

    func load(_ engine: SQLBenchEngine) throws -> Double {
        let start = Date()
        for statement in joinSchema { try engine.run(statement, []) }
        try engine.run("BEGIN", [])
        for id in 1...customers { try engine.run("INSERT INTO customers (id, region, name) VALUES (?, ?, ?)", customer(id)) }
        for id in 1...orders { try engine.run("INSERT INTO orders (id, customer_id, cents, note) VALUES (?, ?, ?, ?)", order(id)) }
        try engine.run("COMMIT", [])
        return Date().timeIntervalSince(start)
    }

    /// A join's arguments: a range of 100 order ids drawn from `random`.
    func joinArguments(_ random: inout SplitMix64) -> [DAOValue] {
        let low = Int64.random(in: 1...Int64(max(orders - 99, 1)), using: &random)
        return [.integer(low), .integer(low + 99)]
    }

    /// A region drawn from `random`.
    func regionArgument(_ random: inout SplitMix64) -> [DAOValue] {
        [.integer(Int64.random(in: 0..<Int64(regions), using: &random))]
    }
}

/// A value as text that tells its storage class (so 1 and 1.0 differ).
private func canonical(_ value: DAOValue) -> String {
    switch value {
    case .null: return "NULL"
    case .integer(let v): return "i\(v)"
    case .real(let v): return "r\(v)"
    case .text(let v): return "t\(v)"
    case .blob(let v): return "b\(v)"
    }
}

/// FNV-1a over the sorted rows of every sample: equal answers give equal fingerprints whatever
/// the row order (none of the queries has an ORDER BY).
private func fingerprint(_ answers: [[[DAOValue]]]) -> String {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    var rows = 0
    for answer in answers {
        rows += answer.count
        for line in answer.map({ $0.map(canonical).joined(separator: "|") }).sorted() {
            for byte in line.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
            hash = (hash ^ 0x0A) &* 0x100_0000_01B3
        }
    }
    return "\(rows) rows, FNV-1a \(String(hash, radix: 16))"
}

/// Loads the join tables into `engine`, checks and times the three queries; returns ops/s by
/// workload key ("join", "join-aggregate", "in-subquery") and each query's answer fingerprint.
/// `only`: one of those keys, to run that query alone.
func measureJoins(_ engine: SQLBenchEngine, orders: Int, seconds: Double, only: String? = nil) throws -> (figures: [String: Double], fingerprints: [String: String]) {
    let data = JoinData(orders: orders)
    let loadSeconds = try data.load(engine)
    print("  \(engine.name): join tables loaded in \(String(format: "%.1f", loadSeconds)) s (\(orders) orders, \(data.customers) customers, one transaction)")
    let queries: [(key: String, sql: String, arguments: (inout SplitMix64) -> [DAOValue])] = [
        ("join", joinSQL, data.joinArguments),
        ("join-aggregate", joinAggregateSQL, data.regionArgument),
        ("in-subquery", inSubquerySQL, data.regionArgument),
    ]
    var fingerprints: [String: String] = [:]
    var figures: [String: Double] = [:]
    for query in queries where only == nil || only == query.key {
        var sample = SplitMix64(seed: 0x4A4F_494E)
        fingerprints[query.key] = fingerprint(try (0..<50).map { _ in try engine.rows(query.sql, query.arguments(&sample)) })
        let plan = try engine.plan(query.sql, query.arguments(&sample)).split(separator: "\n").joined(separator: " / ")
        print("  \(engine.name) \(query.key): \(fingerprints[query.key] ?? "") on 50 samples; plan: \(plan)")
        var random = SplitMix64(seed: 0x5351_4C4A)
        let timed = try throughput(count: 50_000, seconds: seconds) { _ in
            let rows = try engine.run(query.sql, query.arguments(&random))
            // Every order has its customer; every region has five customers.
            if query.key == "join", rows != 100 { throw BenchError.verification("join returned \(rows) rows, not 100") }
            if query.key == "join-aggregate", rows != 1 { throw BenchError.verification("join aggregate returned \(rows) rows, not 1") }
        }
        figures[query.key] = timed.opsPerSecond
        print("  \(engine.name) \(query.key): \(timed.done) queries, \(String(format: "%.0f", timed.opsPerSecond))/s")
    }
    return (figures, fingerprints)
}
