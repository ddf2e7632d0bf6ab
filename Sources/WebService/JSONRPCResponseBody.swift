import JSONStreaming

/// The response to a JSON-RPC request, written while the calls run: each
/// call is read from the body and run when the previous answer is
/// written, and a streamed result goes out as it is read. Pulled on a
/// worker thread (it blocks).
final class JSONRPCResponseBody: StreamingBody {
    private let router: WebServiceRouter
    private var calls: JSONRPCCalls
    private let isBatch: Bool
    private let outer: HTTPRequest
    private var isDone = false
    private var current: ConcatenatedBody?
    private var started = false
    private var answered = 0

    /// Whether any call is answered: not every one a notification.
    var answersSomething: Bool { calls.answersSomething }

    init(router: WebServiceRouter, calls: JSONRPCCalls, outer: HTTPRequest) {
        self.router = router
        self.calls = calls
        self.isBatch = calls.isBatch
        self.outer = outer
    }

    func write(into output: inout [UInt8]) throws -> Bool {
        if !started {
            started = true
            if isBatch { output.append(UInt8(ascii: "[")) }
        }
        while true {
            if let current {
                if try current.write(into: &output) { return true }
                self.current = nil
            }
            guard !isDone, let entry = calls.next() else {
                if isBatch, !isDone { output.append(UInt8(ascii: "]")) }
                isDone = true
                return false
            }
            guard let parts = router.answer(entry, outer: outer) else { continue }
            if answered > 0 { output.append(UInt8(ascii: ",")) }
            answered += 1
            current = ConcatenatedBody(parts)
        }
    }

    func close() {
        current?.close()
        current = nil
        isDone = true
    }
}
