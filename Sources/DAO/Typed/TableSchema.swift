/// How a `DAORecord` type is stored: its table's name, primary key, generated id, unique columns
/// and indexes (OrmLite's `@DatabaseTable` and `@DatabaseField` settings).
///
/// ```swift
/// static let table = TableSchema("User", primaryKey: "id", generatedID: true,
///                                unique: ["name"], indexes: [["timestamp"], ["color", "name"]])
/// ```
public struct TableSchema: Sendable {
    /// The table's name.
    public var name: String
    /// The coding key of the primary-key property.
    public var primaryKey: String
    /// Whether the primary key is an `INTEGER PRIMARY KEY AUTOINCREMENT` the store assigns when
    /// a record is created with a nil (or absent) id.
    public var generatedID: Bool
    /// Columns that each hold distinct values (a `UNIQUE` constraint per column).
    public var unique: [String]
    /// Indexes, each a list of columns (composite when longer than one).
    public var indexes: [[String]]

    /// A schema. Column names are coding keys of the record; `Dao` checks them when it is made.
    public init(_ name: String, primaryKey: String, generatedID: Bool = false, unique: [String] = [], indexes: [[String]] = []) {
        self.name = name
        self.primaryKey = primaryKey
        self.generatedID = generatedID
        self.unique = unique
        self.indexes = indexes
    }
}

/// A Codable value stored as one row of the table its `table` schema describes.
public protocol DAORecord: Codable {
    /// The record type's table.
    static var table: TableSchema { get }
}
