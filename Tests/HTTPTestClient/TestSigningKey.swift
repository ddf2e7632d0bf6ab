import Foundation

/// A key that signs JSON Web Tokens for a test, made there by the `openssl`
/// command: an RSA key (RS256), a P-256 key (ES256), an Ed25519 key
/// (EdDSA), or a shared secret (HS256); with its public half as a PEM file
/// and as a JSON Web Key, as an identity provider publishes it.
///
/// ```swift
/// let key = try TestSigningKey(.es256)
/// let jwks = TestSigningKey.keySet([try key.jsonWebKey(kid: "k1")])
/// let token = try key.token(header: ["kid": "k1"], claims: ["role": "authenticated", "aud": "authenticated"])
/// ```
public struct TestSigningKey: Sendable {
    /// The algorithm the key signs with, as JSON Web Signatures name it.
    public enum Algorithm: String, Sendable {
        case hs256 = "HS256"
        case rs256 = "RS256"
        case es256 = "ES256"
        case edDSA = "EdDSA"
    }

    public let algorithm: Algorithm
    /// The private key's PEM file (the secret's bytes, for HS256).
    public let privateKeyFile: String
    /// The public key's PEM file; the secret's file for HS256.
    public let publicKeyFile: String

    static let openssl = "/usr/bin/openssl"

    /// A new key of `algorithm` in files of its own.
    public init(_ algorithm: Algorithm) throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "signing-key-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        self.algorithm = algorithm
        privateKeyFile = directory + "/private.pem"
        publicKeyFile = directory + "/public.pem"
        let generation: [String] =
            switch algorithm {
            case .hs256: []
            case .rs256: ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"]
            case .es256: ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"]
            case .edDSA: ["-algorithm", "ed25519"]
            }
        if algorithm == .hs256 {
            let secret = Data((0..<48).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
            try secret.write(toFile: privateKeyFile, atomically: true, encoding: .utf8)
            try secret.write(toFile: publicKeyFile, atomically: true, encoding: .utf8)
        } else {
            _ = try ToolProcess.run(Self.openssl, ["genpkey"] + generation + ["-out", privateKeyFile])
            _ = try ToolProcess.run(Self.openssl, ["pkey", "-in", privateKeyFile, "-pubout", "-out", publicKeyFile])
        }
    }

