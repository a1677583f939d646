import Foundation

/// Rows to Decodable values for config results.
enum RowDecoding {
    /// Decodes one row (column name -> value) into `T` through its JSON form: integers and reals
    /// as numbers, text as strings, blobs as base64 (JSONDecoder's Data default), NULL as null;
    /// dates as seconds since 1970 (how arguments bind them).
    static func decode<T: Decodable>(_ type: T.Type, from row: [String: DAOValue]) throws -> T {
        var object: [String: Any] = [:]
        for (column, value) in row {
            switch value {
            case .null: object[column] = NSNull()
            case .integer(let v): object[column] = v
            case .real(let v): object[column] = v.isFinite ? v : NSNull()
            case .text(let s): object[column] = s
            case .blob(let b): object[column] = Data(b).base64EncodedString()
            }
        }
        let data = try JSONSerialization.data(withJSONObject: object)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try decoder.decode(T.self, from: data)
    }
}
