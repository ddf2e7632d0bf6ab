#if canImport(Glibc)
import Glibc
#endif
import Authentication
import HTTPServer
import Logging
import PostgreSQL
import WebService

// MARK: - Authentication and TLS from the options

extension ServerOptions {
    /// The authenticator the options describe, its files read; `nil` when
    /// authentication is off (no scheme and no anonymous role).
    func authenticator(realm: String, logger: Logger) throws -> Authenticator? {
        guard let configuration = try authenticatorConfiguration(realm: realm) else { return nil }
        return try Authenticator(configuration, logger: logger)
    }

    /// The authentication the options describe, its files (password file,
    /// role map, token keys or key set) read now: at start, and again on SIGHUP.
    func authenticatorConfiguration(realm: String) throws -> Authenticator.Configuration? {
        guard authenticates else { return nil }
        var configuration = Authenticator.Configuration(realm: realm, passwordChecks: passwordChecks)
        if !authBasicFile.isEmpty {
            var hashes: [String: PasswordHash] = [:]
            for (user, text) in try reading("auth-basic-file", { try CredentialFile(path: authBasicFile).entries }) {
                guard let hash = PasswordHash(text) else {
                    throw UsageError(description: "--auth-basic-file \(authBasicFile): the entry of \(user) is not a $pbkdf2-sha256$ hash")
                }
                hashes[user] = hash
            }
            configuration.passwords = .hashes(hashes)
        } else if authBasicPostgres {
            let conninfo = conninfo
            configuration.passwords = .check { user, password in
                try Connection.verifiesLogin(conninfo: conninfo, user: user, password: password)
            }
        }
        configuration.tokens = try tokenVerifier()
        if !roleMapFile.isEmpty { configuration.roles = try reading("role-map") { try CredentialFile(path: roleMapFile).entries } }
        if !anonymousRole.isEmpty { configuration.anonymousRole = anonymousRole }
        return configuration
    }

    /// The checker of bearer tokens, its key file (secret, public key or
    /// key set) read; `nil` without one.
    private func tokenVerifier() throws -> JSONWebTokenVerifier? {
        let option: String
        let key: () throws -> JSONWebTokenVerifier.Key
        if !jwtSecretFile.isEmpty {
            option = "jwt-secret-file"
            key = { [jwtSecretFile] in
                var secret = Array(try CredentialFile.text(at: jwtSecretFile).utf8)
                while let last = secret.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { secret.removeLast() }
                return .secret(secret)
            }
        } else if !jwtPublicKeyFile.isEmpty {
            option = "jwt-public-key-file"
            key = { [jwtPublicKeyFile] in .publicKeyPEM(try CredentialFile.text(at: jwtPublicKeyFile)) }
        } else if !jwtJWKSFile.isEmpty {
            option = "jwt-jwks-file"
            key = { [jwtJWKSFile] in .keySet(try CredentialFile.text(at: jwtJWKSFile)) }
        } else {
            return nil
        }
        // The table let only a valid path in.
        let roleClaim = JSONWebTokenVerifier.ClaimPath(jwtRoleClaim) ?? .role
        return try reading(option) {
            try JSONWebTokenVerifier(
                key: try key(), audience: jwtAudience.isEmpty ? nil : jwtAudience, issuer: jwtIssuer.isEmpty ? nil : jwtIssuer,
                roleClaim: roleClaim)
        }
    }

    /// What the OpenAPI document says of the authentication these options
    /// turn on: basic with a password file or PostgreSQL's logins, bearer
    /// JSON Web Tokens with a secret, a public key or a key set, requests without
    /// credentials allowed with an anonymous role; `nil` when no scheme is
    /// on (an anonymous role alone ignores credentials).
    func openAPISecurity(publicPathPrefixes: [String]) -> OpenAPISecurity? {
        var schemes: [OpenAPISecurity.Scheme] = []
        if !authBasicFile.isEmpty || authBasicPostgres { schemes.append(.basic) }
        if checksTokens { schemes.append(.bearerJWT) }
        guard !schemes.isEmpty else { return nil }
        return OpenAPISecurity(schemes: schemes, allowsAnonymous: !anonymousRole.isEmpty, publicPathPrefixes: publicPathPrefixes)
    }

    /// A warning when the file of `--tls-key` is open to its group or to
    /// others (mode & 0o077); `nil` when only its owner has access, or the
    /// file is missing (reading it then fails, with its own error).
    func tlsKeyPermissionWarning() -> String? {
        guard !tlsKeyFile.isEmpty else { return nil }
        var status = stat()
        guard stat(tlsKeyFile, &status) == 0 else { return nil }
        let mode = status.st_mode & 0o777
        guard mode & 0o077 != 0 else { return nil }
        return
            "The TLS private key \(tlsKeyFile) is open to its group or other users (mode \(String(mode, radix: 8))): run chmod 600 \(tlsKeyFile)"
    }

    /// The GnuTLS priority string: the first line of `--tls-priorities-file`
    /// that is not blank or a `#` comment, read now (at start, and again on
    /// SIGHUP), else `--tls-priorities`.
    func tlsPriorityString() throws -> String {
        guard !tlsPrioritiesFile.isEmpty else { return tlsPriorities }
        // A priority string has no spaces: each line's first word, blank lines left out.
        let words = try CredentialFile.text(at: tlsPrioritiesFile).split(whereSeparator: \.isNewline)
            .compactMap { $0.split(whereSeparator: \.isWhitespace).first }
        guard let priorities = words.first(where: { !$0.hasPrefix("#") }) else {
            throw UsageError(description: "\(tlsPrioritiesFile) holds no GnuTLS priority string")
        }
        return String(priorities)
    }

    /// The HTTPS certificate and key of `--tls-cert` and `--tls-key`; `nil` without them.
    func tlsCertificate() throws -> HTTPServer.TLSCertificate? {
        guard !tlsCertificateFile.isEmpty else { return nil }
        return HTTPServer.TLSCertificate(
            certificatePEM: try reading("tls-cert") { try CredentialFile.text(at: tlsCertificateFile) },
            privateKeyPEM: try reading("tls-key") { try CredentialFile.text(at: tlsKeyFile) })
    }

    /// What `body` reads for `--option`, its error naming the option.
    private func reading<Value>(_ option: String, _ body: () throws -> Value) throws -> Value {
        do {
            return try body()
        } catch {
            throw UsageError(description: "--\(option): \(error)")
        }
    }
}

// MARK: - hash-password

/// `hash-password [user] [--iterations N]`: reads a password from standard
/// input (its first line) and prints a password file entry, `user:hash`,
/// or the hash alone without a user.
func hashPasswordCommand(_ arguments: ArraySlice<String>) -> Int32 {
    var user: String?
    var iterations = PasswordHash.defaultIterations
    var arguments = arguments
    while let argument = arguments.popFirst() {
        if argument == "--iterations", let value = arguments.popFirst().flatMap(Int.init),
            (1...PasswordHash.maximumIterations).contains(value)
        {
            iterations = value
        } else if !argument.hasPrefix("-"), user == nil, !argument.contains(":") {
            user = argument
        } else {
            return 64
        }
    }
    guard let password = readLine(strippingNewline: true), !password.isEmpty else { return 64 }
    let hash = PasswordHash.make(password: password, iterations: iterations)
    print(user.map { "\($0):\(hash)" } ?? "\(hash)")
    return 0
}
