import Foundation

/// How the disk cache and the object array turn values into bytes: a tag byte, then the
/// payload (FORMAT.md, "Caches: values"). Data, [UInt8] and String skip any encoder, so the
/// common byte-blob case costs a copy and nothing more.
struct CacheValueCodec<Value> {
    /// Tag bytes, format version 1.
    enum Tag: UInt8 {
        case data = 0x01
        case string = 0x02
        case bytes = 0x03
        /// A binary property list (PropertyListEncoder) of a one-element array holding the value.
        case codablePropertyList = 0x10
        /// An NSKeyedArchiver archive whose root object is the value.
        case keyedArchive = 0x20
    }

    let encode: (Value) throws -> [UInt8]
    let decode: ([UInt8]) throws -> Value

    /// The codec of a Codable value.
    static func codable() -> CacheValueCodec where Value: Codable {
        CacheValueCodec(encode: { value in
            if let data = value as? Data { return [Tag.data.rawValue] + data }
            if let bytes = value as? [UInt8] { return [Tag.bytes.rawValue] + bytes }
            if let string = value as? String { return [Tag.string.rawValue] + Array(string.utf8) }
            let encoder = PropertyListEncoder()
            encoder.outputFormat = .binary
            return [Tag.codablePropertyList.rawValue] + (try encoder.encode([value]))
        }, decode: { bytes in
            guard let first = bytes.first, let tag = Tag(rawValue: first) else {
                throw CacheError.undecodable("unknown value tag \(bytes.first.map { String($0) } ?? "none")")
            }
            let payload = bytes.dropFirst()
            switch tag {
            case .data:
                if let value = Data(payload) as? Value { return value }
            case .bytes:
                if let value = Array(payload) as? Value { return value }
            case .string:
                if let value = String(validating: payload, as: UTF8.self) as? Value { return value }
            case .codablePropertyList:
                do {
                    if let value = try PropertyListDecoder().decode([Value].self, from: Data(payload)).first { return value }
                } catch {
                    throw CacheError.undecodable("\(Value.self): \(error)")
                }
            case .keyedArchive:
                break
            }
            throw CacheError.undecodable("a value of tag \(first) is not a \(Value.self)")
        })
    }

    /// The codec of an NSCoding object (NSKeyedArchiver; its class must be loaded under the
    /// same name to decode).
    static func archiving() -> CacheValueCodec where Value: NSObject & NSCoding {
        CacheValueCodec(encode: { value in
            [Tag.keyedArchive.rawValue] + (try NSKeyedArchiver.archivedData(withRootObject: value, requiringSecureCoding: false))
        }, decode: { bytes in
            guard bytes.first == Tag.keyedArchive.rawValue else { throw CacheError.undecodable("not an archive") }
            let unarchiver = try NSKeyedUnarchiver(forReadingFrom: Data(bytes.dropFirst()))
            unarchiver.requiresSecureCoding = false
            defer { unarchiver.finishDecoding() }
            guard let value = unarchiver.decodeObject(forKey: NSKeyedArchiveRootObjectKey) as? Value else {
                throw CacheError.undecodable("the archive's root is not a \(Value.self)")
            }
            return value
        })
    }
}
