import Foundation
import LogStore

extension FileStorage {
    /// Whether a file (not a folder) `name` exists.
    /// - Throws: `FileStorageError.invalidName`; `StoreError.noCurrentUser`.
    public func exists(_ name: String) throws -> Bool {
        Self.isFile(try url(of: name).path)
    }

    /// The content size of `name` in bytes: the file's size, or for an encrypted file its
    /// plaintext size (authenticated: the header and last segment are checked, O(segment)).
    /// - Throws: as `reader(_:encryption:)`.
    public func size(of name: String, encryption: FileEncryption = .none) throws -> Int64 {
        guard encryption.isEncrypted else {
            let path = try url(of: name).path
            guard Self.isFile(path) else { throw FileStorageError.notFound(name) }
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            return (attributes[.size] as? NSNumber)?.int64Value ?? 0
        }
        return try reader(name, encryption: encryption).size
    }

    /// Creates `name` empty (an encrypted file: its header and one empty last segment) unless
    /// it exists, like `File.createNewFile()`. Returns whether it created the file.
    /// - Throws: as `writer(_:encryption:append:)`.
    @discardableResult
    public func create(_ name: String, encryption: FileEncryption = .none) throws -> Bool {
        if try exists(name) { return false }
        try writer(name, encryption: encryption).close()
        return true
    }

    /// The names of every file under the storage's folder (or under its subfolder `folder`),
    /// relative to the storage's folder with "/" between components, sorted. Temporary files
    /// of writers are not listed. O(files).
    /// - Throws: `FileStorageError.invalidName` for a bad `folder`; `StoreError.noCurrentUser`.
    public func list(under folder: String? = nil) throws -> [String] {
        let root = try self.folder()
        let start = try folder.map { try FileName.url(of: $0, in: root) } ?? root
        let prefix = folder.map { $0 + "/" } ?? ""
        guard let walker = FileManager.default.enumerator(at: start, includingPropertiesForKeys: [.isRegularFileKey]) else { return [] }
        let startComponents = start.standardizedFileURL.pathComponents.count
        var names: [String] = []
        for case let url as URL in walker {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true,
                  !url.lastPathComponent.hasSuffix(FileName.temporarySuffix) else { continue }
            let relative = url.standardizedFileURL.pathComponents.dropFirst(startComponents).joined(separator: "/")
            names.append(prefix + relative)
        }
        return names.sorted()
    }

    /// Deletes the file `name`, or the subfolder `name` with everything in it. Returns whether
    /// something was there.
    /// - Throws: `FileStorageError.invalidName`; `StoreError.noCurrentUser`; `StoreError.io`.
    @discardableResult
    public func delete(_ name: String) throws -> Bool {
        let target = try url(of: name)
        guard FileManager.default.fileExists(atPath: target.path) else { return false }
        do {
            try FileManager.default.removeItem(at: target)
        } catch {
            throw StoreError.io(operation: "remove \(target.path): \(error.localizedDescription)", errno: EIO)
        }
        if syncsOnClose { try Directory.sync(target.deletingLastPathComponent().path) }
        return true
    }

    /// Renames `name` to `newName` (subfolders of `newName` created as needed) with one
    /// atomic rename(2).
    /// - Throws: `FileStorageError.notFound`, `.alreadyExists` when `newName` exists,
    ///   `.invalidName`; `StoreError.noCurrentUser`; `StoreError.io`.
    public func rename(_ name: String, to newName: String) throws {
        let source = try url(of: name)
        let target = try url(of: newName)
        guard FileManager.default.fileExists(atPath: source.path) else { throw FileStorageError.notFound(name) }
        guard !FileManager.default.fileExists(atPath: target.path) else { throw FileStorageError.alreadyExists(newName) }
        try Directory.create(target.deletingLastPathComponent().path)
        try Directory.rename(source.path, target.path)
        if syncsOnClose {
            try Directory.sync(target.deletingLastPathComponent().path)
            try Directory.sync(source.deletingLastPathComponent().path)
        }
    }

    // MARK: Whole files

    /// Replaces (or creates) `name` with `bytes`, atomically.
    /// - Throws: as `writer(_:encryption:append:)` and `FileWriter.close()`.
    public func write(_ bytes: some DataProtocol, to name: String, encryption: FileEncryption = .none) throws {
        let writer = try writer(name, encryption: encryption)
        try writer.write(bytes)
        try writer.close()
    }

    /// Replaces (or creates) `name` with `text` in `encoding`, atomically.
    /// - Throws: `FileStorageError.unsupported` when `text` cannot be encoded; as `write(_:to:encryption:)`.
    public func write(_ text: String, to name: String, encoding: String.Encoding = .utf8, encryption: FileEncryption = .none) throws {
        guard let data = text.data(using: encoding) else { throw FileStorageError.unsupported("\"\(name)\": text not representable in \(encoding)") }
        try write(data, to: name, encryption: encryption)
    }

    /// The whole content of `name`.
    /// - Throws: as `reader(_:encryption:)` and `FileReader.read(upTo:)`.
    public func data(of name: String, encryption: FileEncryption = .none) throws -> Data {
        let reader = try reader(name, encryption: encryption)
        defer { reader.close() }
        return try reader.readToEnd()
    }

    /// The whole content of `name` as text in `encoding`.
    /// - Throws: `FileStorageError.unsupported` when the bytes are not valid text in
    ///   `encoding`; as `data(of:encryption:)`.
    public func string(of name: String, encoding: String.Encoding = .utf8, encryption: FileEncryption = .none) throws -> String {
        let data = try data(of: name, encryption: encryption)
        guard let text = String(data: data, encoding: encoding) else { throw FileStorageError.unsupported("\"\(name)\" is not valid text in \(encoding)") }
        return text
    }
}
