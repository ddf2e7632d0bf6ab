/// Decides, from a request's line and header fields alone, whether the
/// server reads its body and calls the handler, and as whom: an
/// authenticator, say. The server asks before it reads a byte of the body,
/// so a request that will be refused costs no memory, no temporary file and
/// no wait for a body sent slowly.
///
/// The request handed to ``admit(_:)`` has no body and no form fields yet.
/// An admitted request reaches the handler with the ``Admission/admitted(role:)``
/// role set; a refused one is answered with the response given, and its
/// connection closed if it was sending a body.
///
/// ```swift
/// struct KeyCheck: RequestAdmission {
///     func admit(_ request: HTTPRequest) -> Admission {
///         request.headers["X-Key"] == "open sesame"
///             ? .admitted(role: nil) : .refused(HTTPError(.unauthorized, detail: "The key is wrong."))
///     }
/// }
/// HTTPServer.Configuration(admission: KeyCheck())
/// ```
public protocol RequestAdmission: Sendable {
    /// The decision for `request`; called on the connection's event
    /// loop, so it must not block: work that takes
    /// time answers ``Admission/pending(_:)``.
    func admit(_ request: HTTPRequest) -> Admission
}

/// What a ``RequestAdmission`` decided about a request.
public enum Admission: Sendable {
    /// The request goes on, acting as `role` (``HTTPRequest/role``); `nil`: no role.
    case admitted(role: String?)
    /// The request is answered with this problem at once; its body is never read.
    case refused(HTTPError)
    /// The decision takes work that may block or wait (a password check):
    /// `start` is called once, on the connection's event loop, with the
    /// function to call once with the decision, from any thread. The
    /// connection is set aside meanwhile.
    case pending(@Sendable (_ decide: @escaping @Sendable (Admission) -> Void) -> Void)
}
