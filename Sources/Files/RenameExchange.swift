import Foundation

/// Linux's `renameat2(2)` with `RENAME_EXCHANGE`: swaps two names in one atomic step. Glibc's
/// Swift overlay does not export `renameat2`, so it is looked up once at run time.
///
/// Why `AtomicReplacement` uses it: when `rename(2)` replaces an existing file, ext4
/// (`auto_da_alloc`, on by default) allocates and starts writing back the new file's blocks
/// inside the rename, which made a replacing write several times slower than writing the file
/// in place. An exchange does not take that path; the old file, now under the temporary name,
/// is then unlinked. A crash between the two steps leaves the new file in place and the old one
/// under a `.ustmp` name, which the next open of the storage removes.
enum RenameExchange {
    private typealias Renameat2 = @convention(c) (Int32, UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UInt32) -> Int32
    /// `RENAME_EXCHANGE` from <linux/fs.h>.
    private static let exchangeFlag: UInt32 = 1 << 1
    private static let function: Renameat2? = {
        #if os(Linux)
        guard let symbol = dlsym(nil, "renameat2") else { return nil }
        return unsafeBitCast(symbol, to: Renameat2.self)
        #else
        return nil
        #endif
    }()

    /// Swaps the files at `first` and `second` when both exist and `second` is a regular file.
    /// Returns false, having changed nothing, when it cannot: no `renameat2` (EINVAL, ENOSYS,
    /// a file system without exchange), `second` missing or not a regular file; the caller
    /// then uses `rename(2)`, which also reports any other failure with its own errno.
    static func exchange(_ first: String, _ second: String) -> Bool {
        guard let function else { return false }
        var info = stat()
        guard lstat(second, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
        return function(AT_FDCWD, first, AT_FDCWD, second, exchangeFlag) == 0
    }
}