    /// The public key as a JSON Web Key (RFC 7517), with `kid` and `alg`
    /// when given, and `use: sig`; the secret as an `oct` key for HS256.
    public func jsonWebKey(kid: String?, alg: String? = nil) throws -> [String: Any] {
        var key: [String: Any] = ["use": "sig"]
        if let kid { key["kid"] = kid }
        if let alg { key["alg"] = alg }
        switch algorithm {
        case .hs256:
            key["kty"] = "oct"
            key["k"] = Self.base64URL(try Data(contentsOf: URL(filePath: privateKeyFile)))
        case .rs256:
            let text = String(
                decoding: try ToolProcess.run(Self.openssl, ["pkey", "-pubin", "-in", publicKeyFile, "-noout", "-text"]), as: UTF8.self)
            let modulus = try ToolProcess.run(Self.openssl, ["rsa", "-pubin", "-in", publicKeyFile, "-noout", "-modulus"])
            let hex = String(decoding: modulus, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(
                of: "Modulus=", with: "")
            guard let exponent = text.firstMatch(of: /Exponent: \d+ \(0x([0-9a-fA-F]+)\)/)?.1 else {
                throw ToolProcess.Failure(description: "openssl printed no exponent: \(text)")
            }
            key["kty"] = "RSA"
            key["n"] = Self.base64URL(Self.bytes(hex: hex))
            key["e"] = Self.base64URL(Self.bytes(hex: String(exponent)))
        case .es256:
            let point = try publicKeyDER().suffix(65)  // 0x04 x y, at the end of the SubjectPublicKeyInfo
            key["kty"] = "EC"
            key["crv"] = "P-256"
            key["x"] = Self.base64URL(Data(point.dropFirst().prefix(32)))
            key["y"] = Self.base64URL(Data(point.suffix(32)))
        case .edDSA:
            key["kty"] = "OKP"
            key["crv"] = "Ed25519"
            key["x"] = Self.base64URL(Data(try publicKeyDER().suffix(32)))
        }
        return key
    }

    /// A key set's JSON text, `{"keys": [...]}`.
    public static func keySet(_ keys: [[String: Any]]) -> String {
        String(decoding: (try? JSONSerialization.data(withJSONObject: ["keys": keys], options: [.sortedKeys])) ?? Data(), as: UTF8.self)
    }

    /// A token of `claims`, its header `alg` this key's (unless `header`
    /// says otherwise) with the members of `header`, signed with this key.
    public func token(header: [String: Any] = [:], claims: [String: Any]) throws -> String {
        let header = ["alg": algorithm.rawValue, "typ": "JWT"].merging(header) { $1 }
        let signed =
            Self.base64URL(try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])) + "."
            + Self.base64URL(try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys]))
        return signed + "." + Self.base64URL(try signature(of: Data(signed.utf8)))
    }

    /// This key's signature of `message`, as JSON Web Signatures write it
    /// (r‖s for ES256, not openssl's DER).
    public func signature(of message: Data) throws -> Data {
        switch algorithm {
        case .hs256:
            let secret = try Data(contentsOf: URL(filePath: privateKeyFile))
            let hex = secret.map { String(format: "%02x", $0) }.joined()
            return try ToolProcess.run(
                Self.openssl, ["dgst", "-sha256", "-binary", "-mac", "HMAC", "-macopt", "hexkey:\(hex)"], input: message)
        case .rs256:
            return try ToolProcess.run(Self.openssl, ["dgst", "-sha256", "-binary", "-sign", privateKeyFile], input: message)
        case .es256:
            let der = try ToolProcess.run(Self.openssl, ["dgst", "-sha256", "-binary", "-sign", privateKeyFile], input: message)
            return try Self.rawSignature(der: der)
        case .edDSA:
            // openssl signs Ed25519 in one go, from a file.
            let file = FileManager.default.temporaryDirectory.appending(path: "signed-\(UUID().uuidString)").path
            try message.write(to: URL(filePath: file))
            defer { try? FileManager.default.removeItem(atPath: file) }
            return try ToolProcess.run(Self.openssl, ["pkeyutl", "-sign", "-rawin", "-inkey", privateKeyFile, "-in", file])
        }
    }

    /// The public key's SubjectPublicKeyInfo in DER.
    private func publicKeyDER() throws -> Data {
        try ToolProcess.run(Self.openssl, ["pkey", "-pubin", "-in", publicKeyFile, "-outform", "DER"])
    }

    /// r‖s, 32 bytes each, of an ECDSA signature in DER (`SEQUENCE { INTEGER r, INTEGER s }`).
    static func rawSignature(der: Data) throws -> Data {
        let bytes = [UInt8](der)
        var index = 2  // SEQUENCE and its one-byte length: a P-256 signature is under 128 bytes
        var raw = Data()
        for _ in 0..<2 {
            guard index + 2 <= bytes.count, bytes[index] == 0x02 else { throw ToolProcess.Failure(description: "not an ECDSA signature") }
            let length = Int(bytes[index + 1])
            let integer = bytes[(index + 2)..<(index + 2 + length)].drop { $0 == 0 }
            raw += Data(repeating: 0, count: 32 - integer.count) + Data(integer)
            index += 2 + length
        }
        return raw
    }

    /// Base64url without padding (RFC 7515, section 2).
    public static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func bytes(hex: String) -> Data {
        var data = Data()
        var text = Substring(hex.count % 2 == 1 ? "0" + hex : hex)
        while !text.isEmpty {
            data.append(UInt8(text.prefix(2), radix: 16) ?? 0)
            text = text.dropFirst(2)
        }
        return data
    }
}
