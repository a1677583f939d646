import Foundation

/// Checks of the names applications give files: relative paths that stay inside the storage.
enum FileName {
    /// The suffix of the temporary files a writer replaces its target with at close.
    static let temporarySuffix = ".ustmp"

    /// The path components of `name`, after checking it.
    /// - Throws: `FileStorageError.invalidName` for an empty or absolute name, an empty, `.` or
    ///   `..` component, a NUL byte, or a last component ending in `.ustmp`.
    static func components(of name: String) throws -> [String] {
        func invalid(_ reason: String) -> FileStorageError { .invalidName(name, reason: reason) }
        guard !name.isEmpty else { throw invalid("empty") }
        guard !name.hasPrefix("/") else { throw invalid("absolute paths are not allowed") }
        guard !name.utf8.contains(0) else { throw invalid("contains a NUL byte") }
        let parts = name.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        for part in parts {
            if part.isEmpty { throw invalid("empty path component") }
            if part == ".." { throw invalid("\"..\" would leave the storage folder") }
            if part == "." { throw invalid("\".\" components are not allowed") }
        }
        if let last = parts.last, last.hasSuffix(temporarySuffix) { throw invalid("names ending in \(temporarySuffix) are reserved for temporary files") }
        return parts
    }

    /// `folder` joined with the checked `name`.
    static func url(of name: String, in folder: URL) throws -> URL {
        try components(of: name).reduce(folder) { $0.appendingPathComponent($1, isDirectory: false) }
    }
}
