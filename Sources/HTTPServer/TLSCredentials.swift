internal import CGnuTLS
import Locking

extension HTTPServer {
    /// Why a TLS certificate, key or priority string cannot be used; says
    /// what GnuTLS found wrong.
    ///
    /// ```swift
    /// do { try server.reloadTLS(certificate) } catch { print(error) }   // "the private key does not match the certificate"
    /// ```
    public struct TLSError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Checks a GnuTLS priority string (``Configuration/tlsPriorities``)
    /// and names the part GnuTLS stopped at.
    static func checkTLSPriorities(_ priorities: String) throws(TLSError) {
        var cache: gnutls_priority_t?
        var rest = ""
        let status = priorities.withCString { text -> Int32 in
            var errorPosition: UnsafePointer<CChar>?
            let status = gnutls_priority_init(&cache, text, &errorPosition)
            if status != GNUTLS_E_SUCCESS, let errorPosition { rest = String(cString: errorPosition) }
            return status
        }
        if let cache { gnutls_priority_deinit(cache) }
        guard status == GNUTLS_E_SUCCESS else {
            let position = rest.isEmpty ? "" : " (at '\(rest)')"
            throw TLSError(description: "'\(priorities)' is not a usable GnuTLS priority string\(position): \(gnutlsMessage(status))")
        }
    }
}

/// GnuTLS's message for an error code.
private func gnutlsMessage(_ status: Int32) -> String {
    gnutls_strerror(status).map { String(cString: $0) } ?? "GnuTLS error \(status)"
}

/// One certificate chain and its private key, loaded into GnuTLS
/// credentials that handshakes read; the key is checked against the
/// certificate. Freed with the object.
///
/// ```swift
/// let credentials = try TLSCredentials(certificate)
/// ```
// `@unchecked Sendable`: the credentials are never changed after `init`,
// and GnuTLS lets any number of sessions read one credentials structure at once.
final class TLSCredentials: @unchecked Sendable {
    let handle: gnutls_certificate_credentials_t

    init(_ certificate: HTTPServer.TLSCertificate) throws(HTTPServer.TLSError) {
        var allocated: gnutls_certificate_credentials_t?
        guard gnutls_certificate_allocate_credentials(&allocated) == GNUTLS_E_SUCCESS, let allocated else {
            throw HTTPServer.TLSError(description: "GnuTLS cannot allocate certificate credentials")
        }
        var certificatePEM = Array(certificate.certificatePEM.utf8)
        var keyPEM = Array(certificate.privateKeyPEM.utf8)
        let status = certificatePEM.withUnsafeMutableBufferPointer { certificateBytes in
            keyPEM.withUnsafeMutableBufferPointer { keyBytes in
                var certificateDatum = gnutls_datum_t(data: certificateBytes.baseAddress, size: UInt32(certificateBytes.count))
                var keyDatum = gnutls_datum_t(data: keyBytes.baseAddress, size: UInt32(keyBytes.count))
                return gnutls_certificate_set_x509_key_mem(allocated, &certificateDatum, &keyDatum, GNUTLS_X509_FMT_PEM)
            }
        }
        guard status >= 0 else {
            gnutls_certificate_free_credentials(allocated)
            let reason =
                status == GNUTLS_E_CERTIFICATE_KEY_MISMATCH
                ? "the private key does not match the certificate" : "the certificate or its key cannot be loaded: \(gnutlsMessage(status))"
            throw HTTPServer.TLSError(description: reason)
        }
        handle = allocated
    }

    deinit {
        gnutls_certificate_free_credentials(handle)
    }
}

/// The credentials that new TLS connections present, which a reload
/// replaces while the server runs (``HTTPServer/reloadTLS(_:)``).
///
/// Each connection's session is given the current credentials when the
/// connection opens, before its handshake. A session keeps a pointer to
/// them until libmicrohttpd frees it, which happens after the connection's
/// close notification, so no moment before the daemons stop is known to be
/// safe for freeing replaced credentials: they stay allocated until the
/// store goes, with the daemons.
final class TLSCredentialStore: Sendable {
    /// The current credentials last; the earlier ones before them.
    private let loaded: Locked<[TLSCredentials]>

    init(_ credentials: TLSCredentials) {
        loaded = Locked([credentials])
    }

    /// New connections present `credentials` from now on.
    func replace(with credentials: TLSCredentials) {
        loaded.withLock { $0.append(credentials) }
    }

    /// Gives a new connection's TLS session the current credentials. (Should
    /// GnuTLS fail to, out of memory, the session keeps the credentials
    /// libmicrohttpd started with: the configuration's certificate.)
    func apply(to session: UnsafeMutableRawPointer) {
        loaded.withLock { loaded in
            // Made with one set of credentials, and only ever added to.
            _ = gnutls_credentials_set(OpaquePointer(session), GNUTLS_CRD_CERTIFICATE, UnsafeMutableRawPointer(loaded.last!.handle))
        }
    }
}
