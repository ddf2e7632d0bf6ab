import Foundation
import HTTPTestClient
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What a request asks for costs the server in step with its size: sixteen
/// times the filters, `in.()` items or JSON-RPC calls cost about sixteen
/// times as much, never the square (each bound name looked up among all
/// the others made 16,000 filters cost a minute of CPU). Filters and items
/// come in the query string, whose request line the server caps at 16 KB:
/// as many as fit (1,120 filters, 2,560 items) against a sixteenth of them;
/// batches 16,000 calls against 1,000. Measured in the server's own CPU
/// time (`/proc/PID/stat`), which PostgreSQL's planning does not count
/// in, as the median of five tries; past 20 times for 16 times the size,
/// the test fails. The limits are raised for the test: by default, 16,000
/// calls are refused (``RequestLimitAttackTests``). Run alone in `make
/// test` (its name ends with `CostGrowsLinearly`): other suites' load would count.
@Suite("What a request costs grows with it, no faster", .serialized)
struct RequestCostTests {
    /// The server's CPU time so far, in seconds.
    static func cpuSeconds(of pid: pid_t) -> Double {
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        // After the command's closing parenthesis: state is field 3, utime 14 and stime 15.
        let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The server's CPU time for `request`, the median of five tries, each
    /// the mean of `repeats` requests (to measure a small one to the tick).
    static func median(pid: pid_t, repeats: Int, _ request: () throws -> TestClient.Response) throws -> Double {
        var tries: [Double] = []
        for _ in 0..<5 {
            let start = cpuSeconds(of: pid)
            for _ in 0..<repeats {
                let reply = try request()
                #expect(reply.status == 200, "\(reply.text.prefix(300))")
            }
            tries.append((cpuSeconds(of: pid) - start) / Double(repeats))
        }
        return tries.sorted()[2]
    }

    @Test("16 times the filters, in.() items, batch calls: at most 24 times the server's CPU")
    func filtersListsAndBatchesCostGrowsLinearly() throws {
        let run = try ProcessTests.start([
            "serve", "--services", Environment.servicesFolder, "--port", "0", "--drain-seconds", "0",
            "--max-arguments", "20000", "--max-filters", "20000", "--max-list-items", "20000", "--max-batch-calls", "20000",
            "--max-jsonrpc-bytes", "10000000",
        ])
        defer { run.stop() }
        let port = try run.servingPort()
        func list(_ query: String) throws -> TestClient.Response {
            try TestClient.request("GET", "/employees?" + query + "&limit=1", port: port)
        }
        // `<>`: PostgreSQL plans many of them in step with their number (not so `>=`, whose pairs its planner compares).
        let filters = { (count: Int) in Array(repeating: "emp_no=neq.1", count: count).joined(separator: "&") }
        let items = { (count: Int) in "emp_no=in.(" + Array(repeating: "10001", count: count).joined(separator: ",") + ")" }
        // Each call of a method that does not exist: the batch's reading, calls and answers, without a database.
        let call = #"{"jsonrpc":"2.0","method":"employees.nothing","params":{"employeeNumber":"abc"},"id":1}"#
        let batch = { (count: Int) in Array(("[" + Array(repeating: call, count: count).joined(separator: ",") + "]").utf8) }
        let cases: [(name: String, small: Int, request: (Int) throws -> TestClient.Response)] = [
            ("filters", 70, { try list(filters($0)) }),
            ("in.() items", 160, { try list(items($0)) }),
            (
                "batch calls", 1_000,
                {
                    try TestClient.request("POST", "/jsonrpc", port: port, headers: [("Content-Type", "application/json")], body: batch($0))
                }
            ),
        ]
        for (name, count, request) in cases {
            // Once each first: what is done once (a statement prepared and kept) is not the request's cost.
            _ = try request(count)
            _ = try request(16 * count)
            let small = max(try Self.median(pid: run.pid, repeats: 128) { try request(count) }, 0.0001)
            let large = try Self.median(pid: run.pid, repeats: 8) { try request(16 * count) }
            print("\(name): \(small) s of CPU for \(count), \(large) s for \(16 * count) (\(large / small) times)")
            // Linear is 16 times; a cost growing with the square would be 256. The margin is for
            // the large request's bigger working set (caches, page faults): a batch of 16,000
            // calls measured 16 to 21.5 times one of 1,000 in runs of the same code.
            #expect(large < 24 * small, "\(name): \(small) s of CPU for \(count), \(large) s for \(16 * count)")
        }
    }
}
