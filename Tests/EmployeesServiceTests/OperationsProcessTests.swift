import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPTestClient
import Testing

/// What an operator sees of the `employees-server` process: `/metrics`,
/// request ids, the JSON log, readiness under full load, the drain on SIGTERM.
@Suite("employees-server operations", .serialized)
struct OperationsProcessTests {
    // MARK: - Metrics

    @Test("GET /metrics counts requests by route pattern, method and status, with durations, streamed bytes and the pool's figures")
    func metrics() throws {
        let server = try TestEnvironment.startEmployeesServer(["--port", "0", "--pool-size", "2", "--drain-seconds", "0"])
        defer { server.stop() }
        let port = try server.servingPort()
        #expect(try TestClient.request("GET", "/employees/10001", port: port).status == 200)
        #expect(try TestClient.request("GET", "/employees/10002", port: port).status == 200)
        #expect(try TestClient.request("GET", "/employees/abc", port: port).status == 400)
        #expect(try TestClient.request("GET", "/no/such/thing", port: port).status == 404)
        let list = try TestClient.request("GET", "/employees?limit=5000", port: port)
        #expect(list.status == 200)

        let reply = try TestClient.request("GET", "/metrics", port: port)
        #expect(reply.status == 200)
        #expect(reply.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
        let samples = Self.samples(reply.text)
        let employee = #"route="/employees/{employeeNumber}",method="GET""#
        #expect(samples[#"http_requests_total{\#(employee),status="200"}"#] == 2, "\(reply.text)")
        #expect(samples[#"http_requests_total{\#(employee),status="400"}"#] == 1)
        #expect(samples[#"http_requests_total{route="unmatched",method="*",status="404"}"#] == 1)
        #expect(samples[#"http_request_duration_seconds_count{\#(employee)}"#] == 3)
        #expect(samples[#"http_request_duration_seconds_bucket{\#(employee),le="+Inf"}"#] == 3)
        #expect((samples[#"http_request_duration_seconds_sum{\#(employee)}"#] ?? 0) > 0)
        #expect(samples[#"http_streamed_bytes_total{route="/employees",method="GET"}"#] == Double(list.body.count))
        #expect(samples[#"db_pool_max_connections{pool="primary"}"#] == 2)
        #expect(samples[#"db_pool_connections{pool="primary",state="in_use"}"#] != nil)
        #expect(samples[#"db_pool_connections{pool="primary",state="idle"}"#] != nil)
        #expect(samples[#"db_pool_waiting{pool="primary"}"#] == 0)
        #expect((samples[#"db_pool_acquire_duration_seconds_count{pool="primary"}"#] ?? 0) >= 1)
        // The single-employee lookups go through the pipeline loop.
        #expect((samples[#"db_pipeline_batch_size_count{pool="primary"}"#] ?? 0) >= 1)
        for name in [
            "http_requests_total", "http_request_duration_seconds", "http_streamed_bytes_total", "db_pool_connections",
            "db_pool_waiting", "db_pool_acquire_duration_seconds", "db_pipeline_batch_size", "db_errors_total",
        ] {
            #expect(reply.text.contains("# TYPE \(name) "), "\(name)")
        }
        server.send(SIGTERM)
        #expect(server.wait(timeout: 20) == 0)
    }

    @Test("a service's own swift-metrics counter is on /metrics beside the server's series")
    func userMetrics() throws {
        let server = try TestEnvironment.startEmployeesServer(["--port", "0", "--drain-seconds", "0"])
        defer { server.stop() }
        let port = try server.servingPort()
        #expect(try TestClient.request("GET", "/math/sum?a=2&b=4", port: port).status == 200)
        #expect(try TestClient.request("GET", "/math/sum?values=1&values=2&values=3", port: port).status == 200)
        let reply = try TestClient.request("GET", "/metrics", port: port)
        #expect(reply.text.contains("# TYPE math_summed_values_total counter\n"), "\(reply.text)")
        #expect(Self.samples(reply.text)["math_summed_values_total"] == 5)
        #expect(Self.samples(reply.text)[#"http_requests_total{route="/math/sum",method="GET",status="200"}"#] == 2)
    }

    @Test("--server-timing: every answer says how long its admission, its handler and the whole took; without it, none does")
    func serverTiming() throws {
        let server = try TestEnvironment.startEmployeesServer(["--port", "0", "--server-timing", "--drain-seconds", "0"])
        defer { server.stop() }
        let port = try server.servingPort()
        for path in ["/employees/10001", "/employees?limit=3", "/employees/abc", "/no/such/thing"] {
            let reply = try TestClient.request("GET", path, port: port)
            let timing = try #require(reply.header("Server-Timing"), "\(path)")
            #expect(timing.wholeMatch(of: /handler;dur=\d+\.\d, total;dur=\d+\.\d/) != nil, "\(path): \(timing)")
        }
        let plain = try TestEnvironment.startEmployeesServer(["--port", "0", "--drain-seconds", "0"])
        defer { plain.stop() }
        #expect(try TestClient.request("GET", "/employees/10001", port: try plain.servingPort()).header("Server-Timing") == nil)
    }

