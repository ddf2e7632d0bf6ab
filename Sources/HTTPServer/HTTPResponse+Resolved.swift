extension HTTPResponse {
    /// The response once its deferred work is done: blocking work run
    /// here, promises and tasks waited for, until a response with a status
    /// and a body (possibly a stream) is there. For a handler that answers
    /// from other responses (a JSON-RPC call is a request to a route);
    /// on a thread that may block, never an event loop.
    ///
    /// ```swift
    /// let inner = router.respond(to: request).resolved()
    /// ```
    public func resolved() -> HTTPResponse {
        RequestProcessor.resolve(self)
    }
}
