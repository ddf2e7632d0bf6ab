import Foundation
import Locking
#if canImport(Glibc)
import Glibc
import HTTPTestClient
#endif

/// How one request ended, as the fault tests classify it.
struct Outcome: Sendable, CustomStringConvertible {
    enum Kind: Sendable, Equatable {
        /// 2xx with a complete body that parses as JSON (or no body).
        case ok
        /// 503 with `Retry-After`.
        case unavailable
        /// 504.
        case gatewayTimeout
        /// A chunked body cut off without its final chunk: the client knows it is incomplete.
        case abortedStream
        /// The connection was refused or closed before any byte of a response.
        case refused
        /// Anything else: a wrong status, a body that is not valid JSON, a hang.
        case failure(String)
    }

    var kind: Kind
    var path: String
    var status: Int
    var startedAt: Double
    var endedAt: Double
    var retryAfter: String?
    var bodyBytes: Int

    var elapsed: Double { endedAt - startedAt }

    var description: String {
        "\(path) → \(kind) (status \(status), \(bodyBytes) bytes, \(String(format: "%.3f", elapsed)) s at t=\(String(format: "%.3f", startedAt)))"
    }
}

/// Seconds on a monotonic clock, for timing requests against each other.
func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Requests `path` on a new connection and classifies the result.
/// `timeout` bounds every read: a server that hangs longer is a failure.
func fetch(port: Int, _ path: String, timeout: Int = 15) -> Outcome {
    let started = now()
    var outcome = Outcome(kind: .refused, path: path, status: 0, startedAt: started, endedAt: started, bodyBytes: 0)
    let client: TestClient
    do {
        client = try TestClient(port: port, timeoutSeconds: timeout)
    } catch {
        outcome.endedAt = now()
        return outcome
    }
    do {
        try client.sendRequest("GET", path)
        let response = try client.readResponse()
        outcome.status = response.status
        outcome.retryAfter = response.header("Retry-After")
        outcome.bodyBytes = response.body.count
        switch response.status {
        case 200..<300:
            if response.body.isEmpty || (try? JSONReader.value(response.body)) != nil {
                outcome.kind = .ok
            } else {
                outcome.kind = .failure("a \(response.status) body that is not valid JSON")
            }
        case 503 where outcome.retryAfter != nil:
            outcome.kind = .unavailable
        case 504:
            outcome.kind = .gatewayTimeout
        default:
            outcome.kind = .failure("status \(response.status): \(response.text.prefix(200))")
        }
    } catch TestClient.Failure.missingFinalChunk {
        outcome.kind = .abortedStream
    } catch TestClient.Failure.closed where !client.hasReceivedAnything {
        outcome.kind = .refused
    } catch TestClient.Failure.send(let code) where !client.hasReceivedAnything && (code == EPIPE || code == ECONNRESET) {
        outcome.kind = .refused
    } catch TestClient.Failure.receive(let code) where code == EAGAIN || code == EWOULDBLOCK {
        outcome.kind = .failure("no answer within \(timeout) s")
    } catch {
        outcome.kind = .failure("\(error)")
    }
    outcome.endedAt = now()
    return outcome
}

/// Runs `body(index)` on `count` new threads (not Swift's cooperative pool:
/// they block on sockets) and waits for all of them.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    group.wait()
}

/// Starts `body` on a new thread; the returned group is left when it ends.
func onNewThread(_ body: @escaping @Sendable () -> Void) -> DispatchGroup {
    let group = DispatchGroup()
    group.enter()
    Thread {
        body()
        group.leave()
    }.start()
    return group
}

/// Polls `condition` every 50 ms for up to `timeout` seconds.
func eventually(timeout: Double = 5, _ condition: () throws -> Bool) -> Bool {
    let deadline = now() + timeout
    repeat {
        if (try? condition()) == true { return true }
        usleep(50_000)
    } while now() < deadline
    return false
}

extension Shared {
    /// Appends `element` (computed before the lock is taken).
    func append<Element>(_ element: Element) where Value == [Element] {
        mutate { $0.append(element) }
    }
}
