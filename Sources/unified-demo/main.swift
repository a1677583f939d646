// unified-demo: every layer of UnifiedStorage once, on a fresh root folder, printing what each
// step did. `bash scripts/demo.sh` runs it (after the ustore demo); `swift run unified-demo DIR`
// runs it on DIR. Exits non-zero when any step does not give what it should.
import Foundation
import UnifiedStorage

struct DemoFailure: Error, CustomStringConvertible {
    let description: String
}

/// Prints a step and checks its result.
func step(_ title: String, _ check: Bool, _ detail: @autoclosure () -> String) throws {
    let padded = title.count < 58 ? title + String(repeating: " ", count: 58 - title.count) : title
    print("\(padded) \(detail())")
    guard check else { throw DemoFailure(description: "step failed: \(title) (\(detail()))") }
}

struct Note: Codable, Sendable, Equatable {
    var title: String
    var stars: Int
}

struct User: Codable, DAORecord {
    static let table = TableSchema("User", primaryKey: "id", generatedID: true, unique: ["name"], indexes: [["timestamp"]])
    var id: Int64?
    var name: String
    var color: Int
    var timestamp: Int64
}

/// SQL rows as SQLite's shell would print them: `18|hello #18`.
func show(_ rows: [[DAOValue]]) -> String {
    rows.map { row in
        row.map { value -> String in
            switch value {
            case .null: return "NULL"
            case .integer(let i): return String(i)
            case .real(let d): return String(d)
            case .text(let t): return t
            case .blob(let b): return "x'" + b.map { String(format: "%02x", $0) }.joined() + "'"
            }
        }.joined(separator: "|")
    }.joined(separator: ", ")
}

