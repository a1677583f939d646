import Foundation
import LogStore
import DAO
import Preferences

/// APAsyncFileArrayService: many similar files (voice clips of a chat, say) kept as records of
/// a key space of their own in the storage's store ("filearray:<name>"), common or the current
/// user's (following user switches). Made by `CustomStorage.fileArrayService(...)`.
///
/// - Capacity is a count (`<= 0`: no limit); past it the oldest files by write time go, in the
///   same atomic write as the file that pushed them out, before its completion runs.
///   Overwriting a name renews its age; renaming keeps it.
/// - Crypted services encrypt every file (AES-256-GCM, the storage's default key); compressed
///   services (`fileArrayService(..., compressed: true, ...)`) zstd-compress every chunk first
///   (chunks that do not shrink are kept raw). Stores opened with zstd compression compress the
///   chunks of every service.
/// - Files are stored in 1 MiB chunks: any size up to the engine's limits, written and read
///   without a second whole copy in memory. A file is visible entirely or not at all, even
///   across a crash (see `FileArrayIndex`).
/// - The async calls run on a serial queue of the service, in call order; the completion forms
///   call back on `callbackQueue` (or on that serial queue when none was given). Removals and
///   the synchronous queries act at once.
public final class FileArrayService: @unchecked Sendable {
    /// The service's name.
    public let name: String
    /// The count limit (`<= 0`: none).
    public let capacity: Int
    /// Whether file contents are encrypted.
    public let crypted: Bool
    /// Whether file contents are zstd-compressed (level 3, chunk by chunk, before encryption).
    public let compressed: Bool

    let spaceName: String
    private let source: StoreSource
    private let queue: DispatchQueue
    private let callbackQueue: DispatchQueue?
    private let current = CacheLockedBox<FileArrayIndex?>(nil)
    private let onQueue = DispatchSpecificKey<Bool>()
    private var resignObserver: (any NSObjectProtocol)?

    init(name: String, spaceName: String, source: StoreSource, capacity: Int, crypted: Bool, compressed: Bool = false, callbackQueue: DispatchQueue?) throws {
        guard !name.isEmpty else { throw CacheError.invalidName(name) }
        self.name = name
        self.spaceName = spaceName
        self.source = source
        self.capacity = capacity
        self.crypted = crypted
        self.compressed = compressed
        self.callbackQueue = callbackQueue
        queue = DispatchQueue(label: "UnifiedStorage.FileArrayService.\(name)")
        queue.setSpecific(key: onQueue, value: true)
        if source.userDependent {
            resignObserver = NotificationCenter.default.addObserver(forName: .dataCenterWillLastUserResign, object: nil, queue: nil) { [weak self] _ in
                self?.waitForQueuedCalls()
            }
        } else {
            _ = try index()
        }
    }

    deinit {
        if let resignObserver { NotificationCenter.default.removeObserver(resignObserver) }
    }

    /// The index of the store to use now (another one after a user switch).
    func index() throws -> FileArrayIndex {
        let (store, directory, compresses) = try source.location()
        if let index = current.value, index.store === store { return index }
        let index = try FileArrayIndex.index(for: store, directory: directory, compresses: compresses, spaceName: spaceName)
        current.value = index
        return index
    }

    /// Runs `body` on the current index under its lock; `fallback` when there is no store (no
    /// user set) or on errors, which are logged.
    func withIndex<Result>(_ call: String, fallback: Result, in given: FileArrayIndex? = nil, _ body: (FileArrayIndex) throws -> Result) -> Result {
        do {
            let index = try given ?? index()
            index.lock.lock()
            defer { index.lock.unlock() }
            return try body(index)
        } catch StoreError.noCurrentUser {
            return fallback
        } catch {
            CacheLog.warning("FileArrayService \(name): \(call): \(error)")
            return fallback
        }
    }

    private var crypt: DataCrypt { crypted ? .default : .plain }

    private func callBack<Result: Sendable>(_ completion: (@Sendable (Result) -> Void)?, _ result: Result) {
        guard let completion else { return }
        if let callbackQueue { callbackQueue.async { completion(result) } } else { completion(result) }
    }

    // MARK: Writing

    /// Writes `data` as `name` (replacing it). True when stored (and the eviction it caused done).
    func writeNow(_ data: Data, name: String, in given: FileArrayIndex? = nil) -> Bool {
        withIndex("writeFile \(name)", fallback: false, in: given) { index in
            try index.write(data, name: name, capacity: capacity, crypt: crypt, plain: !crypted, compress: compressed)
            return true
        }
    }

    /// Writes `data` as `name` on the calling thread (beyond the source, the counterpart of
    /// `readFileSync`); true when stored and the eviction it caused is done. Ordered with the
    /// queued calls only by the index lock: use it from one place, or after awaiting those.
    public func writeFileSync(_ data: Data, name: String) -> Bool {
        writeNow(data, name: name)
    }

