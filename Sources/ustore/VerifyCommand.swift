import ArgumentParser
import UnifiedStorage

/// `ustore verify DIR`: checks every record without repairing anything.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check every record of the store without changing it.",
        discussion: #"""
            Prints {"ok":BOOL,"problems":[...],"recordsChecked":N}. Problems are what verify \
            found plus what the read-only open's recovery found skipped, corrupt, torn, \
            garbage, unreadable or dropped; each names the file and byte offset. Exits 1 when \
            there is any problem.
            """#
    )

    @OptionGroup var store: StoreDirectoryArgument

    func run() throws {
        var outcome = VerifyOutcome(problems: [], recordsChecked: 0)
        try reportingFailures {
            do {
                outcome = try StoreSession.with(store, readOnly: true) { logStore in
                    let report = try ProgressLine("verify").whileRunning { try logStore.verify() }
                    return VerifyOutcome(problems: report.problems, recordsChecked: report.recordsChecked,
                                         recoveryReport: logStore.recoveryReport)
                }
            } catch let error as StoreError {
                // A store too damaged to open is a verify finding, not a tool failure; a lock
                // held by another process or an I/O error is.
                guard case .corrupt = error else { throw error }
                outcome = VerifyOutcome(problems: [error.description], recordsChecked: 0)
            }
            try Output.line(outcome.json.text)
        }
        if !outcome.problems.isEmpty { throw ExitStatus.notFoundOrProblem }
    }
}

/// What `verify` prints.
struct VerifyOutcome {
    /// Problems in the order found, without duplicates.
    private(set) var problems: [String]
    var recordsChecked: Int

    /// Words that mark a recovery-report line as lost or damaged data rather than routine
    /// work (such as an unused index snapshot or a finished compaction).
    static let damageWords = ["skipped", "corrupt", "torn", "garbage", "unreadable", "dropped"]

    /// Combines verify's problems with the damage lines of the open's recovery report.
    init(problems: [String], recordsChecked: Int, recoveryReport: [String] = []) {
        self.problems = []
        self.recordsChecked = recordsChecked
        let damage = recoveryReport.filter { line in
            let lowered = line.lowercased()
            return Self.damageWords.contains { lowered.contains($0) }
        }
        // Recovery and verify describe a garbage tail in the same words: report it once.
        for problem in damage + problems where !self.problems.contains(problem) {
            self.problems.append(problem)
        }
    }

    var json: JSON {
        .object([
            "ok": .bool(problems.isEmpty),
            "recordsChecked": .int(recordsChecked),
            "problems": .array(problems.map(JSON.string)),
        ])
    }
}
