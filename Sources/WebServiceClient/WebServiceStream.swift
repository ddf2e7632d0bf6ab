import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The elements of a JSON array answer, decoded one by one as they arrive:
/// the array is never whole in memory, so a list of any length streams in
/// constant memory. The call starts when iteration does; leaving the loop
/// early cancels it.
///
/// ```swift
/// for try await employee in client.stream("/employees", arguments: ["name": "bal*"], of: EmployeeSummary.self) {
///     print(employee.employeeNumber, employee.lastName)
/// }
/// ```
///
/// An error status throws ``WebServiceError`` before the first element; a
/// body cut off by the server throws `.transport` where it stops. Streams
/// do not use the cache.
public struct WebServiceStream<Element: Decodable>: AsyncSequence {
    let client: WebServiceClient
    let request: WebServiceRequest

    public func makeAsyncIterator() -> Iterator {
        Iterator(client: client, request: request)
    }

    public struct Iterator: AsyncIteratorProtocol {
        private let client: WebServiceClient
        private let request: WebServiceRequest
        private var transfer: StreamingTransfer?
        private var started = false
        private var scanner = JSONArrayScanner()
        private let decoder = WebServiceDecoding.decoder()
        private var finished = false

        init(client: WebServiceClient, request: WebServiceRequest) {
            self.client = client
            self.request = request
        }

        public mutating func next() async throws -> Element? {
            guard !finished else { return nil }
            do {
                if !started {
                    started = true
                    switch try await client.startStreaming(request) {
                    case .transfer(let started): transfer = started
                    case .body(let body): scanner.append(body)
                    }
                }
                while true {
                    if let element = try scanner.next() {
                        do {
                            return try decoder.decode(Element.self, from: element)
                        } catch {
                            throw WebServiceError(.decoding, detail: "An element is not a \(Element.self): \(error)", underlying: error)
                        }
                    }
                    guard let transfer, let block = try await transfer.next() else {
                        try scanner.finish()
                        finished = true
                        self.transfer = nil
                        return nil
                    }
                    scanner.append(block)
                }
            } catch {
                finished = true
                transfer?.cancel()
                transfer = nil
                if let error = error as? JSONArrayScanner.ScanError {
                    throw WebServiceError(.decoding, detail: error.description)
                }
                throw WebServiceError.transfer(error)
            }
        }
    }
}
