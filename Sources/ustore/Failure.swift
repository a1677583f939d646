import ArgumentParser
import Foundation
import UnifiedStorage

/// The exit statuses `ustore` uses besides 0 and ArgumentParser's usage error.
enum ExitStatus {
    /// `get` found no value; `verify` found a problem.
    static let notFoundOrProblem = ExitCode(1)
    /// The store could not be opened or an operation failed.
    static let failure = ExitCode(2)
}

/// Runs a subcommand's work, turning any error other than an `ExitCode` into a one-line
/// message on stderr and exit status 2.
func reportingFailures(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let exit as ExitCode {
        throw exit
    } catch {
        Output.error(describe(error))
        throw ExitStatus.failure
    }
}

/// A one-line description of `error`.
func describe(_ error: Error) -> String {
    let text: String
    switch error {
    case let storeError as StoreError: text = storeError.description
    case let outputError as OutputError: text = outputError.description
    case is CocoaError, is POSIXError: text = error.localizedDescription
    default: text = String(describing: error)
    }
    return text.split(whereSeparator: \.isNewline).joined(separator: " ")
}
