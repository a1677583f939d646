// Copied from logstore-bench/Engines/DynamicLibrary.swift (the harness's run-time loader), so
// this executable loads SQLite the same way without a build-time dependency.
#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A C library opened at run time with `dlopen`, so a peer engine is never a build-time
/// dependency: on a machine without it the peer is skipped with a note instead of the harness
/// failing to build or link.
final class DynamicLibrary: @unchecked Sendable {
    let handle: UnsafeMutableRawPointer
    /// The name or path it was opened by.
    let path: String

    private init(handle: UnsafeMutableRawPointer, path: String) {
        self.handle = handle
        self.path = path
    }

    /// Opens the first of `sonames` the dynamic linker finds, else the first file matching
    /// `globPrefix*` in the usual library directories (e.g. `librocksdb.so.` for any version).
    /// Returns the library, or the reason none could be opened.
    /// `fallbacks` are tried last (an unversioned development symlink, say).
    static func open(sonames: [String], globPrefix: String? = nil, fallbacks: [String] = []) -> Result<DynamicLibrary, BenchError> {
        var tried = sonames
        for name in sonames {
            if let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) {
                return .success(DynamicLibrary(handle: handle, path: name))
            }
        }
        if let globPrefix {
            for directory in ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib"] {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
                for name in names.sorted().reversed() where name.hasPrefix(globPrefix) {
                    let path = directory + "/" + name
                    tried.append(path)
                    if let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) {
                        return .success(DynamicLibrary(handle: handle, path: path))
                    }
                }
            }
        }
        for name in fallbacks {
            tried.append(name)
            if let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) {
                return .success(DynamicLibrary(handle: handle, path: name))
            }
        }
        let reason = dlerror().map { String(cString: $0) } ?? "not found"
        return .failure(.unavailable("none of \(tried.joined(separator: ", ")) could be loaded (\(reason))"))
    }

    /// The symbol `name` as a C function of type `T` (a `@convention(c)` function type).
    func function<T>(_ name: String, as type: T.Type = T.self) throws -> T {
        guard let symbol = dlsym(handle, name) else {
            throw BenchError.unavailable("\(path) has no symbol \(name)")
        }
        return unsafeBitCast(symbol, to: T.self)
    }

    /// Like `function(_:)`, nil when the library lacks the symbol.
    func optionalFunction<T>(_ name: String, as type: T.Type = T.self) -> T? {
        dlsym(handle, name).map { unsafeBitCast($0, to: T.self) }
    }
}

/// The errors of the cache harness.
enum BenchError: Error, CustomStringConvertible {
    case unavailable(String)
    case engine(String)
    case verification(String)

    var description: String {
        switch self {
        case .unavailable(let message): return "unavailable: \(message)"
        case .engine(let message): return "engine error: \(message)"
        case .verification(let message): return "verification failed: \(message)"
        }
    }
}
