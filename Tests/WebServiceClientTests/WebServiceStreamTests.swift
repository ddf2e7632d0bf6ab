import Foundation
import Testing
@testable import WebServiceClient

/// Lists decoded element by element as they arrive.
@Suite("WebServiceClient streams")
struct WebServiceStreamTests {
    @Test func aSearchStreamsEveryMatchInOrder() async throws {
        let client = try ClientTestEnvironment.sharedClient()
        var numbers: [Int] = []
        for try await employee in client.stream("/employees", arguments: ["name": "bal*"], of: EmployeeSummary.self) {
            #expect(employee.firstName.lowercased().hasPrefix("bal") || employee.lastName.lowercased().hasPrefix("bal"))
            numbers.append(employee.employeeNumber)
        }
        let expected = try ClientTestEnvironment.integer(
            "SELECT count(*)::int FROM employees WHERE lower(first_name) LIKE 'bal%' OR lower(last_name) LIKE 'bal%'")
        #expect(numbers.count == expected)
        #expect(numbers == numbers.sorted())
    }

    @Test func anEmptyListEndsAtOnce() async throws {
        let client = try ClientTestEnvironment.sharedClient()
        var count = 0
        for try await _ in client.stream("/employees", arguments: ["name": "no such name*"], of: EmployeeSummary.self) { count += 1 }
        #expect(count == 0)
    }

    @Test func anErrorStatusThrowsBeforeTheFirstElement() async throws {
        let client = try ClientTestEnvironment.sharedClient()
        let error = await #expect(throws: WebServiceError.self) {
            for try await _ in client.stream("/employees", arguments: ["limit": "many"], of: EmployeeSummary.self) {}
        }
        #expect(error?.status == 400)
        #expect(error?.parameter == "limit")
    }

    @Test func leavingTheLoopEarlyStopsTheTransfer() async throws {
        let client = try ClientTestEnvironment.sharedClient()
        var count = 0
        for try await _ in client.stream("/employees", of: EmployeeSummary.self) {
            count += 1
            if count == 10 { break }
        }
        #expect(count == 10)
        // The server is still there for the next call.
        #expect(try await client.get("/math/sum", arguments: ["a": 1, "b": 1], as: Double.self) == 2)
    }

    @Test func scannerFindsElementsWhateverTheBlocks() throws {
        let json = #" [ {"a":"x,]}\"y","b":[1,{"c":[]}]} , 2,"three" ,[4,[5]],null ] "#
        let expected = [#"{"a":"x,]}\"y","b":[1,{"c":[]}]}"#, "2", #""three""#, "[4,[5]]", "null"]
        for blockSize in [1, 2, 3, 7, json.utf8.count] {
            var scanner = JSONArrayScanner()
            var found: [String] = []
            let bytes = Array(json.utf8)
            for start in stride(from: 0, to: bytes.count, by: blockSize) {
                scanner.append(Data(bytes[start..<min(start + blockSize, bytes.count)]))
                while let element = try scanner.next() { found.append(String(decoding: element, as: UTF8.self)) }
            }
            try scanner.finish()
            #expect(found == expected, "blocks of \(blockSize)")
        }
        var truncated = JSONArrayScanner()
        truncated.append(Data("[1,2".utf8))
        while try truncated.next() != nil {}
        #expect(throws: (any Error).self) { try truncated.finish() }
        var notAnArray = JSONArrayScanner()
        notAnArray.append(Data(#"{"a":1}"#.utf8))
        #expect(throws: (any Error).self) { try notAnArray.next() }
    }
}

/// All 300,024 employees through the client, in constant memory. Apart from
/// the parallel run (the Makefile's memory tests), where other suites'
/// buffers would count as growth.
@Suite("WebServiceClient stream memory", .serialized)
struct WebServiceStreamMemoryTests {
    /// The consumer pauses for two seconds early on, so that the network
    /// runs ahead of it: what waits must not pile up in memory either.
    @Test func allEmployeesStreamWhileClientMemoryStaysFlat() async throws {
        let client = try ClientTestEnvironment.sharedClient()
        let expected = try ClientTestEnvironment.integer("SELECT count(*)::int FROM employees")
        var count = 0
        var last = 0
        var residentAfterWarmUp = 0
        var peak = 0
        let started = Date()
        for try await employee in client.stream("/employees", of: EmployeeSummary.self) {
            #expect(employee.employeeNumber > last)
            last = employee.employeeNumber
            count += 1
            if count == 1_000 { residentAfterWarmUp = ClientTestEnvironment.memory() }
            if count == 2_000 { try await Task.sleep(for: .seconds(2)) }
            if count % 2_000 == 0 { peak = max(peak, ClientTestEnvironment.memory()) }
        }
        let growth = peak - residentAfterWarmUp
        print(
            "stream: \(count) employees in \(Date().timeIntervalSince(started)) s; RSS after warm-up \(residentAfterWarmUp) kB, peak \(peak) kB, growth \(growth) kB"
        )
        #expect(count == expected)
        // The list is about 18 MB of JSON.
        #expect(growth < 10_000, "resident memory grew by \(growth) kB")
    }
}
