/// A streaming body made of parts sent one after the other: fixed bytes
/// and other streaming bodies.
///
/// Each inner body is closed as soon as it is complete, so resources it
/// holds (a database connection) are given back before the next part
/// starts; ``close()`` closes whatever has not been closed yet.
///
/// ```swift
/// let body = ConcatenatedBody([
///     .bytes(Array(#"{"department":"d005","employees":"#.utf8)),
///     .stream(employeesAdapter),
///     .bytes(Array("}".utf8)),
/// ])
/// ```
public final class ConcatenatedBody: StreamingBody {
    /// One part of a ``ConcatenatedBody``.
    public enum Part {
        case bytes([UInt8])
        case stream(any StreamingBody)
    }

    private var parts: [Part]
    private var next = 0

    public init(_ parts: [Part]) {
        self.parts = parts
    }

    public func write(into output: inout [UInt8]) throws -> Bool {
        guard next < parts.count else { return false }
        switch parts[next] {
        case .bytes(let bytes):
            output.append(contentsOf: bytes)
            finishPart()
        case .stream(let body):
            if try !body.write(into: &output) {
                body.close()
                finishPart()
            }
        }
        return next < parts.count
    }

    private func finishPart() {
        parts[next] = .bytes([])
        next += 1
    }

    public func close() {
        for index in next..<parts.count {
            if case .stream(let body) = parts[index] { body.close() }
            parts[index] = .bytes([])
        }
        next = parts.count
    }
}
