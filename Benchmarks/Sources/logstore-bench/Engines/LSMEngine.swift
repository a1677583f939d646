import Foundation

/// The C API LevelDB and RocksDB share (RocksDB's `rocksdb_*` functions copy LevelDB's
/// `leveldb_*` ones): what `LevelDBEngine` and `RocksDBEngine` call, loaded at run time.
struct LSMAPI {
    typealias ErrorPointer = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
    let optionsCreate: @convention(c) () -> OpaquePointer?
    let optionsDestroy: @convention(c) (OpaquePointer?) -> Void
    let optionsSetCreateIfMissing: @convention(c) (OpaquePointer?, UInt8) -> Void
    let open: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, ErrorPointer) -> OpaquePointer?
    let close: @convention(c) (OpaquePointer?) -> Void
    let put: @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeRawPointer?, Int, UnsafeRawPointer?, Int, ErrorPointer) -> Void
    let delete: @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeRawPointer?, Int, ErrorPointer) -> Void
    let write: @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?, ErrorPointer) -> Void
    let get: @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeRawPointer?, Int, UnsafeMutablePointer<Int>?, ErrorPointer) -> UnsafeMutablePointer<CChar>?
    let compactRange: @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int, UnsafeRawPointer?, Int) -> Void
    let free: @convention(c) (UnsafeMutableRawPointer?) -> Void
    let writeOptionsCreate: @convention(c) () -> OpaquePointer?
    let writeOptionsDestroy: @convention(c) (OpaquePointer?) -> Void
    let writeOptionsSetSync: @convention(c) (OpaquePointer?, UInt8) -> Void
    let readOptionsCreate: @convention(c) () -> OpaquePointer?
    let readOptionsDestroy: @convention(c) (OpaquePointer?) -> Void
    let batchCreate: @convention(c) () -> OpaquePointer?
    let batchDestroy: @convention(c) (OpaquePointer?) -> Void
    let batchPut: @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int, UnsafeRawPointer?, Int) -> Void
    let propertyValue: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> UnsafeMutablePointer<CChar>?
    let path: String
    let library: DynamicLibrary

    /// The functions named `<prefix>open`, `<prefix>put` ... of `lib`.
    init(_ lib: DynamicLibrary, prefix: String) throws {
        func f<T>(_ name: String) throws -> T { try lib.function(prefix + name) }
        optionsCreate = try f("options_create")
        optionsDestroy = try f("options_destroy")
        optionsSetCreateIfMissing = try f("options_set_create_if_missing")
        open = try f("open")
        close = try f("close")
        put = try f("put")
        delete = try f("delete")
        write = try f("write")
        get = try f("get")
        compactRange = try f("compact_range")
        free = try f("free")
        writeOptionsCreate = try f("writeoptions_create")
        writeOptionsDestroy = try f("writeoptions_destroy")
        writeOptionsSetSync = try f("writeoptions_set_sync")
        readOptionsCreate = try f("readoptions_create")
        readOptionsDestroy = try f("readoptions_destroy")
        batchCreate = try f("writebatch_create")
        batchDestroy = try f("writebatch_destroy")
        batchPut = try f("writebatch_put")
        propertyValue = try f("property_value")
        path = lib.path
        library = lib
    }

    static func load(sonames: [String], globPrefix: String?, fallbacks: [String] = [], prefix: String) -> Result<LSMAPI, BenchError> {
        DynamicLibrary.open(sonames: sonames, globPrefix: globPrefix, fallbacks: fallbacks).flatMap { lib in
            Result { try LSMAPI(lib, prefix: prefix) }.mapError { $0 as? BenchError ?? .unavailable("\($0)") }
        }
    }

    /// Throws the message an `errptr` received (and frees it).
    func check(_ error: UnsafeMutablePointer<CChar>?, _ operation: String) throws {
        guard let error else { return }
        let message = String(cString: error)
        free(error)
        throw BenchError.engine("\(operation): \(message)")
    }
}

/// What differs between LevelDB and RocksDB for the harness.
protocol LSMFlavor {
    static var name: String { get }
    static var library: LazyLibrary<LSMAPI> { get }
}

