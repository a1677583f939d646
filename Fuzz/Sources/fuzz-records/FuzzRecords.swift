@_spi(Fuzzing) import LogStore

/// libFuzzer entry: the input is a segment body. The first byte chooses whether checksums are
/// fixed up first (so the fuzzer reaches the code behind them) or left as they are.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRecords(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    _ = LogStoreFuzzing.readRecords(bytes, fixChecksums: data[0] & 1 == 0)
    return 0
}
