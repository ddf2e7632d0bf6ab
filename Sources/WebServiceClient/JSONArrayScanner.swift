import Foundation

/// Finds the elements of a JSON array in a body that arrives in pieces,
/// so each can be decoded as soon as its last byte is there. It keeps only
/// the element being read, whatever the array's length.
///
/// It checks the array's frame (brackets, commas, strings, nesting); each
/// element's own syntax is the decoder's to check.
///
/// ```swift
/// var scanner = JSONArrayScanner()
/// scanner.append(Data(#"[{"a":1},{"#.utf8))
/// try scanner.next()   // {"a":1}
/// try scanner.next()   // nil: the second element is not complete yet
/// ```
struct JSONArrayScanner {
    private enum State {
        case beforeArray
        case beforeElement(first: Bool)
        case inElement
        case done
    }

    private var buffer: [UInt8] = []
    /// Where scanning resumes.
    private var position = 0
    /// Where the element being read starts.
    private var elementStart = 0
    private var state = State.beforeArray
    private var depth = 0
    private var inString = false
    private var escaped = false

    /// Whether the closing bracket has been read.
    var isComplete: Bool {
        if case .done = state { true } else { false }
    }

    mutating func append(_ data: Data) {
        // Drops what was consumed before growing, so the buffer holds about
        // one element and one received block.
        let consumed = min(position, elementStart)
        if consumed > 0, consumed >= buffer.count / 2 {
            buffer.removeSubrange(0..<consumed)
            position -= consumed
            elementStart -= consumed
        }
        buffer.append(contentsOf: data)
    }

    /// The next complete element's bytes, or `nil` until more arrives (or after the end).
    mutating func next() throws -> Data? {
        while position < buffer.count {
            let byte = buffer[position]
            switch state {
            case .beforeArray:
                if Self.isWhitespace(byte) { break }
                guard byte == UInt8(ascii: "[") else { throw ScanError(description: "The body is not a JSON array.") }
                state = .beforeElement(first: true)
            case .beforeElement(let first):
                if Self.isWhitespace(byte) { break }
                if byte == UInt8(ascii: "]"), first {
                    state = .done
                    break
                }
                elementStart = position
                depth = 0
                inString = false
                escaped = false
                state = .inElement
                continue  // scans this byte as the element's first
            case .inElement:
                if inString {
                    if escaped {
                        escaped = false
                    } else if byte == UInt8(ascii: "\\") {
                        escaped = true
                    } else if byte == UInt8(ascii: "\"") {
                        inString = false
                    }
                    break
                }
                switch byte {
                case UInt8(ascii: "\""):
                    inString = true
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"):
                    depth -= 1
                case UInt8(ascii: "]") where depth > 0:
                    depth -= 1
                case UInt8(ascii: ","), UInt8(ascii: "]"):
                    guard depth == 0 else { break }
                    var end = position
                    while end > elementStart, Self.isWhitespace(buffer[end - 1]) { end -= 1 }
                    let element = Data(buffer[elementStart..<end])
                    state = byte == UInt8(ascii: ",") ? .beforeElement(first: false) : .done
                    position += 1
                    elementStart = position
                    return element
                default:
                    break
                }
            case .done:
                if !Self.isWhitespace(byte) { throw ScanError(description: "The body goes on after its JSON array.") }
            }
            position += 1
            if case .inElement = state {} else { elementStart = position }
        }
        return nil
    }

    /// Checks, once the body is over, that the array was complete.
    func finish() throws {
        guard isComplete else { throw ScanError(description: "The body ended before its JSON array did.") }
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    struct ScanError: Error, CustomStringConvertible {
        var description: String
    }
}
