import Foundation
import UnifiedStorage

/// Opening and closing a store around one subcommand's work.
enum StoreSession {
    /// Opens the store in `store.directory` with the key its options name (if any) and
    /// `compression` (nil: values are stored as given), runs `body` with it and closes it.
    ///
    /// A read-only open takes the store's lock shared (so it fails while a writer holds it),
    /// writes nothing and never repairs anything; a writable open creates the directory if
    /// needed. A key that does not match the store's check value for its id throws
    /// `StoreError.wrongKey`. The store is closed even when `body` throws; `close` errors are
    /// then dropped in favour of the first error. Returns only after `close` has returned.
    static func with<Result>(_ store: StoreDirectoryArgument, readOnly: Bool,
                             compression: LogStore.Options.Compression? = nil,
                             _ body: (LogStore) throws -> Result) throws -> Result {
        var options = LogStore.Options()
        options.readOnly = readOnly
        options.encryption = try store.keys.encryption()
        options.compression = compression
        let logStore = try LogStore(directory: store.url, options: options)
        let result: Result
        do {
            result = try body(logStore)
        } catch {
            try? logStore.close()
            throw error
        }
        try logStore.close()
        return result
    }
}
