import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The URLSession under a client, and its delegate: each task's events go
/// to the ``TransferHandler`` registered for it.
///
/// A delegate rather than `data(for:)` and `bytes(for:)`: on Linux,
/// FoundationNetworking's `bytes(for:)` hands over the body only once it
/// is complete, so a streamed list would sit whole in memory. The data
/// delegate receives each block as it arrives, and suspending the task
/// (which pauses libcurl's transfer) stops the reading while the consumer
/// catches up: the socket's buffers, then TCP, hold the server back.
final class SessionTransport: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // `@unchecked Sendable`: `handlers` and `reporters` are touched only with `lock` held;
    // `session` is set once in `init`.
    private let lock = NSLock()
    private var handlers: [Int: any TransferHandler] = [:]
    private var reporters: [Int: ProgressReporter] = [:]
    private(set) var session: URLSession!

    init(configuration: URLSessionConfiguration) {
        super.init()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "WebServiceClient.SessionTransport"
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
    }

    /// Ends the session: tasks under way finish, and the session releases its delegate.
    func invalidate() {
        session.finishTasksAndInvalidate()
    }

    /// Starts `task` with `handler` receiving its events, and `progress` its progress.
    func start(
        _ task: URLSessionTask, handler: any TransferHandler, progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) {
        lock.withLock {
            handlers[task.taskIdentifier] = handler
            reporters[task.taskIdentifier] = progress.map(ProgressReporter.init)
        }
        task.resume()
    }

    /// A task for `prepared`: an upload from its body file when it has one.
    func task(for prepared: PreparedRequest) -> URLSessionTask {
        if let bodyFile = prepared.bodyFile {
            session.uploadTask(with: prepared.urlRequest, fromFile: bodyFile)
        } else {
            session.dataTask(with: prepared.urlRequest)
        }
    }

    private func handler(for task: URLSessionTask) -> (any TransferHandler)? {
        lock.withLock { handlers[task.taskIdentifier] }
    }

    private func reporter(for task: URLSessionTask) -> ProgressReporter? {
        lock.withLock { reporters[task.taskIdentifier] }
    }

    // MARK: - URLSessionDataDelegate

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        if let response = response as? HTTPURLResponse { reporter(for: dataTask)?.head(response) }
        handler(for: dataTask)?.received(response as? HTTPURLResponse)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        reporter(for: dataTask)?.received(data.count)
        handler(for: dataTask)?.received(data)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        reporter(for: task)?.sent(totalBytesSent, of: totalBytesExpectedToSend)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (handler, reporter) = lock.withLock {
            (handlers.removeValue(forKey: task.taskIdentifier), reporters.removeValue(forKey: task.taskIdentifier))
        }
        reporter?.completed(error)
        if let response = task.response as? HTTPURLResponse { handler?.received(response) }
        handler?.completed(error)
    }

    /// A 401 with an HTTP challenge (`WWW-Authenticate: Basic …`) is the
    /// call's answer, for its credentials and hooks to act on: the client's
    /// credentials travel in the header fields, never as `URLCredential`.
    /// URLSession would answer the challenge instead; FoundationNetworking
    /// cancels the task for any disposition short of a credential, and
    /// without this method waits forever. So the task's handler completes
    /// at once with the challenge's response head (the body, a problem
    /// document, is lost with the cancelled task), and the challenge is
    /// declined. Other challenges (server trust) get the default handling.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let httpMethods = [NSURLAuthenticationMethodHTTPBasic, NSURLAuthenticationMethodHTTPDigest, NSURLAuthenticationMethodDefault]
        guard httpMethods.contains(challenge.protectionSpace.authenticationMethod),
            let response = challenge.failureResponse as? HTTPURLResponse
                ?? task.originalRequest?.url.flatMap({ HTTPURLResponse(url: $0, statusCode: 401, httpVersion: nil, headerFields: [:]) })
        else {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        let handler = lock.withLock {
            reporters[task.taskIdentifier] = nil
            return handlers.removeValue(forKey: task.taskIdentifier)
        }
        handler?.received(response)
        handler?.completed(nil)
        completionHandler(.cancelAuthenticationChallenge, nil)
    }

    /// Redirects are followed as ``redirect(_:from:)`` rules: without the
    /// credentials to another origin, never from https to http. A refused
    /// redirect ends the call with its error at once; the task then completes
    /// with the redirect's own answer, which no handler receives.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        guard let origin = response.url ?? task.currentRequest?.url else {
            completionHandler(CredentialFields.removed(from: request))
            return
        }
        switch Self.redirect(request, from: origin) {
        case .success(let followed):
            completionHandler(followed)
        case .failure(let error):
            let handler = lock.withLock {
                reporters[task.taskIdentifier] = nil
                return handlers.removeValue(forKey: task.taskIdentifier)
            }
            handler?.completed(error)
            completionHandler(nil)
        }
    }
}

/// Receives one task's events, on the session's delegate queue.
protocol TransferHandler: AnyObject, Sendable {
    /// The response head (may come again at completion: only the first counts).
    func received(_ response: HTTPURLResponse?)
    func received(_ data: Data)
    func completed(_ error: (any Error)?)
}

extension HTTPURLResponse {
    /// The header fields as strings.
    var headerFields: [String: String] {
        var fields: [String: String] = [:]
        for (name, value) in allHeaderFields {
            fields["\(name)"] = "\(value)"
        }
        return fields
    }
}

// MARK: - A whole body

/// Collects a body whole, for the answers that are one value.
final class BufferingHandler: TransferHandler, @unchecked Sendable {
    // `@unchecked Sendable`: the fields are touched only with `lock` held.
    private let lock = NSLock()
    private var response: HTTPURLResponse?
    private var data = Data()
    private var continuation: CheckedContinuation<(HTTPURLResponse, Data), any Error>?

    init(_ continuation: CheckedContinuation<(HTTPURLResponse, Data), any Error>) {
        self.continuation = continuation
    }

    func received(_ response: HTTPURLResponse?) {
        lock.withLock { if self.response == nil { self.response = response } }
    }

    func received(_ data: Data) {
        lock.withLock { self.data.append(data) }
    }

    func completed(_ error: (any Error)?) {
        let (continuation, response, data) = lock.withLock {
            defer { self.continuation = nil }
            return (self.continuation, self.response, self.data)
        }
        if let error {
            continuation?.resume(throwing: error)
        } else if let response {
            continuation?.resume(returning: (response, data))
        } else {
            continuation?.resume(throwing: URLError(.badServerResponse))
        }
    }
}

extension SessionTransport {
    /// Runs `prepared` to its end, its progress to `progress`; the response
    /// head and the whole body. Cancelling the calling task cancels the
    /// transfer. The body file stays (a retry sends it again): the caller removes it.
    func data(
        for prepared: PreparedRequest, progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws -> (HTTPURLResponse, Data) {
        let task = task(for: prepared)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                start(task, handler: BufferingHandler(continuation), progress: progress)
                // Cancelled before the handler was registered: `onCancel` came too early.
                if Task.isCancelled { task.cancel() }
            }
        } onCancel: {
            task.cancel()
        }
    }
}
