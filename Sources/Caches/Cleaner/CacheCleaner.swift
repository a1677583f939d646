import Foundation
import Preferences

/// APUserCacheCleaner: runs cleaning tasks under `DataCenter.default`'s storage root and reports
/// progress in four phases:
///
/// 1. `.preCalculating`: measures the root (progress 0...1);
/// 2. `.cleaning`: runs the tasks in order (progress = tasks done / tasks);
/// 3. `.postCalculating`: measures the root again (0...1);
/// 4. `.done`: progress is the megabytes (MiB) freed, the difference of the two measures.
///
/// Tasks have the source's two shapes (`tasks(from:)` reads them from a JSON or property-list
/// file): `.paths(path:entries:)` deletes the names directly inside `path` (relative to the
/// root) matching an entry, `*` matching any run of characters (a matching folder goes whole);
/// `.handlers(className:selectors:)` runs registered closures, looked up as "Class.selector"
/// then "selector". Built in: `cleanDefaultPreferences` (deletes preference values written with
/// `DataOptions.purgeable`) and `cleanPurgeablePaths` (empties every `PurgeablePath` folder).
/// A failing handler or path is logged and the run goes on; a path that is absolute or holds
/// ".." is never touched (`tasks(from:)` and `validate(_:)` refuse it with
/// `CacheError.pathOutsideRoot`), nor one that a symbolic link leads out of the root; a
/// matching entry that is a symbolic link is removed as a link, its target untouched.
public enum CacheCleaner {
    /// The phase a progress report belongs to.
    public enum Phase: Sendable, Equatable { case preCalculating, cleaning, postCalculating, done }

    /// One cleaning task.
    public enum Task: Sendable, Equatable {
        /// Delete the entries of `path` (relative to the root) whose names match `entries`.
        case paths(path: String, entries: [String])
        /// Run the registered handlers `selectors` (of `className`).
        case handlers(className: String, selectors: [String])
    }

    private static let handlers = CacheLockedBox<[String: @Sendable () throws -> Void]>([
        "cleanDefaultPreferences": { try DataCenter.default.removePurgeablePreferenceValues() },
        "cleanPurgeablePaths": { try PurgeablePath.resetAll() },
    ])

    /// Registers `handler` under `name` ("Class.selector" or "selector"), replacing an earlier one.
    public static func register(_ name: String, _ handler: @escaping @Sendable () throws -> Void) {
        handlers.withLock { $0[name] = handler }
    }

