import Foundation
import LogStore

/// `logstore-crash-writer rekey <dir> <segment size>`: opens the store with key A (id 1) and
/// rekeys it to key B (id 2), printing `P <fraction>` at each progress report and `R` when the
/// rekey returned; the parent kills it at a random moment. Keys must match `RekeyTests`.
func runRekeyChild(_ arguments: [String]) -> Never {
    guard arguments.count == 2, let segmentSize = Int(arguments[1]) else {
        fail("usage: logstore-crash-writer rekey <dir> <segment size>")
    }
    var options = LogStore.Options()
    options.segmentSize = segmentSize
    options.compression = .init(level: 3, threshold: 64)
    options.encryption = .init(key: [UInt8](repeating: 0xA1, count: 32), keyID: 1)
    do {
        let store = try LogStore(directory: URL(fileURLWithPath: arguments[0]), options: options)
        emit("O")
        try store.rekey(to: .init(key: [UInt8](repeating: 0xB2, count: 32), keyID: 2)) { emit("P \($0)") }
        emit("R")
        try store.close()
        exit(0)
    } catch {
        fail("rekey: \(error)")
    }
}
