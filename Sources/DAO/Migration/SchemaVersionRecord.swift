import LogStore

/// The schema versions of a store's tables (FORMAT.md "DAO schema versions"): the one catalog
/// record, in key space `dao.catalog` under the key `sqlite_versions` (a name reserved for
/// internal use, so no table can take it), shared by the versioned open and the migrator:
/// format byte 0x01 or 0x02; i64 big-endian user version (0: never set); u32 big-endian count
/// n; n times (u32 big-endian length, UTF-8 name): the applied migrations in the order they
/// ran; format 0x02 only: u32 big-endian count m; m times (u32 length, UTF-8 table name; u32
/// length, UTF-8 version): the XML configs' table versions, by name in byte order. Written as
/// format 0x01 while no XML config version is kept, so such records stay as older builds wrote
/// them.
struct SchemaVersionRecord: Equatable {
    static let formatVersion: UInt8 = 1
    /// The format with the XML configs' table versions.
    static let configFormatVersion: UInt8 = 2
    static let key = Array("sqlite_versions".utf8)

    /// The version the last versioned open committed; 0 when none did.
    var version: Int64 = 0
    /// Names of the migrations applied, in the order they ran.
    var appliedMigrations: [String] = []
    /// The config version ("1.1") each XML config table's schema is at, by table name as the
    /// config's `${T}` spells it (DAOProxy's setup and `<upgrade>` blocks).
    var configVersions: [String: String] = [:]

    func encoded() -> [UInt8] {
        var out: [UInt8] = [configVersions.isEmpty ? Self.formatVersion : Self.configFormatVersion]
        CatalogCodec.appendBigEndian(UInt64(bitPattern: version), bytes: 8, to: &out)
        CatalogCodec.appendBigEndian(UInt64(appliedMigrations.count), bytes: 4, to: &out)
        for name in appliedMigrations {
            CatalogCodec.appendBigEndian(UInt64(name.utf8.count), bytes: 4, to: &out)
            out.append(contentsOf: name.utf8)
        }
        if !configVersions.isEmpty {
            CatalogCodec.appendBigEndian(UInt64(configVersions.count), bytes: 4, to: &out)
            for (table, version) in configVersions.sorted(by: { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }) {
                for text in [table, version] {
                    CatalogCodec.appendBigEndian(UInt64(text.utf8.count), bytes: 4, to: &out)
                    out.append(contentsOf: text.utf8)
                }
            }
        }
        return out
    }

    /// Decodes a stored record.
    /// - Throws: `StoreError.corrupt` naming the record and the byte where it fails.
    init(decoding bytes: [UInt8]) throws {
        func corrupt(_ why: String) -> StoreError { .corrupt("DAO schema versions record: \(why)") }
        guard let format = bytes.first, format == Self.formatVersion || format == Self.configFormatVersion else {
            throw corrupt("unknown format \(bytes.first.map(String.init) ?? "none")")
        }
        var position = 1
        func read(_ count: Int) throws -> UInt64 {
            guard position + count <= bytes.count else { throw corrupt("truncated at byte \(position)") }
            var value: UInt64 = 0
            for i in 0..<count { value = value << 8 | UInt64(bytes[position + i]) }
            position += count
            return value
        }
        version = Int64(bitPattern: try read(8))
        func readText() throws -> String {
            let length = Int(try read(4))
            guard position + length <= bytes.count else { throw corrupt("truncated at byte \(position)") }
            defer { position += length }
            return String(decoding: bytes[position..<position + length], as: UTF8.self)
        }
        let count = try read(4)
        for _ in 0..<count { appliedMigrations.append(try readText()) }
        if format == Self.configFormatVersion {
            let tables = try read(4)
            for _ in 0..<tables {
                let table = try readText()
                configVersions[table] = try readText()
            }
        }
        guard position == bytes.count else { throw corrupt("\(bytes.count - position) trailing bytes at byte \(position)") }
    }

    init() {}
}
