import Foundation
import HTTPServer
import Testing
import WebServiceClient

/// The retry hook: `Retry-After` honoured (the server's 429 after wrong
/// passwords, a 503 with an HTTP-date), idempotent methods only, bounded
/// attempts.
@Suite("WebServiceClient retry hook", .serialized)
struct RetryHookTests {
    @Test func a429AfterWrongPasswordsIsSentAgainAfterItsRetryAfter() async throws {
        // Each attempt on a fresh server: once the right password has been
        // admitted, the server remembers it and admits it again without
        // looking at the address's wait.
        var lines: [String] = []
        var start = Date()
        attempts: for attempt in 0..<4 {
            let server = try AuthenticatedServer()
            /// The status a wrong guess is answered with: 401, or on a
            /// machine too loaded to keep the test's timing, another (a 429
            /// from a wait not yet passed, a 503 from admission), after
            /// which the attempt starts again on a fresh server.
            func guessWrong(_ guess: String) async -> Int? {
                let guesser = WebServiceClient(
                    baseURL: server.baseURL,
                    configuration: .init(credentials: .basic(username: "alice", password: guess)))
                do {
                    _ = try await guesser.get("/departments", as: [Department].self)
                    return 200
                } catch {
                    return (error as? WebServiceError)?.status
                }
            }
            // Wrong passwords from this address, each after the wait the one
            // before set: none for the first four, then 1 s, 2 s, 4 s... The
            // last sets a wait of 4 s, twice as long on each attempt after a
            // machine too slow to send the right password within it.
            let guesses = 6 + attempt
            for guess in 0..<guesses {
                let wait = guess < 4 ? 0 : Double(1 << (guess - 4)) + 0.2
                try await Task.sleep(for: .seconds(wait))
                let status = await guessWrong("guess \(guess)")
                #expect(status != 200, "a wrong password was admitted")
                if status != 401 {
                    print("attempt \(attempt): guess \(guess) answered \(status.map(String.init) ?? "no status"), not 401")
                    continue attempts
                }
            }
            // The right password, with the retry hook: a 429, then, once its
            // Retry-After has passed, the answer.
            let log = LogLines()
            let client = WebServiceClient(
                baseURL: server.baseURL,
                configuration: .init(
                    credentials: .basic(username: "alice", password: AuthenticatedServer.password),
                    hooks: [
                        .retry(RetryPolicy(maxAttempts: 3, maxDelay: 60)),
                        .response { _, response in
                            log.append(
                                "\(response.status) Retry-After: \(response.header("Retry-After") ?? "none") at \(Date().timeIntervalSince1970)"
                            )
                            return response
                        },
                    ]))
            start = Date()
            do {
                let departments = try await client.get("/departments", as: [Department].self)
                #expect(departments.count == 9)
            } catch {
                print("attempt \(attempt): \(error)")
            }
            lines = log.all
            if lines.count == 2 { break }
        }
        print(lines.joined(separator: "\n"))
        #expect(lines.count == 2, "\(lines)")
        let wait = try #require(lines.first?.firstMatch(of: #/^429 Retry-After: (\d+) at /#).flatMap { Double($0.1) })
        #expect(lines.last?.hasPrefix("200") == true)
        #expect(Date().timeIntervalSince(start) >= wait)
    }

    @Test func a503WithAnHTTPDateIsSentAgainWhenItSays() async throws {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let server = try ScriptedServer([
            {
                var response = HTTPResponse(status: .serviceUnavailable, text: "restarting")
                // Whole seconds: 2 to 3 s from now.
                response.headers["Retry-After"] = formatter.string(from: Date(timeIntervalSinceNow: 3))
                return response
            },
            { HTTPResponse(status: .ok, json: Array("42".utf8)) },
        ])
        defer { server.stop() }
        let client = WebServiceClient(baseURL: server.baseURL, configuration: .init(hooks: [.retry()]))
        let start = Date()
        #expect(try await client.get("/answer", as: Int.self) == 42)
        #expect(server.requests == 2)
        #expect(Date().timeIntervalSince(start) >= 2)
    }

    @Test func aRetryAfterLongerThanTheLongestWaitIsTheAnswer() async throws {
        let server = try ScriptedServer([
            {
                var response = HTTPResponse(status: .tooManyRequests, text: "later")
                response.headers["Retry-After"] = "3600"
                return response
            }
        ])
        defer { server.stop() }
        let client = WebServiceClient(baseURL: server.baseURL, configuration: .init(hooks: [.retry()]))
        await #expect {
            _ = try await client.get("/answer", as: Int.self)
        } throws: { ($0 as? WebServiceError)?.status == 429 && ($0 as? WebServiceError)?.headers["Retry-After"] == "3600" }
        #expect(server.requests == 1)
    }

    @Test func postIsNeverSentAgainAndAttemptsAreBounded() async throws {
        let server = try ScriptedServer([{ HTTPResponse(status: .serviceUnavailable, text: "busy") }])
        defer { server.stop() }
        let client = WebServiceClient(
            baseURL: server.baseURL,
            configuration: .init(
                hooks: [.retry(RetryPolicy(maxAttempts: 4, baseDelay: 0.05))]))
        await #expect(throws: WebServiceError.self) { _ = try await client.post("/answer", arguments: ["a": 1], as: Int.self) }
        #expect(server.requests == 1)
        await #expect(throws: WebServiceError.self) { _ = try await client.put("/answer", arguments: ["a": 1], as: Int.self) }
        #expect(server.requests == 1 + 4)
    }

    @Test func anUnreachableServerIsTriedAgain() async throws {
        let log = LogLines()
        let port = try ClientTestEnvironment.closedPort()
        let client = WebServiceClient(
            baseURL: URL(string: "http://127.0.0.1:\(port)")!,
            configuration: .init(
                hooks: [.retry(RetryPolicy(maxAttempts: 3, baseDelay: 0.05)), .logging(log.append)]))
        await #expect {
            _ = try await client.get("/departments", as: [Department].self)
        } throws: { ($0 as? WebServiceError)?.code == .transport }
        #expect(log.all.count == 3, "\(log.all)")
    }

    @Test func retryAfterReadsSecondsAndHTTPDates() {
        let now = Date(timeIntervalSince1970: 1_445_412_470)  // Wed, 21 Oct 2015 07:27:50 GMT
        #expect(RetryPolicy.retryAfter("120", now: now) == 120)
        #expect(RetryPolicy.retryAfter("Wed, 21 Oct 2015 07:28:00 GMT", now: now) == 10)
        #expect(RetryPolicy.retryAfter("Wed, 21 Oct 2015 07:27:00 GMT", now: now) == 0)
        #expect(RetryPolicy.retryAfter("soon", now: now) == nil)
        #expect(RetryPolicy.retryAfter("-5", now: now) == nil)
    }
}
