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
    /// Decodes the byte-blob tags straight from a borrowed buffer (one copy); nil for the
    /// others, which go through `decode`.
    var decodeInPlace: (UnsafeRawBufferPointer) -> Value? = { _ in nil }

    /// `tag` followed by the bytes of `body`, in one allocation.
    static func tagged(_ tag: Tag, _ body: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: body.count + 1) { buffer, count in
            buffer[0] = tag.rawValue
            if let base = body.baseAddress, let target = buffer.baseAddress {
                (target + 1).update(from: base.assumingMemoryBound(to: UInt8.self), count: body.count)
            }
            count = body.count + 1
        }
    }

    /// The codec of a Codable value.
    static func codable() -> CacheValueCodec where Value: Codable {
        CacheValueCodec(encode: { value in
            if let data = value as? Data { return data.withUnsafeBytes { tagged(.data, $0) } }
            if let bytes = value as? [UInt8] { return bytes.withUnsafeBytes { tagged(.bytes, $0) } }
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
        }, decodeInPlace: { buffer in
            guard let first = buffer.first, let base = buffer.baseAddress else { return nil }
            let payload = UnsafeRawBufferPointer(start: base + 1, count: buffer.count - 1)
            switch Tag(rawValue: first) {
            case .data: return Data(payload) as? Value
            case .bytes: return [UInt8](payload) as? Value
            case .string: return String(decoding: payload.bindMemory(to: UInt8.self), as: UTF8.self) as? Value
            default: return nil
            }
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