    @Test("--metrics off: no /metrics")
    func metricsOff() throws {
        let server = try TestEnvironment.startEmployeesServer(["--port", "0", "--metrics", "off", "--drain-seconds", "0"])
        defer { server.stop() }
        let port = try server.servingPort()
        #expect(try TestClient.request("GET", "/metrics", port: port).status == 404)
        #expect(try TestClient.request("GET", "/employees/10001", port: port).status == 200)
    }

    // MARK: - Request ids

    @Test("X-Request-Id: a valid one is echoed, an invalid or missing one generated; in the access log and every problem document")
    func requestIDs() throws {
        let server = try TestEnvironment.startEmployeesServer(["--port", "0", "--drain-seconds", "0"])
        defer { server.stop() }
        let port = try server.servingPort()

        let echoed = try TestClient.request("GET", "/employees/10001", port: port, headers: [("X-Request-Id", "trace-7f3a.b_c:1")])
        #expect(echoed.header("X-Request-Id") == "trace-7f3a.b_c:1")

        var generated: Set<String> = []
        for invalid in [nil, "", "has space", "quote\"d", String(repeating: "a", count: 129), "é"] {
            let reply = try TestClient.request(
                "GET", "/employees/10001", port: port, headers: invalid.map { [("X-Request-Id", $0)] } ?? [])
            let id = try #require(reply.header("X-Request-Id"))
            #expect(id != invalid && id.wholeMatch(of: /[0-9a-f]{8}-[0-9a-f]+/) != nil, "\(id)")
            generated.insert(id)
        }
        #expect(generated.count == 6, "each request its own id")
        #expect(
            try TestClient.request(
                "GET", "/employees/10001", port: port,
                headers: [("X-Request-Id", String(repeating: "b", count: 128))]
            ).header("X-Request-Id")
                == String(repeating: "b", count: 128))

        // Problem documents from the router (404, 405, 400 for a bad
        // argument) and from the HTTP layer (a request over the header
        // limit, refused before any handler).
        let problems = [
            try TestClient.request("GET", "/nowhere", port: port, headers: [("X-Request-Id", "p-404")]),
            try TestClient.request("DELETE", "/departments", port: port, headers: [("X-Request-Id", "p-405")]),
            try TestClient.request("GET", "/employees/abc", port: port, headers: [("X-Request-Id", "p-400")]),
            try TestClient.request(
                "GET", "/employees/10001", port: port,
                headers: [("X-Request-Id", "p-431"), ("X-Large", String(repeating: "x", count: 20_000))]),
        ]
        for (reply, status) in zip(problems, [404, 405, 400, 431]) {
            #expect(reply.status == status, "\(reply)")
            #expect(reply.header("Content-Type") == "application/problem+json")
            #expect(reply.object["requestId"] as? String == "p-\(status)", "\(reply)")
            #expect(reply.header("X-Request-Id") == "p-\(status)")
        }
        // libmicrohttpd's own refusal (a header far over the pool): its id
        // is generated; with the patches off it is libmicrohttpd's HTML
        // page, without one (``TestPatches``).
        let refused = try TestClient.request(
            "GET", "/employees/10001", port: port,
            headers: [("X-Large", String(repeating: "x", count: 64_000))])
        #expect(refused.status == 431, "\(refused)")
        if TestPatches.resolved.replacesErrorPages {
            let refusedID = try #require(refused.object["requestId"] as? String)
            #expect(refused.header("X-Request-Id") == refusedID)
        } else {
            #expect(refused.header("X-Request-Id") == nil, "\(refused)")
        }