/// A LevelDB-style engine through its C API: default options except create_if_missing, one
/// `put`/`get`/`delete` call per operation with `sync` set by the durability class, the value
/// `get` returns (malloc'ed by the library) copied into a `[UInt8]` and freed.
final class LSMEngine<Flavor: LSMFlavor>: KVEngine {
    /// Shared by the handles of all threads (the library's handle is thread-safe).
    private final class Handles {
        let api: LSMAPI
        let db: OpaquePointer
        let options: OpaquePointer?
        let writeOptions: OpaquePointer?
        let readOptions: OpaquePointer?
        init(api: LSMAPI, db: OpaquePointer, options: OpaquePointer?, writeOptions: OpaquePointer?, readOptions: OpaquePointer?) {
            self.api = api
            self.db = db
            self.options = options
            self.writeOptions = writeOptions
            self.readOptions = readOptions
        }
    }

    private let handles: Handles
    private let api: LSMAPI
    private let owner: Bool
    private var closed = false

    init(directory: URL, config: EngineConfig) throws {
        api = try Flavor.library.get()
        let options = api.optionsCreate()
        api.optionsSetCreateIfMissing(options, 1)
        var error: UnsafeMutablePointer<CChar>?
        let db = api.open(options, directory.path, &error)
        if error != nil || db == nil {
            api.optionsDestroy(options)
            try api.check(error, "\(Flavor.name) open \(directory.path)")
            throw BenchError.engine("\(Flavor.name) open \(directory.path) returned nothing")
        }
        let writeOptions = api.writeOptionsCreate()
        api.writeOptionsSetSync(writeOptions, config.durability == .fsync ? 1 : 0)
        handles = Handles(api: api, db: db!, options: options, writeOptions: writeOptions, readOptions: api.readOptionsCreate())
        owner = true
    }

    init(sharing other: LSMEngine<Flavor>) throws {
        handles = other.handles
        api = other.api
        owner = false
    }

    func put(_ key: [UInt8], _ value: [UInt8]) throws {
        var error: UnsafeMutablePointer<CChar>?
        key.withUnsafeBytes { k in
            value.withUnsafeBytes { v in
                api.put(handles.db, handles.writeOptions, k.baseAddress, k.count, v.baseAddress, v.count, &error)
            }
        }
        if error != nil { try api.check(error, "put") }
    }

    func get(_ key: [UInt8]) throws -> [UInt8]? {
        var error: UnsafeMutablePointer<CChar>?
        var length = 0
        let found = key.withUnsafeBytes { k in
            api.get(handles.db, handles.readOptions, k.baseAddress, k.count, &length, &error)
        }
        if error != nil { try api.check(error, "get") }
        guard let found else { return nil }
        let value = [UInt8](UnsafeRawBufferPointer(start: found, count: length))
        api.free(found)
        return value
    }

    func delete(_ key: [UInt8]) throws {
        var error: UnsafeMutablePointer<CChar>?
        key.withUnsafeBytes { k in
            api.delete(handles.db, handles.writeOptions, k.baseAddress, k.count, &error)
        }
        if error != nil { try api.check(error, "delete") }
    }

    func putBatch(_ keys: [[UInt8]], _ values: [[UInt8]]) throws {
        let batch = api.batchCreate()
        defer { api.batchDestroy(batch) }
        for i in keys.indices {
            keys[i].withUnsafeBytes { k in
                values[i].withUnsafeBytes { v in api.batchPut(batch, k.baseAddress, k.count, v.baseAddress, v.count) }
            }
        }
        var error: UnsafeMutablePointer<CChar>?
        api.write(handles.db, handles.writeOptions, batch, &error)
        if error != nil { try api.check(error, "write (batch)") }
    }

    func compact() throws {
        api.compactRange(handles.db, nil, 0, nil, 0)
    }

    /// The library's own description of its levels (`<prefix>.stats`), first lines.
    var statisticsSummary: String? {
        let property = Flavor.name == "RocksDB" ? "rocksdb.num-files-at-level0" : "leveldb.num-files-at-level0"
        guard let text = api.propertyValue(handles.db, property) else { return nil }
        defer { api.free(text) }
        return "files at level 0: \(String(cString: text))"
    }

    func close() throws {
        guard !closed else { return }
        closed = true
        guard owner else { return }
        api.close(handles.db)
        api.writeOptionsDestroy(handles.writeOptions)
        api.readOptionsDestroy(handles.readOptions)
        api.optionsDestroy(handles.options)
    }

    deinit { try? close() }
}
