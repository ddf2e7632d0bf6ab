import Foundation

/// The params of a JSON-RPC call: by name (a dictionary literal, as
/// ``RequestArguments`` are written) or by position (an array literal),
/// either one of any ``RequestArgument`` values or, with
/// `byName(_:)-swift.type.method` and ``byPosition(_:)``, of any
/// `Encodable` values (a record as one param, say).
///
/// ```swift
/// try await rpc.call("math.getSum", params: ["a": 2, "b": 4], as: Double.self)   // by name
/// try await rpc.call("math.getSum", params: [2, 4], as: Double.self)              // by position
/// try await rpc.call("echo.postItems", params: .byPosition([Item(id: 7, name: "Tea", tags: [])]), as: Item.self)
/// ```
///
/// On our servers, elements by position are bound to the method's params
/// in the order `rpc.discover` lists them; a `nil` leaves its param out.
public struct JSONRPCParams: Sendable, ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral {
    enum Param: Sendable {
        case argument(RequestArgumentValue)
        case encodable(any Encodable & Sendable)
    }

    enum Storage: Sendable {
        case byName([(name: String, value: Param)])
        case byPosition([Param])
    }

    let storage: Storage

    init(_ storage: Storage) {
        self.storage = storage
    }

    /// Params by name, in the order written.
    public init(dictionaryLiteral elements: (String, any RequestArgument)...) {
        storage = .byName(elements.map { (name: $0.0, value: .argument($0.1.argumentValue)) })
    }

    /// Params by position.
    public init(arrayLiteral elements: any RequestArgument...) {
        storage = .byPosition(elements.map { .argument($0.argumentValue) })
    }

    /// Params by name, as a call's ``RequestArguments``.
    ///
    /// ```swift
    /// var arguments: RequestArguments = ["employeeNumber": 10004]
    /// arguments["details"] = ["titles"].argumentValue
    /// try await rpc.call("employees.getByEmployeeNumber", params: .byName(arguments), as: Employee.self)
    /// ```
    public static func byName(_ arguments: RequestArguments) -> JSONRPCParams {
        JSONRPCParams(.byName(arguments.elements.map { (name: $0.name, value: .argument($0.value)) }))
    }

    /// Params by name whose values are any `Encodable` (dates as ISO 8601).
    ///
    /// ```swift
    /// try await rpc.call("echo.postItems", params: .byName(["body": item]), as: Item.self)
    /// ```
    public static func byName(_ values: KeyValuePairs<String, any Encodable & Sendable>) -> JSONRPCParams {
        JSONRPCParams(.byName(values.map { (name: $0.key, value: .encodable($0.value)) }))
    }

    /// Params by position whose values are any `Encodable` (dates as ISO 8601).
    ///
    /// ```swift
    /// try await rpc.call("math.getSum", params: .byPosition([[1.5, 2.5]]), as: Double.self)
    /// ```
    public static func byPosition(_ values: [any Encodable & Sendable]) -> JSONRPCParams {
        JSONRPCParams(.byPosition(values.map { .encodable($0) }))
    }

    /// Whether there are no params (the call then sends none).
    public var isEmpty: Bool {
        switch storage {
        case .byName(let elements): elements.isEmpty
        case .byPosition(let values): values.isEmpty
        }
    }

    /// The `params` member's JSON: an object by name (absent values left
    /// out), an array by position (an absent value is `null`).
    func json() throws -> String {
        switch storage {
        case .byName(let elements):
            var json = "{"
            var first = true
            for (name, value) in elements {
                if case .argument(let argument) = value, argument.isAbsent { continue }
                if !first { json += "," }
                first = false
                json += JSONText.quoted(name) + ":"
                try Self.append(value, to: &json)
            }
            return json + "}"
        case .byPosition(let values):
            var json = "["
            for (index, value) in values.enumerated() {
                if index > 0 { json += "," }
                try Self.append(value, to: &json)
            }
            return json + "]"
        }
    }

    private static func append(_ value: Param, to json: inout String) throws {
        switch value {
        case .argument(let argument):
            argument.appendJSON(to: &json)
        case .encodable(let encodable):
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            do {
                json += String(decoding: try encoder.encode(encodable), as: UTF8.self)
            } catch {
                throw WebServiceError(
                    .invalidRequest, detail: "A JSON-RPC param (\(type(of: encodable))) cannot be encoded: \(error)", underlying: error)
            }
        }
    }
}