        server.send(SIGTERM)
        #expect(server.wait(timeout: 20) == 0)
        #expect(server.printed.contains("GET /employees/10001 200 "))
        #expect(server.printed.contains("requestId=trace-7f3a.b_c:1"), "\(server.printed.suffix(2000))")
        #expect(server.printed.contains("requestId=p-404"))
    }

    @Test("--log-format json: one JSON object per line; the access line's fields are members")
    func jsonLog() throws {
        let server = try TestEnvironment.startEmployeesServer(["--port", "0", "--log-format", "json", "--drain-seconds", "0"])
        defer { server.stop() }
        let port = try server.servingPort()
        #expect(try TestClient.request("GET", "/employees/10001", port: port, headers: [("X-Request-Id", "json-1")]).status == 200)
        server.send(SIGTERM)
        #expect(server.wait(timeout: 20) == 0)
        let lines = server.printed.split(separator: "\n")
        #expect(lines.count >= 3)
        var access: [String: Any]?
        for line in lines {
            let object = try #require(try JSONReader.value(line.utf8) as? [String: Any], "\(line)")
            #expect(object["time"] is String && object["level"] is String && object["message"] is String, "\(line)")
            if object["requestId"] as? String == "json-1" { access = object }
        }
        let line = try #require(access, "\(server.printed)")
        #expect(line["method"] as? String == "GET")
        #expect(line["path"] as? String == "/employees/10001")
        #expect(line["status"] as? Int == 200)
        #expect((line["bytes"] as? Int ?? 0) > 0)
        #expect(line["durationMs"] is Double || line["durationMs"] is Int)
    }

    // MARK: - Health and rollouts

    @Test(
        "readiness answers at once with every connection busy: 204 while connections come back, 503 once none has for the acquire timeout")
    func readinessUnderFullLoad() throws {
        let server = try TestEnvironment.startEmployeesServer([
            "--port", "0", "--pool-size", "1", "--acquire-timeout", "2", "--drain-seconds", "0",
        ])
        defer { server.stop() }
        let port = try server.servingPort()
        #expect(try TestClient.request("GET", "/health/ready", port: port).status == 204)

        // The one connection streams the whole table to a client that does
        // not read: it stays in use.
        let holder = try TestClient(port: port, receiveBufferSize: 16 << 10, timeoutSeconds: 60)
        try holder.sendRequest("GET", "/employees")
        #expect(try holder.readHeadAndFirstBytes(1024) == 200)

        var started = Date()
        let ready = try TestClient.request("GET", "/health/ready", port: port)
        #expect(ready.status == 204, "a connection came back just before: \(ready)")
        #expect(Date().timeIntervalSince(started) < 1, "readiness did not wait for the pool")

        // A request that needs a connection (a list with details) waits the acquire timeout (2 s) in vain.
        let detailed = try TestClient.request("GET", "/employees?limit=1&details=titles", port: port)
        #expect(detailed.status == 503, "the pool is exhausted: \(detailed)")
        started = Date()
        let stale = try TestClient.request("GET", "/health/ready", port: port)
        #expect(stale.status == 503, "\(stale)")
        #expect(stale.header("Retry-After") == "1")
        #expect(Date().timeIntervalSince(started) < 1, "readiness did not wait for the pool")
    }

    @Test("SIGTERM: readiness turns 503 for --drain-seconds while requests are still served, then the process stops")
    func drainOnSIGTERM() throws {
        let server = try TestEnvironment.startEmployeesServer(["--port", "0", "--drain-seconds", "2"])
        defer { server.stop() }
        let port = try server.servingPort()
        #expect(try TestClient.request("GET", "/health/ready", port: port).status == 204)
        let signalled = Date()
        server.send(SIGTERM)
        #expect(eventually(within: 1.5) { (try? TestClient.request("GET", "/health/ready", port: port).status) == 503 })
        let ready = try TestClient.request("GET", "/health/ready", port: port)
        #expect(ready.status == 503)
        #expect(ready.object["detail"] as? String == "The server is stopping.")
        #expect(try TestClient.request("GET", "/employees/10001", port: port).status == 200, "still serving while draining")
        #expect(try TestClient.request("GET", "/health/live", port: port).status == 204)
        #expect(server.wait(timeout: 20) == 0, "\(server.printed.suffix(2000))")
        #expect(Date().timeIntervalSince(signalled) >= 1.9, "the listener stayed open for the drain")
        #expect(throws: (any Error).self) { try TestClient.request("GET", "/health/live", port: port) }
        #expect(server.printed.contains("draining for 2"), "\(server.printed.suffix(2000))")
    }

    @Test("A second SIGTERM during the drain exits at once")
    func secondSIGTERMExitsAtOnce() throws {
        let server = try TestEnvironment.startEmployeesServer(["--port", "0", "--drain-seconds", "60"])
        defer { server.stop() }
        let port = try server.servingPort()
        server.send(SIGTERM)
        #expect(eventually(within: 2) { (try? TestClient.request("GET", "/health/ready", port: port).status) == 503 })
        let second = Date()
        server.send(SIGTERM)
        let status = server.wait(timeout: 5)
        #expect(status == 128 + SIGTERM)
        #expect(Date().timeIntervalSince(second) < 2)
    }

    // MARK: - Support

    /// The value of each sample line of a Prometheus exposition, by series.
    static func samples(_ text: String) -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    /// Whether `condition` holds within `seconds`, polled every 20 ms.
    func eventually(within seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return condition()
    }
}
