/// APPreferencesAccessor: a DataCenter's preferences bound to one business, so calls take no
/// `business:` argument. It follows the DataCenter: after a user switch or a reset,
/// `commonPreferences` / `userPreferences` point at the stores in use then.
///
/// ```swift
/// let accessor = DataCenter.default.accessor(forBusiness: "aBiz")
/// accessor.commonPreferences.double(forKey: "aKey")
/// // same as DataCenter.default.commonPreferences.double(forKey: "aKey", business: "aBiz")
/// ```
public final class PreferencesAccessor: Sendable {
    let center: DataCenter
    /// The business of every call.
    public let business: String

    init(center: DataCenter, business: String) {
        self.center = center
        self.business = business
    }

    /// The DataCenter's `commonPreferences` bound to `business`.
    public var commonPreferences: BusinessPreferences {
        BusinessPreferences(preferences: center.commonPreferences, business: business)
    }

    /// The DataCenter's `userPreferences` bound to `business`; nil while no user is set.
    public var userPreferences: BusinessPreferences? {
        center.userPreferences.map { BusinessPreferences(preferences: $0, business: business) }
    }
}
