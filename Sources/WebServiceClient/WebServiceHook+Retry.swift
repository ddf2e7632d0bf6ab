import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// When and how often ``WebServiceHook/retry(_:)`` sends a request again.
///
/// ```swift
/// let policy = RetryPolicy(maxAttempts: 5, baseDelay: 0.2, maxDelay: 10)
/// let client = WebServiceClient(baseURL: url, configuration: .init(hooks: [.retry(policy)]))
/// ```
public struct RetryPolicy: Sendable {
    /// The most times a request is sent, the first included (1: never again).
    public var maxAttempts: Int
    /// The wait before the second attempt, in seconds; it doubles with each
    /// further attempt, and each wait is drawn at random below its bound
    /// ("full jitter"), so that clients failed together do not come back together.
    public var baseDelay: TimeInterval
    /// The longest wait, in seconds. A `Retry-After` longer than this ends
    /// the retries: the answer that asked for it is returned.
    public var maxDelay: TimeInterval
    /// The statuses worth another attempt: a server busy, restarting, or
    /// asking for patience.
    public var statuses: Set<Int>
    /// The methods that may be sent again: those whose repetition has the
    /// effect of one request (RFC 9110 §9.2.2). POST and PATCH never are.
    public var methods: Set<String>

    public init(
        maxAttempts: Int = 3, baseDelay: TimeInterval = 0.5, maxDelay: TimeInterval = 30,
        statuses: Set<Int> = [408, 429, 500, 502, 503, 504],
        methods: Set<String> = ["GET", "HEAD", "PUT", "DELETE", "OPTIONS"]
    ) {
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.statuses = statuses
        self.methods = methods
    }

    /// The wait before attempt `attempt + 1` (`attempt` from 1) after
    /// `response` (`nil` after a transfer failure); `nil`: no more attempts.
    func delay(after attempt: Int, response: WebServiceResponse?, now: Date = Date()) -> TimeInterval? {
        guard attempt < maxAttempts else { return nil }
        if let value = response?.header("Retry-After") {
            // Honoured as written: the server knows when it will serve again.
            guard let wait = Self.retryAfter(value, now: now), wait <= maxDelay else { return nil }
            return wait
        }
        let bound = min(maxDelay, baseDelay * pow(2, Double(attempt - 1)))
        return Double.random(in: 0...max(bound, 0))
    }

    /// The seconds a `Retry-After` value asks for: a number of seconds, or
    /// an HTTP-date (`Wed, 21 Oct 2015 07:28:00 GMT`, RFC 9110 §10.2.3) from
    /// `now`; a date past is no wait. `nil` when the value is neither.
    ///
    /// ```swift
    /// RetryPolicy.retryAfter("120")  // 120
    /// ```
    public static func retryAfter(_ value: String, now: Date = Date()) -> TimeInterval? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(text) { return seconds >= 0 ? TimeInterval(seconds) : nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        guard let date = formatter.date(from: text) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}

extension WebServiceHook {
    /// A hook that sends an idempotent request again after a status of
    /// `policy.statuses` or a failed transfer (the server unreachable, no
    /// answer in time), waiting as `Retry-After` says, else an exponential
    /// backoff with jitter; at most `policy.maxAttempts` times in all.
    /// Cancelling the call ends the wait at once. After the last attempt,
    /// its answer or error is the call's.
    ///
    /// Put it before ``logging(_:)`` to log every attempt, after it to log
    /// each call once.
    ///
    /// ```swift
    /// let client = WebServiceClient(baseURL: url, configuration: .init(hooks: [.retry(RetryPolicy(maxAttempts: 4))]))
    /// ```
    public static func retry(_ policy: RetryPolicy = RetryPolicy()) -> WebServiceHook {
        WebServiceHook { request, next in
            guard policy.methods.contains(request.httpMethod ?? "GET") else { return try await next(request) }
            var attempt = 1
            while true {
                let delay: TimeInterval
                do {
                    let response = try await next(request)
                    guard policy.statuses.contains(response.status),
                        let wait = policy.delay(after: attempt, response: response)
                    else { return response }
                    delay = wait
                } catch let error as WebServiceError where error.code == .transport || error.code == .timedOut {
                    guard let wait = policy.delay(after: attempt, response: nil) else { throw error }
                    delay = wait
                }
                do {
                    try await Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000))
                } catch {
                    throw WebServiceError.transfer(error)
                }
                attempt += 1
            }
        }
    }
}
