/// Rows to Decodable values for config results: the project's Codable row mapping
/// (`DAORowDecoder`: column name -> coding key, SQLite's conversions made strict).
enum RowDecoding {
    static func decode<T: Decodable>(_ type: T.Type, from row: [String: DAOValue]) throws -> T {
        try DAORowDecoder().decode(T.self, from: row)
    }
}
