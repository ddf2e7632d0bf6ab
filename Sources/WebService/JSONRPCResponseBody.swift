import JSONStreaming

/// The response to a JSON-RPC request, written while the calls run: each
/// call runs when the previous answer is written, and a streamed result
/// goes out as it is read. Pulled on a worker thread (it blocks).
final class JSONRPCResponseBody: StreamingBody {
    private let router: WebServiceRouter
    private let entries: [JSONRPCEntry]
    private let isBatch: Bool
    private let outer: HTTPRequest
    private var next = 0
    private var current: ConcatenatedBody?
    private var started = false
    private var answered = 0

    init(router: WebServiceRouter, entries: [JSONRPCEntry], isBatch: Bool, outer: HTTPRequest) {
        self.router = router
        self.entries = entries
        self.isBatch = isBatch
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
            guard next < entries.count else {
                if isBatch { output.append(UInt8(ascii: "]")) }
                return false
            }
            let entry = entries[next]
            next += 1
            guard let parts = router.answer(entry, outer: outer) else { continue }
            if answered > 0 { output.append(UInt8(ascii: ",")) }
            answered += 1
            current = ConcatenatedBody(parts)
        }
    }

    func close() {
        current?.close()
        current = nil
        next = entries.count
    }
}