func run(root: URL) async throws {
    print("root: \(root.path)\n")
    DataCenter.loggingEnabled = false
    try DataCenter.configure(root: root.appendingPathComponent("app"), appKey: "demo", appVersion: "1.0")

    // 1. The engine: an encrypted, compressed store; a batch; a reopen.
    var options = LogStore.Options()
    options.encryption = try .init(deriving: "demo application key")
    options.compression = .init(level: 3, threshold: 64)
    let storeURL = root.appendingPathComponent("engine")
    do {
        let store = try LogStore(directory: storeURL, options: options)
        var batch = LogStore.WriteBatch()
        for i in 0..<1_000 { batch.put(Array("value \(i) \(String(repeating: "z", count: 100))".utf8), forKey: Array("key:\(i)".utf8)) }
        try store.write(batch)
        try store.close()
    }
    let store = try LogStore(directory: storeURL, options: options)
    let value = try store.get(forKey: Array("key:42".utf8)).map { String(decoding: $0, as: UTF8.self) }
    try step("LogStore: 1,000 puts in one batch, reopen, get key:42", value?.hasPrefix("value 42 ") == true, value.map { String($0.prefix(12)) + "..." } ?? "nil")
    let report = try store.verify()
    try step("LogStore: verify (AES-256-GCM tags checked)", report.problems.isEmpty, "\(report.recordsChecked) records, \(report.problems.count) problems")

    // 2. SQL on the same store's tables.
    _ = try store.sql("CREATE TABLE message (id INTEGER PRIMARY KEY, sender TEXT NOT NULL, time INTEGER, body TEXT)")
    _ = try store.sql("CREATE INDEX message_time ON message (time DESC)")
    for i in 1...20 {
        _ = try store.sql("INSERT INTO message (sender, time, body) VALUES (?, ?, ?)",
                          arguments: [.text(i % 3 == 0 ? "ann" : "bob"), .integer(Int64(1_700_000_000 + i)), .text("hello #\(i)")])
    }
    let latest = try store.sql("SELECT id, body FROM message WHERE sender = 'ann' ORDER BY time DESC LIMIT 2")
    try step("SQL: latest two messages from ann (index on time)", latest.count == 2 && latest[0][0] == .integer(18), show(latest))
    let counts = try store.sql("SELECT sender, count(*), 7 / 2, 7 / 2.0 FROM message GROUP BY sender ORDER BY sender")
    try step("SQL: GROUP BY with SQLite's integer division", counts.first == [.text("ann"), .integer(6), .integer(3), .real(3.5)], show(counts))

    // 3. The typed Dao.
    let users = try store.dao(for: User.self)
    var ann = User(id: nil, name: "ann", color: 2, timestamp: 100)
    try users.create(&ann)
    var bob = User(id: nil, name: "bob", color: 5, timestamp: 200)
    try users.create(&bob)
    let found = try users.queryBuilder().where { $0.eq("name", "ann").or().gt("color", 4) }.orderBy("timestamp").query()
    try step("Dao<User>: create (generated ids), query builder", found.map(\.name) == ["ann", "bob"] && ann.id != nil, "ids \(ann.id ?? -1), \(bob.id ?? -1)")
    try store.close()

    // 4. Preferences through a DataCenter, with a user switch.
    let center = try DataCenter(root: root.appendingPathComponent("center"), appKey: "demo", appVersion: "1.0")
    try center.commonPreferences.set(42, forKey: "launches", business: "app")
    try center.commonPreferences.setString("secret", forKey: "token", business: "auth", crypt: .default)
    try center.setCurrentUserId("user-1")
    try center.userPreferences?.saveJSON(Note(title: "first", stars: 3), forKey: "note", business: "notes")
    try center.setCurrentUserId("user-2")
    let other = center.userPreferences?.allKeys(business: "notes") ?? ["?"]
    try center.setCurrentUserId("user-1")
    let note = try center.userPreferences?.object(Note.self, forKey: "note", business: "notes")
    try step("Preferences: typed values, an encrypted string",
             center.commonPreferences.integer(forKey: "launches", business: "app") == 42
                 && center.commonPreferences.string(forKey: "token", business: "auth") == "secret", "launches 42, token decrypted")
    try step("Preferences: per-user stores follow the current user", note == Note(title: "first", stars: 3) && other.isEmpty,
             "user-1 \(note.map { "\($0)" } ?? "nil"), user-2 keys \(other)")

    // 5. Caches.
    let memory = LRUMemoryCache<String>(capacity: 2)
    memory.setObject("a", forKey: "1"); memory.setObject("b", forKey: "2")
    _ = memory.object(forKey: "1")
    memory.setObject("c", forKey: "3")   // evicts "2", the least recently used
    try step("LRUMemoryCache: capacity 2, LRU eviction", memory.objectExists(forKey: "1") && !memory.objectExists(forKey: "2"),
             "kept \(memory.peekObjects(2, fromHead: true))")
    let storage = try CustomStorage(path: root.appendingPathComponent("chat"))
    let disk = try LRUDiskCache<Note>(name: "notes", capacity: 100, userDependent: false, crypted: true, in: storage)
    for i in 0..<10 { disk.setObject(Note(title: "n\(i)", stars: i), forKey: "note.\(i)") }
    disk.removeObjects(like: "NOTE._")   // SQLite's LIKE: ASCII case-insensitive, _ is one character
    try step("LRUDiskCache: encrypted, removeObjects(like:)", disk.object(forKey: "note.3") == nil, "note.0...note.9 removed by LIKE 'NOTE._'")
    let files = try storage.fileArrayService(name: "voice", userDependent: false, capacity: 2, crypted: true)
    for name in ["a.amr", "b.amr", "c.amr"] { _ = await files.writeFile(Data(repeating: 7, count: 200_000), name: name) }
    try step("FileArrayService: capacity 2 keeps the newest files", files.allFileNames().sorted() == ["b.amr", "c.amr"], "\(files.allFileNames().sorted())")
    let objects = try storage.objectArrayService(name: "drafts", userDependent: false, capacity: 0, cacheCapacity: 10, crypted: false, of: Note.self)
    objects.setObject(Note(title: "draft", stars: 1), forKey: "d1")
    try step("ObjectArrayService: a background write is read back at once", objects.object(forKey: "d1")?.title == "draft", "\(objects.objectCount()) object")

    // 6. An XML DAO config of the source component, run unchanged.
    let config = root.appendingPathComponent("message.xml")
    try """
    <module name="Message" initializer="createTable" tableName="chat_message" version="1.0">
      <update id="createTable">create table if not exists ${T} (id integer primary key, sender text, time integer, body text)</update>
      <insert id="save" arguments="list" foreach="list.item">
        insert or replace into ${T} (id, sender, time, body) values (#{item.id}, #{item.sender}, #{item.time}, #{item.body})
      </insert>
      <select id="find" arguments="ids" result="[{}]">
        select * from ${T} where id in <foreach item="x" collection="ids" open="(" separator="," close=")">#{x}</foreach> order by id
      </select>
      <select id="count" result="int">select count(*) from ${T}</select>
    </module>
    """.write(to: config, atomically: true, encoding: .utf8)
    let proxy = try center.dao(configPath: config, userDependent: true)
    let rows: [[String: Any]] = (1...5).map { ["id": $0, "sender": "ann", "time": 1_000 + $0, "body": "hi \($0)"] }
    let saved = try proxy.call("save", ["list": rows]) as? DAOResult
    let some = try proxy.find(ids: [2, 4]) as? [[String: Any]]
    try step("XML DAO config: foreach insert, select with <foreach>", saved?.changedRowCount == 5 && some?.count == 2,
             "\(saved?.changedRowCount ?? -1) rows saved, found ids \(some?.compactMap { $0["id"] as? Int } ?? [])")

    // 7. Files (the Android side's ZFile and ZSecurityFile streams): an encrypted file written
    // through a writer, read back at an offset (only the segments touched are decrypted).
    let fileStorage = try center.fileStorage(.internal)
    let writer = try fileStorage.writer("exports/report.txt", encryption: .storageKey)
    for i in 0..<1_000 { try writer.write("line \(i)\n") }
    try writer.close()
    let reader = try fileStorage.reader("exports/report.txt", encryption: .storageKey)
    let whole = try fileStorage.string(of: "exports/report.txt", encryption: .storageKey)
    try reader.seek(to: Int64(whole.utf8.count - 9))
    let tail = String(decoding: try reader.read(upTo: 9), as: UTF8.self)
    reader.close()
    let onDisk = try Data(contentsOf: fileStorage.url(of: "exports/report.txt"))
    try step("Files: an encrypted file, read at an offset", tail == "line 999\n" && onDisk.range(of: Data("line 1".utf8)) == nil,
             "\(whole.utf8.count) bytes, \(onDisk.count) on disk (encrypted), tail \(tail.debugDescription)")

    // 8. Purgeable folders and the cache cleaner.
    let thumbs = try PurgeablePath.path("Library/Caches/Thumbs", type: .oneWeek, sizeLimitMB: 1)
    for i in 0..<4 { try Data(repeating: 1, count: 400_000).write(to: thumbs.appendingPathComponent("t\(i).jpg")) }
    try PurgeablePath.sweep()
    let left = try FileManager.default.contentsOfDirectory(atPath: thumbs.path).count
    try step("PurgeablePath: over 1 MiB, sweep down to half the limit", left <= 1, "\(left) of 4 files left")
    let tasks: [CacheCleaner.Task] = [.paths(path: "Library/Caches", entries: ["Thumbs"])]
    let freed = await CacheCleaner.execute(tasks: tasks) { _, _ in }
    try step("CacheCleaner: a Path + Entries task", !FileManager.default.fileExists(atPath: thumbs.path), String(format: "%.2f MiB freed", freed))
    try center.reset()
    print("\ndemo finished: every layer above ran against real stores under \(root.path).")
}

let arguments = CommandLine.arguments
let root = arguments.count > 1 ? URL(fileURLWithPath: arguments[1])
    : FileManager.default.temporaryDirectory.appendingPathComponent("unified-demo-\(UUID().uuidString)")
do {
    try await run(root: root)
} catch {
    FileHandle.standardError.write(Data("unified-demo: \(error)\n".utf8))
    exit(1)
}
