import BenchSupport
import DAO
import Foundation

/// The SQLite calls sql-bench needs, loaded with the harness's shared loader (BenchSupport).
struct SQLiteLibrary {
    let open: @convention(c) (UnsafePointer<CChar>?, UnsafeMutablePointer<OpaquePointer?>?, Int32, UnsafePointer<CChar>?) -> Int32
    let exec: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, OpaquePointer?, UnsafeMutableRawPointer?,
                              UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32
    let prepare: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32, UnsafeMutablePointer<OpaquePointer?>?,
                                 UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32
    let bindInt64: @convention(c) (OpaquePointer?, Int32, Int64) -> Int32
    let bindDouble: @convention(c) (OpaquePointer?, Int32, Double) -> Int32
    /// The last argument is the destructor; -1 (SQLITE_TRANSIENT) makes SQLite copy the text.
    let bindText: @convention(c) (OpaquePointer?, Int32, UnsafePointer<CChar>?, Int32, Int) -> Int32
    let bindNull: @convention(c) (OpaquePointer?, Int32) -> Int32
    let step: @convention(c) (OpaquePointer?) -> Int32
    let columnCount: @convention(c) (OpaquePointer?) -> Int32
    let columnType: @convention(c) (OpaquePointer?, Int32) -> Int32
    let columnInt64: @convention(c) (OpaquePointer?, Int32) -> Int64
    let columnDouble: @convention(c) (OpaquePointer?, Int32) -> Double
    let columnBytes: @convention(c) (OpaquePointer?, Int32) -> Int32
    let columnText: @convention(c) (OpaquePointer?, Int32) -> UnsafePointer<UInt8>?
    let reset: @convention(c) (OpaquePointer?) -> Int32
    let finalize: @convention(c) (OpaquePointer?) -> Int32
    let close: @convention(c) (OpaquePointer?) -> Int32
    let errmsg: @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?
    let libversion: @convention(c) () -> UnsafePointer<CChar>?

    init(_ lib: DynamicLibrary) throws {
        open = try lib.function("sqlite3_open_v2")
        exec = try lib.function("sqlite3_exec")
        prepare = try lib.function("sqlite3_prepare_v2")
        bindInt64 = try lib.function("sqlite3_bind_int64")
        bindDouble = try lib.function("sqlite3_bind_double")
        bindText = try lib.function("sqlite3_bind_text")
        bindNull = try lib.function("sqlite3_bind_null")
        step = try lib.function("sqlite3_step")
        columnCount = try lib.function("sqlite3_column_count")
        columnType = try lib.function("sqlite3_column_type")
        columnInt64 = try lib.function("sqlite3_column_int64")
        columnDouble = try lib.function("sqlite3_column_double")
        columnBytes = try lib.function("sqlite3_column_bytes")
        columnText = try lib.function("sqlite3_column_text")
        reset = try lib.function("sqlite3_reset")
        finalize = try lib.function("sqlite3_finalize")
        close = try lib.function("sqlite3_close")
        errmsg = try lib.function("sqlite3_errmsg")
        libversion = try lib.function("sqlite3_libversion")
    }

    static let shared = LazyLibrary<SQLiteLibrary> {
        DynamicLibrary.open(sonames: ["libsqlite3.so.0", "libsqlite3.so"]).flatMap { lib in
            Result { try SQLiteLibrary(lib) }.mapError { $0 as? BenchError ?? .unavailable("\($0)") }
        }
    }
}
