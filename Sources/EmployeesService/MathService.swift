import CoreMetrics
import WebService

/// HTTP-RPC's classic demo: sums, averages and rounding.
///
/// ```
/// GET /math/sum?a=2&b=4                      → 6
/// GET /math/sum?values=1&values=2&values=3   → 6
/// GET /math?api                              → the documentation
/// ```
///
/// It counts the numbers it adds with swift-metrics, as any service may
/// count what it does: `math_summed_values_total` on `/metrics`.
public struct MathService: WebService {
    /// Made on first use, once the server has bootstrapped the metrics
    /// system (a metric made before that counts nowhere).
    private static let summedValues = Counter(label: "math_summed_values_total")

    public let path = "/math"
    public let description = "Simple math operations."

    public init() {}

    public var routes: [Route] {
        // One operation rather than HTTP-RPC's two overloads (a and b, or
        // values): OpenAPI gives a path and verb one set of parameters and
        // cannot say that a and b exclude values, so the document would
        // allow requests that neither overload takes. Every combination it
        // allows is a sum: of the numbers given, 0 for none.
        Route(
            .get, "/sum", description: "Returns the sum of the numbers given: `a`, `b` and each of `values` (0 for none).",
            Parameter<Double?>("a", example: 2, description: "A number to add."),
            Parameter<Double?>("b", example: 4, description: "Another number to add."),
            Parameter<[Double]>("values", example: [1, 2, 3], description: "More numbers to add.")
        ) { a, b, values in
            let numbers = [a, b].compactMap { $0 } + values
            Self.summedValues.increment(by: numbers.count)
            return try finite(numbers.reduce(0, +))
        }

        Route(
            .get, "/average", description: "Returns the average of a list of numbers.",
            Parameter<[Double]>(
                "values", example: [1, 2, 3], constraints: .count(atLeast: 1),
                description: "The numbers to average; at least one.")
        ) { values in
            // Each value divided first: the average of numbers near the largest double is not infinite.
            let count = Double(values.count)
            return values.reduce(0) { $0 + $1 / count }
        }

        Route(
            .get, "/round", description: "Rounds a number to the given number of decimal places.",
            Parameter<Double>("value", example: 3.14159, description: "The number to round."),
            Parameter<Int>(
                "places", default: 0, example: 2, constraints: .range(0...10),
                description: "Decimal places, 0 to 10.")
        ) { value, places in
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
