@_spi(Fuzzing) import DAO

/// libFuzzer entry: the input is one SQL statement for the parser (lexer, parser, syntax
/// errors with line and column, unsupported constructs).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSQL(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    _ = DAOFuzzing.parseSQL(String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self))
    return 0
}
