internal import CLibCrypto

/// The few primitives of OpenSSL's libcrypto that authentication needs,
/// over byte arrays. With `PublicKey` (LibCrypto+PublicKey.swift), the
/// only code that touches the C library.
enum LibCrypto {
    /// SHA-256 of `data`.
    static func sha256(_ data: some Collection<UInt8>) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        Array(data).withUnsafeBytes { bytes in
            _ = EVP_Digest(bytes.baseAddress, bytes.count, &digest, &length, EVP_sha256(), nil)
        }
        return digest
    }

    /// HMAC-SHA-256 of `data` under `key`.
    static func hmacSHA256(key: [UInt8], _ data: some Collection<UInt8>) -> [UInt8] {
        var mac = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        Array(data).withUnsafeBytes { bytes in
            key.withUnsafeBytes { key in
                _ = HMAC(
                    EVP_sha256(), key.baseAddress, Int32(key.count), bytes.bindMemory(to: UInt8.self).baseAddress,
                    bytes.count, &mac, &length)
            }
        }
        return mac
    }

    /// PBKDF2 with HMAC-SHA-256 (RFC 8018): `length` bytes derived from
    /// `password` and `salt` in `iterations` rounds.
    static func pbkdf2SHA256(password: [UInt8], salt: [UInt8], iterations: Int, length: Int) -> [UInt8] {
        var key = [UInt8](repeating: 0, count: length)
        password.withUnsafeBytes { password in
            salt.withUnsafeBytes { salt in
                _ = PKCS5_PBKDF2_HMAC(
                    password.bindMemory(to: CChar.self).baseAddress, Int32(password.count),
                    salt.bindMemory(to: UInt8.self).baseAddress, Int32(salt.count), Int32(iterations), EVP_sha256(),
                    Int32(length), &key)
            }
        }
        return key
    }

    /// `count` bytes from the system's cryptographically secure generator.
    static func randomBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        // `count` is the code's (16 or 32); the generator fails only when the system has no entropy source.
        precondition(RAND_bytes(&bytes, Int32(count)) == 1, "libcrypto's random generator failed")
        return bytes
    }

    /// Whether `a` and `b` are equal, in a time that depends only on their
    /// lengths (never on where they first differ).
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBytes { a in b.withUnsafeBytes { b in CRYPTO_memcmp(a.baseAddress, b.baseAddress, a.count) == 0 } }
    }
}
