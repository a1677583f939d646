import DAO

/// libFuzzer entry: the input is an XML DAO config for the loader (XML reader, elements,
/// attributes, references, dynamic SQL, macros), which must answer with a typed error or a
/// method list, never crash or hang.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    _ = try? DAOProxy.checkConfig(String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self))
    return 0
}
