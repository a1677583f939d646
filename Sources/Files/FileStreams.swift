import Foundation

/// A Foundation `InputStream` over a file of a `FileStorage` (plain or decrypting), so code
/// written for streams reads storage files. A failing read returns -1 and sets `streamError`.
public final class FileInputStream: InputStream {
    private let reader: FileReader
    private var status: Stream.Status = .notOpen
    private var failure: (any Error)?

    /// Opens `name` of `storage` for reading.
    /// - Throws: as `FileStorage.reader(_:encryption:)`.
    public init(storage: FileStorage, name: String, encryption: FileEncryption = .none) throws {
        reader = try storage.reader(name, encryption: encryption)
        super.init(data: Data())
    }

    public override func open() { if status == .notOpen { status = .open } }
    public override func close() {
        reader.close()
        status = .closed
    }
    public override var streamStatus: Stream.Status { status }
    public override var streamError: (any Error)? { failure }
    public override var hasBytesAvailable: Bool { status == .open && reader.offset < reader.size }

    public override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
        guard status == .open || status == .atEnd else { return -1 }
        do {
            let count = try reader.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: len))
            if count == 0 { status = .atEnd }
            return count
        } catch {
            failure = error
            status = .error
            return -1
        }
    }

    public override func getBuffer(_ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length len: UnsafeMutablePointer<Int>) -> Bool { false }
}

/// A Foundation `OutputStream` into a file of a `FileStorage` (plain or encrypting). The file
/// is replaced atomically when the stream is closed; a failing write or close returns -1 or
/// leaves `streamStatus` `.error` with `streamError` set.
public final class FileOutputStream: OutputStream {
    /// nil only for a stream made with `init(toMemory:)`, which has no file.
    private let writer: FileWriter?
    private var status: Stream.Status = .notOpen
    private var failure: (any Error)?

    /// Opens a writer of `name` of `storage` (see `FileStorage.writer(_:encryption:append:)`).
    /// - Throws: as `FileStorage.writer(_:encryption:append:)`.
    public init(storage: FileStorage, name: String, encryption: FileEncryption = .none, append: Bool = false) throws {
        writer = try storage.writer(name, encryption: encryption, append: append)
        super.init(toMemory: ())
    }

    /// Required by `OutputStream`; a stream made this way has no file and every write fails.
    public required init(toMemory: ()) {
        writer = nil
        failure = FileStorageError.closed("(no file)")
        super.init(toMemory: ())
    }

    public override func open() { if status == .notOpen { status = .open } }
    public override var streamStatus: Stream.Status { status }
    public override var streamError: (any Error)? { failure }
    public override var hasSpaceAvailable: Bool { status == .open }

    public override func write(_ buffer: UnsafePointer<UInt8>, maxLength len: Int) -> Int {
        guard status == .open, let writer else { return -1 }
        do {
            try writer.write(UnsafeRawBufferPointer(start: buffer, count: len))
            return len
        } catch {
            failure = error
            status = .error
            return -1
        }
    }

    /// Puts the file in place (see `FileWriter.close()`); on failure `streamStatus` is
    /// `.error` and `streamError` says why.
    public override func close() {
        guard status != .closed, status != .error else { return }
        do {
            try writer?.close()
            status = .closed
        } catch {
            failure = error
            status = .error
        }
    }
}