    /// Writes `data` as `name` on the service's queue; true when stored.
    public func writeFile(_ data: Data, name: String) async -> Bool {
        let target = callTarget()
        return await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: target.map { self.writeNow(data, name: name, in: $0) } ?? false) }
        }
    }

    /// Writes `data` as `name` on the service's queue, then calls `completion` with the result.
    public func writeFile(_ data: Data, name: String, completion: (@Sendable (Bool) -> Void)?) {
        let target = callTarget()
        queue.async { self.callBack(completion, target.map { self.writeNow(data, name: name, in: $0) } ?? false) }
    }

    /// The array of the store current at the call: queued work acts on it even if the user
    /// changes before it runs (nil while a userDependent service has no user).
    private func callTarget() -> FileArrayIndex? {
        do { return try index() } catch {
            if case StoreError.noCurrentUser = error {} else { CacheLog.warning("FileArrayService \(name): \(error)") }
            return nil
        }
    }

    /// Returns when every call queued so far is done (at once when called on the service's
    /// queue). A userDependent service does this before the user's store closes.
    public func waitForQueuedCalls() {
        guard DispatchQueue.getSpecific(key: onQueue) != true else { return }
        queue.sync {}
    }

    /// Renames `name` to `newName`, keeping content and age (a file named `newName` is
    /// replaced). False when `name` does not exist.
    public func renameFile(_ name: String, to newName: String) async -> Bool {
        let target = callTarget()
        return await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: target.map { self.renameNow(name, to: newName, in: $0) } ?? false) }
        }
    }

    /// `renameFile(_:to:)` with a completion.
    public func renameFile(_ name: String, to newName: String, completion: (@Sendable (Bool) -> Void)?) {
        let target = callTarget()
        queue.async { self.callBack(completion, target.map { self.renameNow(name, to: newName, in: $0) } ?? false) }
    }

    private func renameNow(_ name: String, to newName: String, in target: FileArrayIndex) -> Bool {
        withIndex("renameFile \(name)", fallback: false, in: target) { try $0.rename(name, to: newName) }
    }

    // MARK: Reading

    /// The content of `name`, or nil. Reads on the calling thread.
    public func readFileSync(_ name: String) -> Data? {
        withIndex("readFile \(name)", fallback: nil) { try $0.read(name) }
    }

    /// The content of `name`, read on the service's queue (after the writes called before).
    public func readFile(_ name: String) async -> Data? {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: self.readFileSync(name)) }
        }
    }

    /// `readFile(_:)` with a completion.
    public func readFile(_ name: String, completion: @escaping @Sendable (Data?) -> Void) {
        queue.async { self.callBack(completion, self.readFileSync(name)) }
    }

    /// Every file whose name matches `pattern` with SQLite's LIKE, by name.
    public func readFiles(like pattern: String) async -> [String: Data] {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: self.readFilesNow(like: pattern)) }
        }
    }

    /// `readFiles(like:)` with a completion.
    public func readFiles(like pattern: String, completion: @escaping @Sendable ([String: Data]) -> Void) {
        queue.async { self.callBack(completion, self.readFilesNow(like: pattern)) }
    }

    func readFilesNow(like pattern: String) -> [String: Data] {
        let like = LikePattern(pattern)
        return withIndex("readFiles(like:)", fallback: [:]) { index in
            var result: [String: Data] = [:]
            for name in index.manifests.keys where like.matches(name) { result[name] = try index.read(name) }
            return result
        }
    }

    // MARK: Removing and queries (at once)

    /// Deletes `name`.
    public func removeFile(_ name: String) {
        removeNow(name)
    }

    /// Deletes `name` from `given` (an earlier user's array) or the current one.
    func removeNow(_ name: String, in given: FileArrayIndex? = nil) {
        withIndex("removeFile \(name)", fallback: (), in: given) { try $0.remove([name]) }
    }

    /// Deletes every file whose name matches `pattern` with SQLite's LIKE.
    public func removeFiles(like pattern: String) {
        let like = LikePattern(pattern)
        withIndex("removeFiles(like:)", fallback: ()) { index in try index.remove(index.manifests.keys.filter { like.matches($0) }) }
    }

    /// Deletes every file.
    public func removeAllFiles() {
        withIndex("removeAllFiles", fallback: ()) { index in try index.remove(Array(index.manifests.keys)) }
    }

    /// Whether `name` exists. O(1).
    public func fileExists(_ name: String) -> Bool {
        withIndex("fileExists", fallback: false) { $0.manifests[name] != nil }
    }

    /// Every file name, oldest write first.
    public func allFileNames() -> [String] {
        withIndex("allFileNames", fallback: []) { index in
            index.manifests.sorted { $0.value.fileID < $1.value.fileID }.map(\.key)
        }
    }

    /// The number of files. O(1).
    public func fileCount() -> Int {
        withIndex("fileCount", fallback: 0) { $0.manifests.count }
    }
}
