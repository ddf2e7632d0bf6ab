/// A salted password hash in passlib's `pbkdf2_sha256` format:
/// `$pbkdf2-sha256$<iterations>$<salt>$<hash>`, salt and hash in passlib's
/// base64 (`./` for `+/`, no padding), the hash PBKDF2-HMAC-SHA-256 of the
/// password's UTF-8. Python's passlib reads and writes the same text.
///
/// ```swift
/// let hash = PasswordHash.make(password: "s3cret")!
/// hash.description                       // "$pbkdf2-sha256$600000$…$…"
/// hash.verifies(password: "s3cret")      // true
/// ```
public struct PasswordHash: Sendable, Hashable, CustomStringConvertible {
    /// PBKDF2 rounds: OWASP's 2023 recommendation for PBKDF2-HMAC-SHA-256.
    public static let defaultIterations = 600_000
    /// The most rounds a hash may ask for: libcrypto counts them in a 32-bit integer.
    public static let maximumIterations = Int(Int32.max)

    public let iterations: Int
    let salt: [UInt8]
    let hash: [UInt8]

    /// Reads the text of a hash; `nil` when it is not one.
    ///
    /// ```swift
    /// PasswordHash("$pbkdf2-sha256$29000$AAECAwQFBgcICQoLDA0ODw$ZvLORN3Wu1.2s6Mb0kBKZ43bylSsC/t0Vz5rE9nJPNg")
    /// ```
    public init?(_ text: some StringProtocol) {
        let fields = text.utf8.split(separator: UInt8(ascii: "$"), omittingEmptySubsequences: false)
        guard fields.count == 5, fields[0].isEmpty, fields[1].elementsEqual("pbkdf2-sha256".utf8),
            let iterations = Int(String(decoding: fields[2], as: UTF8.self)), (1...Self.maximumIterations).contains(iterations),
            let salt = Base64.decode(fields[3], .passlib), !salt.isEmpty,
            let hash = Base64.decode(fields[4], .passlib), hash.count >= 16
        else { return nil }
        self.iterations = iterations
        self.salt = salt
        self.hash = hash
    }

    private init(iterations: Int, salt: [UInt8], hash: [UInt8]) {
        self.iterations = iterations
        self.salt = salt
        self.hash = hash
    }

    /// A hash that no password matches (a random hash of a random salt),
    /// checked as slowly as a real one of `iterations` rounds.
    static func unmatchable(iterations: Int) -> PasswordHash {
        PasswordHash(iterations: iterations, salt: LibCrypto.randomBytes(16), hash: LibCrypto.randomBytes(32))
    }

    /// The hash of `password` with a new random 16-byte salt; `nil` for a
    /// count of iterations outside 1...``maximumIterations``.
    ///
    /// ```swift
    /// PasswordHash.make(password: password, iterations: 100_000).map { print($0) }
    /// ```
    public static func make(password: String, iterations: Int = defaultIterations) -> PasswordHash? {
        guard (1...maximumIterations).contains(iterations) else { return nil }
        let salt = LibCrypto.randomBytes(16)
        let hash = LibCrypto.pbkdf2SHA256(password: Array(password.utf8), salt: salt, iterations: iterations, length: 32)
        return PasswordHash(iterations: iterations, salt: salt, hash: hash)
    }

    /// Whether `password` is the one hashed, compared in constant time.
    ///
    /// ```swift
    /// guard hash.verifies(password: password) else { throw Unauthorized() }
    /// ```
    public func verifies(password: String) -> Bool {
        let derived = LibCrypto.pbkdf2SHA256(password: Array(password.utf8), salt: salt, iterations: iterations, length: hash.count)
        return LibCrypto.constantTimeEqual(derived, hash)
    }

    /// The hash as passlib writes it.
    public var description: String {
        "$pbkdf2-sha256$\(iterations)$\(Base64.encode(salt, .passlib))$\(Base64.encode(hash, .passlib))"
    }
}
