#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Shared by the harness executables (logstore-bench, sql-bench).
///
/// A C library opened at run time with `dlopen`, so a peer engine is never a build-time
/// dependency: on a machine without it the peer is skipped with a note instead of the harness
/// failing to build or link.
public final class DynamicLibrary: @unchecked Sendable {
    public let handle: UnsafeMutableRawPointer
    /// The name or path it was opened by.
    public let path: String

    private init(handle: UnsafeMutableRawPointer, path: String) {
        self.handle = handle
        self.path = path
    }

    /// Opens the first of `sonames` the dynamic linker finds, else the first file matching
    /// `globPrefix*` in the usual library directories (e.g. `librocksdb.so.` for any version).
    /// Returns the library, or the reason none could be opened.
    /// `fallbacks` are tried last (an unversioned development symlink, say).
    public static func open(sonames: [String], globPrefix: String? = nil, fallbacks: [String] = []) -> Result<DynamicLibrary, BenchError> {
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
    public func function<T>(_ name: String, as type: T.Type = T.self) throws -> T {
        guard let symbol = dlsym(handle, name) else {
            throw BenchError.unavailable("\(path) has no symbol \(name)")
        }
        return unsafeBitCast(symbol, to: T.self)
    }

    /// Like `function(_:)`, nil when the library lacks the symbol.
    public func optionalFunction<T>(_ name: String, as type: T.Type = T.self) -> T? {
        dlsym(handle, name).map { unsafeBitCast($0, to: T.self) }
    }
}

/// Loads a library once per process and keeps the result: engines share their symbol tables
/// across instances (reopens, per-thread handles).
public final class LazyLibrary<API>: @unchecked Sendable {
    private let lock = NSLock()
    private var loaded: Result<API, BenchError>?
    private let load: () -> Result<API, BenchError>

    public init(_ load: @escaping () -> Result<API, BenchError>) { self.load = load }

    public var result: Result<API, BenchError> {
        lock.lock()
        defer { lock.unlock() }
        if let loaded { return loaded }
        let value = load()
        loaded = value
        return value
    }

    public func get() throws -> API { try result.get() }
}
