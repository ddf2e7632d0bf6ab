import WebService

/// HTTP-RPC's classic demo: two `sum` operations on one path, told apart by
/// the arguments supplied.
///
/// ```
/// GET /math/sum?a=2&b=4                      → 6
/// GET /math/sum?values=1&values=2&values=3   → 6
/// GET /math?api                              → the documentation
/// ```
public struct MathService: WebService {
    public let path = "/math"
    public let description = "Simple math operations."

    public init() {}

    public var routes: [Route] {
        Route(.get, "/sum", description: "Returns the sum of two numbers.",
              Parameter<Double>("a", example: 2, description: "The first number."),
              Parameter<Double>("b", example: 4, description: "The second number.")) { a, b in
            try finite(a + b)
        }

        Route(.get, "/sum", description: "Returns the sum of a list of numbers.",
              Parameter<[Double]>("values", example: [1, 2, 3], description: "The numbers to add.")) { values in
            try finite(values.reduce(0, +))
        }

        Route(.get, "/average", description: "Returns the average of a list of numbers.",
              Parameter<[Double]>("values", example: [1, 2, 3], description: "The numbers to average; at least one.")) { values in
            guard !values.isEmpty else {
                throw HTTPError(.badRequest, detail: "At least one value is needed.", parameter: "values")
            }
            // Each value divided first: the average of numbers near the largest double is not infinite.
            let count = Double(values.count)
            return values.reduce(0) { $0 + $1 / count }
        }

        Route(.get, "/round", description: "Rounds a number to the given number of decimal places.",
              Parameter<Double>("value", example: 3.14159, description: "The number to round."),
              Parameter<Int>("places", default: 0, example: 2, description: "Decimal places, 0 to 10.")) { value, places in
            guard (0...10).contains(places) else {
                throw HTTPError(.badRequest, detail: "The parameter \"places\" must be between 0 and 10; received \(places).", parameter: "places")
            }
            var scale = 1.0
            for _ in 0..<places { scale *= 10 }
            // A number too large to scale has no digits after the point to round.
            guard (value * scale).isFinite else { return value }
            return (value * scale).rounded() / scale
        }
    }

    /// `value`, or a 400 when the arithmetic overflowed: JSON has no infinity.
    private func finite(_ value: Double) throws -> Double {
        guard value.isFinite else {
            throw HTTPError(.badRequest, detail: "The result is beyond the range of a double (about 1.8e308).")
        }
        return value
    }
}
