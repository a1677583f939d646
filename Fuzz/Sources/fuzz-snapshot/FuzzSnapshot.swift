@_spi(Fuzzing) import LogStore

/// libFuzzer entry: the input is an index snapshot file, then a segment header and a
/// compaction commit file. The first byte chooses whether checksums are fixed up first.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSnapshot(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let fix = data[0] & 1 == 0
    _ = LogStoreFuzzing.readSnapshot(bytes, fixChecksums: fix)
    _ = LogStoreFuzzing.readSmallFiles(bytes, fixChecksums: fix)
    return 0
}
