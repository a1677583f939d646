import Foundation

/// What can go wrong in the Caches layer beyond the engine's `StoreError`.
public enum CacheError: Error, Sendable, Equatable {
    /// Stored bytes that do not decode as the requested value; the payload says why.
    case undecodable(String)
    /// A cache or service name that is empty.
    case invalidName(String)
    /// A cleaner path that is absolute or climbs out of the storage root with "..".
    case pathOutsideRoot(String)
    /// A cleaner task file that is neither JSON nor a property list of the two task shapes;
    /// the payload says what and where.
    case invalidTaskFile(String)
}
