extension DataCrypt {
    /// Whether this crypt is an application's encrypt/decrypt pair (not `.default` or `.plain`).
    public var isCustom: Bool {
        if case .custom = kind { return true }
        return false
    }

    /// Whether this crypt is `DataCrypt.default` (AES-256-GCM under the store's key); for the
    /// layers that map it onto their own encryption (the Files module's encrypted files).
    package var isStoreKey: Bool {
        if case .storeKey = kind { return true }
        return false
    }

    /// Runs a custom crypt's `encrypt` on `bytes`; nil for `.default` and `.plain`, which the
    /// store applies (or not) to whole records. Used by layers that protect single fields, such
    /// as the DAO's `<crypt>` properties.
    /// - Throws: whatever the custom `encrypt` throws.
    public func encryptIfCustom(_ bytes: [UInt8]) throws -> [UInt8]? {
        guard case .custom(let encrypt, _) = kind else { return nil }
        return try encrypt(bytes)
    }

    /// Runs a custom crypt's `decrypt` on `bytes`; nil for `.default` and `.plain`.
    /// - Throws: whatever the custom `decrypt` throws.
    public func decryptIfCustom(_ bytes: [UInt8]) throws -> [UInt8]? {
        guard case .custom(_, let decrypt) = kind else { return nil }
        return try decrypt(bytes)
    }
}
