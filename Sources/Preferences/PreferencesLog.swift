import Logging

/// The layer's logger (swift-log, label "UnifiedStorage.Preferences"), switched by
/// `DataCenter.loggingEnabled` (APDataCenterLogSwitch; on by default, as in the source).
enum PreferencesLog {
    private static let enabled = Locked(true)
    private static let logger = Logger(label: "UnifiedStorage.Preferences")

    static var isEnabled: Bool {
        get { enabled.withLock { $0 } }
        set { enabled.withLock { $0 = newValue } }
    }

    static func info(_ message: @autoclosure () -> String) {
        guard isEnabled else { return }
        logger.info("\(message())")
    }

    static func warning(_ message: @autoclosure () -> String) {
        guard isEnabled else { return }
        logger.warning("\(message())")
    }
}
