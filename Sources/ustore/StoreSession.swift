import Foundation
import UnifiedStorage

/// Opening and closing a store around one subcommand's work.
enum StoreSession {
    /// Opens the store in `directory`, runs `body` with it and closes it.
    ///
    /// A read-only open takes the store's lock shared (so it fails while a writer holds it),
    /// writes nothing and never repairs anything; a writable open creates the directory if
    /// needed. The store is closed even when `body` throws; `close` errors are then dropped in
    /// favour of the first error. Returns only after `close` has returned.
    static func with<Result>(_ directory: URL, readOnly: Bool,
                             _ body: (LogStore) throws -> Result) throws -> Result {
        var options = LogStore.Options()
        options.readOnly = readOnly
        let store = try LogStore(directory: directory, options: options)
        let result: Result
        do {
            result = try body(store)
        } catch {
            try? store.close()
            throw error
        }
        try store.close()
        return result
    }
}
