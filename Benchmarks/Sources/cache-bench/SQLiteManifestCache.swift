import BenchSupport
import Foundation

/// A disk cache in the style of YYCache's YYKVStorage (and PINCache's file-per-value side):
/// a SQLite manifest table `manifest(key TEXT PRIMARY KEY, filename, size, inline_data BLOB,
/// modification_time, last_access_time, extended_data)` with an index on last_access_time,
/// journal_mode=WAL, synchronous=NORMAL, prepared statements, one transaction per operation.
/// Values over 20 KB (20,480 bytes, YYCache's inline threshold) are written to files in a
/// `data/` folder, the row keeping only the file name; smaller ones are stored inline. A get
/// reads the row (and the file), then updates last_access_time, as YYKVStorage does.
final class SQLiteManifestCache {
    static let inlineThreshold = 20 * 1024

    typealias API = SQLiteLibrary

    static func loadAPI() throws -> (API, String) {
        let api = try SQLiteLibrary.shared.get()
        return (api, "libsqlite3, SQLite \(String(cString: api.libversion()!))")
    }

    private let api: API
    private let db: OpaquePointer
    private let dataFolder: URL
    private var insert: OpaquePointer?
    private var select: OpaquePointer?
    private var touch: OpaquePointer?

    init(api: API, directory: URL) throws {
        self.api = api
        dataFolder = directory.appendingPathComponent("data", isDirectory: true)
        try FileManager.default.createDirectory(at: dataFolder, withIntermediateDirectories: true)
        var handle: OpaquePointer?
        let path = directory.appendingPathComponent("manifest.sqlite").path
        guard api.open(path, &handle, 0x2 | 0x4 | 0x8000, nil) == 0, let handle else { throw BenchError.engine("sqlite3_open_v2 \(path)") }
        db = handle
        try exec("PRAGMA journal_mode=WAL")
        try exec("PRAGMA synchronous=NORMAL")
        try exec("CREATE TABLE IF NOT EXISTS manifest (key TEXT, filename TEXT, size INTEGER, inline_data BLOB, modification_time INTEGER, last_access_time INTEGER, extended_data BLOB, PRIMARY KEY(key))")
        try exec("CREATE INDEX IF NOT EXISTS last_access_time_idx ON manifest(last_access_time)")
        insert = try prepare("INSERT OR REPLACE INTO manifest (key, filename, size, inline_data, modification_time, last_access_time) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
        select = try prepare("SELECT key, filename, size, inline_data FROM manifest WHERE key = ?1")
        touch = try prepare("UPDATE manifest SET last_access_time = ?1 WHERE key = ?2")
    }

    deinit {
        for statement in [insert, select, touch] { _ = api.finalize(statement) }
        _ = api.close(db)
    }

    private func exec(_ sql: String) throws {
        guard api.exec(db, sql, nil, nil, nil) == 0 else { throw BenchError.engine("\(sql): \(String(cString: api.errmsg(db)!))") }
    }

    private func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        guard api.prepare(db, sql, -1, &statement, nil) == 0, let statement else {
            throw BenchError.engine("prepare \(sql): \(String(cString: api.errmsg(db)!))")
        }
        return statement
    }

    private var now: Int64 { Int64(Date().timeIntervalSince1970) }

    func set(_ value: Data, forKey key: String) throws {
        var filename: String?
        if value.count > Self.inlineThreshold {
            filename = key
            try value.write(to: dataFolder.appendingPathComponent(key))
        }
        let time = now
        let rc: Int32 = key.withCString { k in
            _ = api.bindText(insert, 1, k, -1, 0)
            let inner: Int32 = (filename ?? "").withCString { f in
                if filename != nil { _ = api.bindText(insert, 2, f, -1, 0) } else { _ = api.bindNull(insert, 2) }
                _ = api.bindInt64(insert, 3, Int64(value.count))
                _ = api.bindInt64(insert, 5, time)
                _ = api.bindInt64(insert, 6, time)
                return value.withUnsafeBytes { v in
                    if filename == nil { _ = api.bindBlob(insert, 4, v.baseAddress, Int32(v.count), 0) } else { _ = api.bindNull(insert, 4) }
                    let rc = api.step(insert)
                    _ = api.reset(insert)
                    return rc
                }
            }
            return inner
        }
        guard rc == 101 else { throw BenchError.engine("insert: \(rc)") }
    }

    func object(forKey key: String) throws -> Data? {
        var result: Data?
        var filename: String?
        let rc: Int32 = key.withCString { k in
            _ = api.bindText(select, 1, k, -1, 0)
            let rc = api.step(select)
            if rc == 100 {
                if let text = api.columnText(select, 1) {
                    filename = String(cString: text)
                } else {
                    let count = Int(api.columnBytes(select, 3))
                    result = api.columnBlob(select, 3).map { Data(bytes: $0, count: count) } ?? Data()
                }
            }
            _ = api.reset(select)
            return rc
        }
        guard rc == 100 || rc == 101 else { throw BenchError.engine("select: \(rc)") }
        if let filename { result = try Data(contentsOf: dataFolder.appendingPathComponent(filename)) }
        guard result != nil else { return nil }
        let time = now
        let touched: Int32 = key.withCString { k in
            _ = api.bindInt64(touch, 1, time)
            _ = api.bindText(touch, 2, k, -1, 0)
            let rc = api.step(touch)
            _ = api.reset(touch)
            return rc
        }
        guard touched == 101 else { throw BenchError.engine("update access time: \(touched)") }
        return result
    }
}
