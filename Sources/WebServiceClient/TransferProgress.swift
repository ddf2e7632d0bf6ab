import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How far a call's upload or download is: the bytes done, and the total
/// when it is known. A request's ``WebServiceRequest/progress`` receives it.
///
/// ```swift
/// var request = WebServiceRequest(.post, "/photos", arguments: ["file": photoURL])
/// request.progress = { progress in
///     if progress.direction == .upload, let fraction = progress.fractionCompleted { print(Int(fraction * 100), "%") }
/// }
/// ```
///
/// - An upload's total is the body's length. A multipart body is written
///   to disk first, so its length is known before the first byte goes.
/// - A download's total is its `Content-Length`; `nil` for an answer
///   streamed without one (a long list) or compressed in transit (the
///   bytes counted are the decompressed ones, which the length does not
///   describe). When such a download ends, a last report carries the
///   total, then known.
/// - Reports come in order, one per block sent or received, on a queue of
///   the client's: a handler that updates a user interface hands the value
///   to the main actor. A call sent more than once (a retry, a renewed
///   credential) reports each attempt from zero.
public struct TransferProgress: Sendable, Hashable, CustomStringConvertible {
    /// Which way the bytes go.
    public enum Direction: Sendable, Hashable {
        /// The request's body, to the server.
        case upload
        /// The answer's body, from the server.
        case download
    }

    public var direction: Direction
    /// Bytes sent or received so far.
    public var completedBytes: Int64
    /// All the bytes to send or receive, when known.
    public var totalBytes: Int64?

    public init(direction: Direction, completedBytes: Int64, totalBytes: Int64?) {
        self.direction = direction
        self.completedBytes = completedBytes
        self.totalBytes = totalBytes
    }

    /// The part done, from 0 to 1, when the total is known.
    public var fractionCompleted: Double? {
        guard let totalBytes, totalBytes > 0 else { return totalBytes == 0 ? 1 : nil }
        return min(1, Double(completedBytes) / Double(totalBytes))
    }

    public var description: String {
        "\(direction == .upload ? "sent" : "received") \(completedBytes)" + (totalBytes.map { " of \($0)" } ?? "") + " bytes"
    }
}

/// Counts one task's bytes and reports them to the call's handler.
///
/// `@unchecked Sendable`: its counts are touched only on the session's
/// delegate queue, which runs one event at a time.
final class ProgressReporter: @unchecked Sendable {
    private let report: @Sendable (TransferProgress) -> Void
    private var received: Int64 = 0
    private var expected: Int64?
    private var receivedAny = false

    init(_ report: @escaping @Sendable (TransferProgress) -> Void) {
        self.report = report
    }

    func sent(_ bytes: Int64, of total: Int64) {
        report(TransferProgress(direction: .upload, completedBytes: bytes, totalBytes: total >= 0 ? total : nil))
    }

    func head(_ response: HTTPURLResponse) {
        let isEncoded = response.value(forHTTPHeaderField: "Content-Encoding").map { $0.lowercased() != "identity" } ?? false
        expected = response.expectedContentLength >= 0 && !isEncoded ? response.expectedContentLength : nil
        received = 0
    }

    func received(_ count: Int) {
        received += Int64(count)
        receivedAny = true
        report(TransferProgress(direction: .download, completedBytes: received, totalBytes: expected))
    }

    /// The end of a download whose total was not known: now it is.
    func completed(_ error: (any Error)?) {
        guard error == nil, receivedAny, expected == nil else { return }
        report(TransferProgress(direction: .download, completedBytes: received, totalBytes: received))
    }
}
