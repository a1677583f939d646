import Foundation
import LogStore

/// Folders whose files the storage may delete: by age (the folder's `PurgeType`) and by size
/// (over `sizeLimitMB`, the oldest files go until the folder is at half the limit). Folders are
/// relative to `DataCenter.default`'s root and registered in its common store, so the sweep
/// that runs in the background when a DataCenter starts knows them from earlier runs.
///
/// Files age by modification time; a sweep deletes files, and directories left empty, never the
/// registered folder itself.
///
/// ```swift
/// let thumbnails = try PurgeablePath.path("Library/Caches/Thumbs", type: .oneWeek, sizeLimitMB: 50)
/// ```
public enum PurgeablePath {
    /// How old a file may get before a sweep deletes it.
    public enum PurgeType: Int, Sendable {
        /// Never by age (only by size, or by `resetAll`).
        case manual = 0
        /// Files older than 3 days go.
        case threeDays = 3
        /// Files older than 7 days go.
        case oneWeek = 7
        /// Files older than 14 days go.
        case twoWeeks = 14
        /// Files older than 30 days go.
        case oneMonth = 30

        /// The age limit; nil for `manual`.
        var maximumAge: TimeInterval? { self == .manual ? nil : TimeInterval(rawValue) * 86_400 }
    }

    /// Creates `<DataCenter.default root>/<relative>` if needed, registers it (replacing an
    /// earlier registration of the same folder) and returns it. `sizeLimitMB` is in MiB; 0 means
    /// no limit.
    /// - Throws: `StoreError.io` (EINVAL) for an empty or absolute path, one with "..", or a
    ///   negative limit; `StoreError.io` when the folder cannot be created; store errors.
    public static func path(_ relative: String, type: PurgeType = .manual, sizeLimitMB: Int = 0) throws -> URL {
        try DataCenter.default.registerPurgeablePath(relative, type: type, sizeLimitMB: sizeLimitMB)
    }

    /// Sweeps every registered folder of `DataCenter.default` now.
    public static func sweep() throws {
        try DataCenter.default.sweepPurgeablePaths()
    }

    /// Empties every registered folder of `DataCenter.default` (the folders stay).
    public static func resetAll() throws {
        try DataCenter.default.emptyPurgeablePaths()
    }
}

/// A registered purgeable folder: its record in the common store's "purgeable-paths" space is
/// keyed by the relative path's UTF-8; the value is the type's raw value (1 byte) and the size
/// limit in MiB (8 bytes, little-endian), stored plain.
struct PurgeableRegistration: Sendable, Equatable {
    var relative: String
    var type: PurgeablePath.PurgeType
    var sizeLimitMB: Int

    static let spaceName = "purgeable-paths"

    var encoded: [UInt8] {
        var bytes: [UInt8] = [UInt8(type.rawValue)]
        withUnsafeBytes(of: UInt64(sizeLimitMB).littleEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }

    init(relative: String, type: PurgeablePath.PurgeType, sizeLimitMB: Int) {
        self.relative = relative
        self.type = type
        self.sizeLimitMB = sizeLimitMB
    }

    init?(key: [UInt8], value: [UInt8]) {
        guard value.count == 9, let relative = String(validating: key, as: UTF8.self),
              let type = PurgeablePath.PurgeType(rawValue: Int(value[0])) else { return nil }
        var limit: UInt64 = 0
        for (shift, byte) in value.dropFirst().enumerated() { limit |= UInt64(byte) << (8 * UInt64(shift)) }
        guard let sizeLimitMB = Int(exactly: limit) else { return nil }
        self.init(relative: relative, type: type, sizeLimitMB: sizeLimitMB)
    }
}

extension DataCenter {
    func registerPurgeablePath(_ relative: String, type: PurgeablePath.PurgeType, sizeLimitMB: Int) throws -> URL {
        let components = relative.split(separator: "/", omittingEmptySubsequences: true)
        guard !relative.hasPrefix("/"), !components.isEmpty, !components.contains(".."), sizeLimitMB >= 0 else {
            throw StoreError.io(operation: "PurgeablePath.path(\"\(relative)\"): not a folder inside the root", errno: EINVAL)
        }
        let normalized = components.joined(separator: "/")
        let url = root.appendingPathComponent(normalized, isDirectory: true)
        do { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) } catch {
            throw StoreError.io(operation: "create \(url.path)", errno: EIO)
        }
        let store = try stores.common().store()
        let space = try store.space(named: PurgeableRegistration.spaceName)
        let registration = PurgeableRegistration(relative: normalized, type: type, sizeLimitMB: sizeLimitMB)
        try store.put(registration.encoded, forKey: Array(normalized.utf8), space: space, crypt: .plain)
        return url
    }

    /// The registered folders, from the common store.
    func purgeableRegistrations() throws -> [PurgeableRegistration] {
        let store = try stores.common().store()
        guard let space = try store.namedSpaces()[PurgeableRegistration.spaceName] else { return [] }
        return try store.entries(space: space, crypt: nil).compactMap { PurgeableRegistration(key: $0.key, value: $0.value) }
    }

    private func sweeper(for registration: PurgeableRegistration, now: Date) -> PurgeableSweeper {
        PurgeableSweeper(folder: root.appendingPathComponent(registration.relative, isDirectory: true),
                         cutoff: registration.type.maximumAge.map { now.addingTimeInterval(-$0) },
                         sizeLimit: registration.sizeLimitMB * 1_048_576)
    }

    /// Sweeps every registered folder; returns the bytes freed.
    @discardableResult
    func sweepPurgeablePaths(now: Date = Date()) throws -> Int {
        try purgeableRegistrations().reduce(0) { $0 + sweeper(for: $1, now: now).run() }
    }

    /// Empties every registered folder; returns the bytes freed.
    @discardableResult
    func emptyPurgeablePaths() throws -> Int {
        try purgeableRegistrations().reduce(0) { $0 + sweeper(for: $1, now: Date()).empty() }
    }

    /// The sweep run in the background when a DataCenter starts. The registrations are read
    /// now (the common store is open); only the file work runs in the background, so it never
    /// touches a store of a DataCenter that may be closed meanwhile.
    func startBackgroundSweep() {
        let registrations: [PurgeableRegistration]
        do { registrations = try purgeableRegistrations() } catch {
            PreferencesLog.info("purgeable sweep: \(error)")
            return
        }
        guard !registrations.isEmpty else { return }
        let sweepers = registrations.map { sweeper(for: $0, now: Date()) }
        DispatchQueue.global(qos: .utility).async {
            let freed = sweepers.reduce(0) { $0 + $1.run() }
            if freed > 0 { PreferencesLog.info("purgeable sweep freed \(freed) bytes") }
        }
    }
}
