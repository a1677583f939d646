/// When a trigger runs relative to its row's change.
enum TriggerTiming: Sendable { case before, after }

/// The change that fires a trigger.
enum TriggerEvent: Sendable { case insert, update, delete }

/// `CREATE TRIGGER [IF NOT EXISTS] name BEFORE|AFTER INSERT|UPDATE [OF cols]|DELETE ON table
/// [FOR EACH ROW] [WHEN expr] BEGIN stmt; ... END` (Engine/Triggers.swift).
struct CreateTriggerStatement: Sendable {
    var name: String
    var ifNotExists: Bool
    var timing: TriggerTiming
    var event: TriggerEvent
    /// UPDATE OF's columns: the trigger fires only when the UPDATE sets one of them.
    var columns: [String]?
    var table: String
    var when: Expr?
    /// INSERT, UPDATE, DELETE and SELECT statements, run in order for each row.
    var body: [Statement]
    /// The statement as written: what the catalog keeps (FORMAT.md "DAO tables").
    var sql: String
    /// CREATE TEMP TRIGGER: fires like any trigger of its table while this SQLDatabase lives,
    /// never written to the catalog (Room's InvalidationTracker makes these).
    var temporary = false
}

/// What `RAISE(...)` throws when a trigger's body evaluates it.
struct TriggerRaise: Error {
    enum Action: String { case ignore = "IGNORE", abort = "ABORT", fail = "FAIL", rollback = "ROLLBACK" }
    /// The name RAISE is parsed to as a function call (not a name SQL can call: it has a space).
    static let functionName = "raise "
    var action: Action
    var message: String

    init(_ args: [SQLValue]) {
        if case .text(let name) = args.first, let action = Action(rawValue: name) { self.action = action } else { action = .abort }
        message = args.count > 1 ? (SQLValues.text(of: args[1]) ?? "") : ""
    }
}

/// SQLite's FAIL conflict resolution on its way out of the statement: RAISE(FAIL, message), or
/// a constraint an `INSERT OR FAIL` / `UPDATE OR FAIL` broke. Unlike ABORT, the changes the
/// statement made before it stay.
struct FailResolution: Error {
    var message: String
}
