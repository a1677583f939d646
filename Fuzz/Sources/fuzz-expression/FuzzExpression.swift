import DAO

/// libFuzzer entry: the input is an `<if>` expression of a DAO config.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzExpression(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    _ = try? DAOProxy.checkExpression(String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self))
    return 0
}
