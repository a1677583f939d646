import Foundation

/// A Swift value that binds as one SQL value in typed Dao queries: `Int`, `Int64`, `Int32`,
/// `Double`, `Bool` (0 or 1), `String`, `Data` and `[UInt8]` (blobs), `Date` (real seconds
/// since 1970, as `DAORowEncoder` stores it) and `DAOValue` itself.
public protocol DAOValueConvertible {
    /// The SQL value this binds as.
    var daoValue: DAOValue { get }
}

extension Int: DAOValueConvertible {
    /// `.integer`.
    public var daoValue: DAOValue { .integer(Int64(self)) }
}

extension Int64: DAOValueConvertible {
    /// `.integer`.
    public var daoValue: DAOValue { .integer(self) }
}

extension Int32: DAOValueConvertible {
    /// `.integer`.
    public var daoValue: DAOValue { .integer(Int64(self)) }
}

extension Double: DAOValueConvertible {
    /// `.real`.
    public var daoValue: DAOValue { .real(self) }
}

extension Bool: DAOValueConvertible {
    /// `.integer(1)` for true, `.integer(0)` for false.
    public var daoValue: DAOValue { .integer(self ? 1 : 0) }
}

extension String: DAOValueConvertible {
    /// `.text`.
    public var daoValue: DAOValue { .text(self) }
}

extension Data: DAOValueConvertible {
    /// `.blob`.
    public var daoValue: DAOValue { .blob([UInt8](self)) }
}

extension Array: DAOValueConvertible where Element == UInt8 {
    /// `.blob`.
    public var daoValue: DAOValue { .blob(self) }
}

extension Date: DAOValueConvertible {
    /// `.real` seconds since 1970.
    public var daoValue: DAOValue { .real(timeIntervalSince1970) }
}

extension DAOValue: DAOValueConvertible {
    /// Itself.
    public var daoValue: DAOValue { self }
}
