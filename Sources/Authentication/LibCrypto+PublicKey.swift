internal import CLibCrypto

/// A public key that checks the signatures of one JSON Web Signature
/// algorithm (RFC 7518, RFC 8037): an RSA key of 2048 bits or more checks
/// RS256 (RSASSA-PKCS1-v1_5 with SHA-256), a P-256 key ES256 (ECDSA with
/// SHA-256, the signature as the 64 bytes r‖s), an Ed25519 key EdDSA. Read
/// from PEM (`-----BEGIN PUBLIC KEY-----`) or from a JSON Web Key's members.
///
/// Owns its `EVP_PKEY`, freed when it goes, and also when making it fails.
/// Checking only reads the key, which OpenSSL allows from several threads
/// at once, hence `@unchecked Sendable`.
///
/// ```swift
/// let key = try PublicKey(pem: pemText)
/// key.verifies(signature: signature, of: Array("header.claims".utf8))
/// ```
final class PublicKey: @unchecked Sendable {
    /// The kind of key, which fixes the one algorithm it checks.
    enum Kind: Sendable {
        /// RS256.
        case rsa
        /// ES256.
        case p256
        /// EdDSA (Ed25519).
        case ed25519
    }

    /// Why a key cannot check signatures.
    struct InvalidKey: Error, CustomStringConvertible {
        let description: String
    }

    /// The fewest bits of an RSA modulus (RFC 7518, section 3.3).
    static let leastRSABits: Int32 = 2048

    let kind: Kind
    private let key: OpaquePointer

    /// The RSA, P-256 or Ed25519 public key of a PEM text.
    convenience init(pem: String) throws(InvalidKey) {
        var text = Array(pem.utf8)
        let read: OpaquePointer? = text.withUnsafeMutableBytes { bytes in
            guard let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(bytes.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PUBKEY(bio, nil, nil, nil)
        }
        ERR_clear_error()
        guard let read else { throw InvalidKey(description: "not a PEM public key (-----BEGIN PUBLIC KEY-----)") }
        let kind: Kind
        switch EVP_PKEY_get_base_id(read) {
        case EVP_PKEY_RSA: kind = .rsa
        case EVP_PKEY_EC where Self.groupName(read) == "prime256v1": kind = .p256
        case EVP_PKEY_ED25519: kind = .ed25519
        default:
            EVP_PKEY_free(read)
            throw InvalidKey(description: "not an RSA, P-256 or Ed25519 key")
        }
        try self.init(owning: read, kind: kind)
    }

    /// The RSA key of a JSON Web Key's `n` and `e` (big-endian bytes).
    convenience init(rsaModulus modulus: [UInt8], exponent: [UInt8]) throws(InvalidKey) {
        let made = clibcrypto_rsa_public_key(modulus, Int32(modulus.count), exponent, Int32(exponent.count))
        ERR_clear_error()
        guard !modulus.isEmpty, !exponent.isEmpty, let made else { throw InvalidKey(description: "n and e do not make an RSA key") }
        try self.init(owning: made, kind: .rsa)
    }

    /// The P-256 key of a JSON Web Key's `x` and `y` (32 bytes each), once
    /// the point is found on the curve.
    convenience init(p256X x: [UInt8], y: [UInt8]) throws(InvalidKey) {
        guard x.count == 32, y.count == 32 else { throw InvalidKey(description: "x and y of a P-256 key have 32 bytes each") }
        let point = [0x04] + x + y  // uncompressed (SEC 1, section 2.3.3)
        let made = clibcrypto_p256_public_key(point, point.count)
        ERR_clear_error()
        guard let made else { throw InvalidKey(description: "x and y are not a point of P-256") }
        try self.init(owning: made, kind: .p256)
    }

    /// The Ed25519 key of a JSON Web Key's `x` (32 bytes).
    convenience init(ed25519 x: [UInt8]) throws(InvalidKey) {
        guard x.count == 32, let made = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, x, x.count) else {
            ERR_clear_error()
            throw InvalidKey(description: "x of an Ed25519 key has 32 bytes")
        }
        try self.init(owning: made, kind: .ed25519)
    }

    /// Takes `key` over, freeing it at once when it is an RSA key too short to trust.
    private init(owning key: OpaquePointer, kind: Kind) throws(InvalidKey) {
        if kind == .rsa, EVP_PKEY_get_bits(key) < Self.leastRSABits {
            let bits = EVP_PKEY_get_bits(key)
            EVP_PKEY_free(key)
            throw InvalidKey(description: "an RSA key of \(bits) bits; RS256 needs \(Self.leastRSABits) or more (RFC 7518, section 3.3)")
        }
        self.key = key
        self.kind = kind
    }

    deinit {
        EVP_PKEY_free(key)
    }

    /// Whether `signature` is this key's signature of `message`, in the
    /// form JSON Web Signatures write it.
    func verifies(signature: [UInt8], of message: some Collection<UInt8>) -> Bool {
        let signature: [UInt8]? = kind == .p256 ? Self.derSignature(rawP256: signature) : signature
        guard let signature, let context = EVP_MD_CTX_new() else { return false }
        defer {
            EVP_MD_CTX_free(context)
            ERR_clear_error()
        }
        // Ed25519 hashes inside the algorithm: no digest is named.
        let digest = kind == .ed25519 ? nil : EVP_sha256()
        guard EVP_DigestVerifyInit(context, nil, digest, nil, key) == 1 else { return false }
        let message = Array(message)
        return EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
    }

    // MARK: - libcrypto's forms

    /// The DER form OpenSSL checks (`SEQUENCE { INTEGER r, INTEGER s }`) of
    /// a JWS ES256 signature, r‖s in 32 bytes each (RFC 7518, section
    /// 3.4); `nil` for any other length.
    private static func derSignature(rawP256 signature: [UInt8]) -> [UInt8]? {
        guard signature.count == 64, let pair = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(pair) }
        let r = BN_bin2bn(signature, 32, nil)
        let s = Array(signature[32...]).withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, 32, nil) }
        guard let r, let s, ECDSA_SIG_set0(pair, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        let length = i2d_ECDSA_SIG(pair, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return i2d_ECDSA_SIG(pair, &cursor)
        }
        return written == length ? der : nil
    }

    /// The name of an EC key's curve (`prime256v1` for P-256).
    private static func groupName(_ key: OpaquePointer) -> String? {
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 else { return nil }
        return String(decoding: name[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