    /// The tasks of a JSON or property-list file: an array of dictionaries, each either
    /// `{"Path": String, "Entries": [String]}` or `{"Class": String, "Selectors": [String]}`.
    /// - Throws: `CacheError.invalidTaskFile` (what and which item) for anything else;
    ///   `CacheError.pathOutsideRoot` for an absolute path or one with ".."; the file's read error.
    public static func tasks(from file: URL) throws -> [Task] {
        let data = try Data(contentsOf: file)
        let root: Any
        if let json = try? JSONSerialization.jsonObject(with: data) {
            root = json
        } else if let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) {
            root = plist
        } else {
            throw CacheError.invalidTaskFile("\(file.lastPathComponent): neither JSON nor a property list")
        }
        guard let items = root as? [Any] else { throw CacheError.invalidTaskFile("\(file.lastPathComponent): the root is not an array") }
        return try items.enumerated().map { position, item in
            guard let dictionary = item as? [String: Any] else {
                throw CacheError.invalidTaskFile("\(file.lastPathComponent): item \(position) is not a dictionary")
            }
            let task: Task
            if let path = dictionary["Path"] as? String {
                guard let entries = dictionary["Entries"] as? [String] else {
                    throw CacheError.invalidTaskFile("\(file.lastPathComponent): item \(position): Entries is not an array of strings")
                }
                task = .paths(path: path, entries: entries)
            } else if let className = dictionary["Class"] as? String {
                guard let selectors = dictionary["Selectors"] as? [String] else {
                    throw CacheError.invalidTaskFile("\(file.lastPathComponent): item \(position): Selectors is not an array of strings")
                }
                task = .handlers(className: className, selectors: selectors)
            } else {
                throw CacheError.invalidTaskFile("\(file.lastPathComponent): item \(position) has neither Path nor Class")
            }
            try validate(task)
            return task
        }
    }

    /// Checks that a task stays inside the storage root.
    /// - Throws: `CacheError.pathOutsideRoot` for an absolute path, a "~" path, or one with a
    ///   ".." component (in the path or an entry); entries must be plain names.
    public static func validate(_ task: Task) throws {
        guard case .paths(let path, let entries) = task else { return }
        let components = path.split(separator: "/", omittingEmptySubsequences: true)
        if path.hasPrefix("/") || path.hasPrefix("~") || components.contains("..") {
            throw CacheError.pathOutsideRoot(path)
        }
        for entry in entries where entry.isEmpty || entry.contains("/") || entry == ".." || entry == "." {
            throw CacheError.pathOutsideRoot(path + "/" + entry)
        }
    }

    /// Runs `tasks` in the background, reporting `(phase, progress)`; returns the MiB freed.
    @discardableResult
    public static func execute(tasks: [Task], progress: @escaping @Sendable (Phase, Double) -> Void) async -> Double {
        await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .utility).async {
                continuation.resume(returning: run(tasks: tasks, root: DataCenter.default.storageRoot, progress: progress))
            }
        }
    }

    /// `execute(tasks:progress:)` with a completion (run on a background queue) instead of await.
    public static func execute(tasks: [Task], progress: @escaping @Sendable (Phase, Double) -> Void, completion: @escaping @Sendable (Double) -> Void) {
        DispatchQueue.global(qos: .utility).async {
            completion(run(tasks: tasks, root: DataCenter.default.storageRoot, progress: progress))
        }
    }

    /// The four phases, synchronously.
    static func run(tasks: [Task], root: URL, progress: @Sendable (Phase, Double) -> Void) -> Double {
        let before = FolderSize.measure(root) { progress(.preCalculating, $0) }
        progress(.preCalculating, 1)
        progress(.cleaning, 0)
        for (done, task) in tasks.enumerated() {
            perform(task, root: root)
            progress(.cleaning, Double(done + 1) / Double(tasks.count))
        }
        if tasks.isEmpty { progress(.cleaning, 1) }
        let after = FolderSize.measure(root) { progress(.postCalculating, $0) }
        progress(.postCalculating, 1)
        let freed = Double(max(0, before - after)) / 1_048_576
        progress(.done, freed)
        return freed
    }

    private static func perform(_ task: Task, root: URL) {
        switch task {
        case .handlers(let className, let selectors):
            for selector in selectors {
                let handler = handlers.withLock { $0[className + "." + selector] ?? $0[selector] }
                guard let handler else {
                    CacheLog.warning("CacheCleaner: no handler \(className).\(selector)")
                    continue
                }
                do { try handler() } catch {
                    CacheLog.warning("CacheCleaner: \(className).\(selector) failed: \(error)")
                }
            }
        case .paths(let path, let entries):
            do { try validate(task) } catch {
                CacheLog.warning("CacheCleaner: refused \(path): \(error)")
                return
            }
            let folder = root.appendingPathComponent(path)
            // A folder inside the root may still be a symbolic link to somewhere else.
            let resolvedRoot = root.resolvingSymlinksInPath().standardizedFileURL.path
            let resolvedFolder = folder.resolvingSymlinksInPath().standardizedFileURL.path
            guard resolvedFolder == resolvedRoot || resolvedFolder.hasPrefix(resolvedRoot + "/") else {
                CacheLog.warning("CacheCleaner: refused \(path): it leads outside the storage root")
                return
            }
            let patterns = entries.map(WildcardPattern.init)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            for name in names where patterns.contains(where: { $0.matches(name) }) {
                do { try FileManager.default.removeItem(at: folder.appendingPathComponent(name)) } catch {
                    CacheLog.warning("CacheCleaner: removing \(path)/\(name): \(error)")
                }
            }
        }
    }
}

/// An `Entries` pattern: `*` matches any run of characters (the empty one too); everything else
/// matches itself, case-sensitively (file names are).
struct WildcardPattern: Sendable {
    let parts: [String]

    init(_ pattern: String) {
        parts = pattern.split(separator: "*", omittingEmptySubsequences: false).map(String.init)
    }

    func matches(_ name: String) -> Bool {
        guard parts.count > 1 else { return name == parts.first ?? "" }
        var rest = Substring(name)
        guard let first = parts.first, rest.hasPrefix(first) else { return false }
        rest = rest.dropFirst(first.count)
        let last = parts[parts.count - 1]
        for middle in parts.dropFirst().dropLast() where !middle.isEmpty {
            guard let range = rest.range(of: middle) else { return false }
            rest = rest[range.upperBound...]
        }
        return rest.count >= last.count && rest.hasSuffix(last)
    }
}

/// Sizes of folder trees (allocated file sizes), with progress over the root's direct entries.
enum FolderSize {
    static func measure(_ root: URL, progress: (Double) -> Void) -> Int {
        let children = (try? FileManager.default.contentsOfDirectory(at: root, includingPropertiesForKeys: nil)) ?? []
        var total = 0
        for (done, child) in children.enumerated() {
            total += size(of: child)
            progress(Double(done + 1) / Double(children.count))
        }
        return total
    }

    static func size(of url: URL) -> Int {
        let keys: Set<URLResourceKey> = [.isRegularFileKey, .fileSizeKey, .isDirectoryKey]
        guard let values = try? url.resourceValues(forKeys: keys) else { return 0 }
        if values.isRegularFile == true { return values.fileSize ?? 0 }
        guard values.isDirectory == true,
              let enumerator = FileManager.default.enumerator(at: url, includingPropertiesForKeys: Array(keys)) else { return 0 }
        var total = 0
        for case let file as URL in enumerator {
            if let values = try? file.resourceValues(forKeys: keys), values.isRegularFile == true { total += values.fileSize ?? 0 }
        }
        return total
    }
}
