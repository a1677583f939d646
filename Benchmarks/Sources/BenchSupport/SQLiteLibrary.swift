import Foundation

/// The SQLite C calls the benchmark executables use, loaded at run time with `DynamicLibrary`
/// (no build-time dependency on SQLite). Destructor arguments are SQLITE_STATIC (0: the bytes
/// outlive the statement's step) or SQLITE_TRANSIENT (-1: SQLite copies them).
public struct SQLiteLibrary: Sendable {
    public let open: @convention(c) (UnsafePointer<CChar>?, UnsafeMutablePointer<OpaquePointer?>?, Int32, UnsafePointer<CChar>?) -> Int32
    public let exec: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, OpaquePointer?, UnsafeMutableRawPointer?,
                              UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32
    public let prepare: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32, UnsafeMutablePointer<OpaquePointer?>?,
                                 UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32
    public let bindInt64: @convention(c) (OpaquePointer?, Int32, Int64) -> Int32
    public let bindDouble: @convention(c) (OpaquePointer?, Int32, Double) -> Int32
    /// The last argument is the destructor; -1 (SQLITE_TRANSIENT) makes SQLite copy the text.
    public let bindText: @convention(c) (OpaquePointer?, Int32, UnsafePointer<CChar>?, Int32, Int) -> Int32
    public let bindBlob: @convention(c) (OpaquePointer?, Int32, UnsafeRawPointer?, Int32, Int) -> Int32
    public let bindNull: @convention(c) (OpaquePointer?, Int32) -> Int32
    public let step: @convention(c) (OpaquePointer?) -> Int32
    public let columnCount: @convention(c) (OpaquePointer?) -> Int32
    public let columnType: @convention(c) (OpaquePointer?, Int32) -> Int32
    public let columnInt64: @convention(c) (OpaquePointer?, Int32) -> Int64
    public let columnDouble: @convention(c) (OpaquePointer?, Int32) -> Double
    public let columnBytes: @convention(c) (OpaquePointer?, Int32) -> Int32
    public let columnText: @convention(c) (OpaquePointer?, Int32) -> UnsafePointer<UInt8>?
    public let columnBlob: @convention(c) (OpaquePointer?, Int32) -> UnsafeRawPointer?
    public let reset: @convention(c) (OpaquePointer?) -> Int32
    public let finalize: @convention(c) (OpaquePointer?) -> Int32
    public let close: @convention(c) (OpaquePointer?) -> Int32
    public let errmsg: @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?
    public let libversion: @convention(c) () -> UnsafePointer<CChar>?
    public let busyTimeout: @convention(c) (OpaquePointer?, Int32) -> Int32
    /// The name or path the library was opened by.
    public let path: String

    /// Looks every call up in `lib`.
    public init(_ lib: DynamicLibrary) throws {
        open = try lib.function("sqlite3_open_v2")
        exec = try lib.function("sqlite3_exec")
        prepare = try lib.function("sqlite3_prepare_v2")
        bindInt64 = try lib.function("sqlite3_bind_int64")
        bindDouble = try lib.function("sqlite3_bind_double")
        bindText = try lib.function("sqlite3_bind_text")
        bindBlob = try lib.function("sqlite3_bind_blob")
        bindNull = try lib.function("sqlite3_bind_null")
        step = try lib.function("sqlite3_step")
        columnCount = try lib.function("sqlite3_column_count")
        columnType = try lib.function("sqlite3_column_type")
        columnInt64 = try lib.function("sqlite3_column_int64")
        columnDouble = try lib.function("sqlite3_column_double")
        columnBytes = try lib.function("sqlite3_column_bytes")
        columnText = try lib.function("sqlite3_column_text")
        columnBlob = try lib.function("sqlite3_column_blob")
        reset = try lib.function("sqlite3_reset")
        finalize = try lib.function("sqlite3_finalize")
        close = try lib.function("sqlite3_close")
        errmsg = try lib.function("sqlite3_errmsg")
        libversion = try lib.function("sqlite3_libversion")
        busyTimeout = try lib.function("sqlite3_busy_timeout")
        path = lib.path
    }

    /// The system's libsqlite3, loaded on first use.
    public static let shared = LazyLibrary<SQLiteLibrary> {
        DynamicLibrary.open(sonames: ["libsqlite3.so.0", "libsqlite3.so"]).flatMap { lib in
            Result { try SQLiteLibrary(lib) }.mapError { $0 as? BenchError ?? .unavailable("\($0)") }
        }
    }
}
