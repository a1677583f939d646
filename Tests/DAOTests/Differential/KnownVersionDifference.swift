import CSQLite
@testable import DAO

/// The one class of results allowed to differ from the SQLite the tests link (issue 25, item 4):
/// this project sums as SQLite 3.40 does (plain double addition in input order; an integer
/// overflow before any real makes sum() fail). SQLite 3.43 and later sum reals with
/// Kahan-Babuska-Neumaier, average integers exactly, and let a real after an integer overflow
/// return a real. Against such an oracle, a statement using sum/total/avg whose outcomes differ
/// only in real values, or in one side's "integer overflow", is that version difference. With
/// the 3.40 oracle of this machine it never applies.
enum KnownVersionDifference {
    /// SQLite's version number of the linked library (3043000 for 3.43.0).
    static let oracleVersion = Int(sqlite3_libversion_number())

    /// The first version that sums differently.
    static let kahanSummationVersion = 3_043_000

    static func summation(_ reference: Outcome, _ candidate: Outcome, sql: String,
                          oracleVersion: Int = KnownVersionDifference.oracleVersion) -> Bool {
        guard oracleVersion >= kahanSummationVersion else { return false }
        let lowered = sql.lowercased()
        guard ["sum(", "total(", "avg("].contains(where: lowered.contains) else { return false }
        switch (reference, candidate) {
        case (.rows(let a), .rows(let b)):
            guard a.count == b.count else { return false }
            var differs = false
            for (x, y) in zip(a, b) {
                guard x.count == y.count else { return false }
                for (u, v) in zip(x, y) where u != v {
                    guard case .real = u, case .real = v else { return false }
                    differs = true
                }
            }
            return differs
        case (.rows, .failed(let message)):
            return message.contains("integer overflow")
        default:
            return false
        }
    }
}
