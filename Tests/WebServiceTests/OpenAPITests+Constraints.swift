import Foundation
import HTTPTestClient
import Testing
import WebService

/// A service whose parameters enforce ranges and least counts.
struct BoundedService: WebService {
    let path = "/bounded"
    let description = "Parameters with constraints."

    var routes: [Route] {
        Route(
            .get, "/round",
            Parameter<Int>("places", default: 0, constraints: .range(0...10)),
            Parameter<Int?>("offset", constraints: .atLeast(0))
        ) { places, offset in "\(places) \(offset ?? 0)" }
        Route(.get, "/average", Parameter<[Double]>("values", constraints: .count(atLeast: 1))) { values in
            values.reduce(0, +) / Double(values.count)
        }
        Route(.get, "/pick", Parameter<[Int]>("ids", constraints: .range(1...5))) { ids in ids.count }
    }
}

extension OpenAPITests {
    @Test("the document states each range and least count that the parameter enforces")
    func constraintsInTheDocument() throws {
        let router = try WebServiceRouter(services: [BoundedService()])
        let response = router.resolvedResponse(to: makeRequest(.get, "/openapi.json"))
        let document = try #require(try JSONReader.value(response.text.utf8) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: [String: Any]]])
        func parameter(_ path: String, _ name: String) throws -> [String: Any] {
            let parameters = try #require(paths[path]?["get"]?["parameters"] as? [[String: Any]])
            return try #require(parameters.first { $0["name"] as? String == name }, "\(name)")
        }
        let places = try #require(try parameter("/bounded/round", "places")["schema"] as? [String: Any])
        #expect(places["minimum"] as? Int == 0)
        #expect(places["maximum"] as? Int == 10)
        let offset = try #require(try parameter("/bounded/round", "offset")["schema"] as? [String: Any])
        #expect(offset["minimum"] as? Int == 0)
        #expect(offset["maximum"] == nil)
        let values = try parameter("/bounded/average", "values")
        #expect(values["required"] as? Bool == true)
        #expect((values["schema"] as? [String: Any])?["minItems"] as? Int == 1)
        let ids = try #require(try parameter("/bounded/pick", "ids")["schema"] as? [String: Any])
        #expect(ids["minItems"] == nil)
        #expect((ids["items"] as? [String: Any])?["minimum"] as? Int == 1)
        #expect((ids["items"] as? [String: Any])?["maximum"] as? Int == 5)

        // The same declarations refuse what breaks them.
        #expect(router.resolvedResponse(to: makeRequest(.get, "/bounded/round?places=10&offset=0")).text == #""10 0""#)
        let high = router.resolvedResponse(to: makeRequest(.get, "/bounded/round?places=11"))
        #expect(high.status == .badRequest)
        #expect(high.object["detail"] as? String == #"The parameter "places" expects an integer from 0 to 10; received "11"."#)
        let negative = router.resolvedResponse(to: makeRequest(.get, "/bounded/round?offset=-1"))
        #expect(negative.object["detail"] as? String == #"The parameter "offset" expects an integer of 0 or more; received "-1"."#)
        let none = router.resolvedResponse(to: makeRequest(.get, "/bounded/average"))
        #expect(none.status == .badRequest)
        #expect(none.object["parameter"] as? String == "values")
        #expect(router.resolvedResponse(to: makeRequest(.get, "/bounded/average?values=2&values=4")).text == "3")
        #expect(router.resolvedResponse(to: makeRequest(.get, "/bounded/pick?ids=1&ids=6")).status == .badRequest)
        #expect(router.resolvedResponse(to: makeRequest(.get, "/bounded/pick")).text == "0")
    }

    @Test("an integer range's pattern matches exactly the texts Int reads within it")
    func integerPatterns() throws {
        for range in [0...10, -130...1234, 1...1, -5 ... -3, 17...2000, Int(Int32.min)...Int(Int32.max)] {
            let pattern = try Regex("^" + ArgumentConstraints.integerPattern(range) + "$")
            let edges = [range.lowerBound, range.upperBound].flatMap { [$0 - 1, $0, $0 + 1] }
            var wrong: [String] = []
            for number in Array(stride(from: -2100, through: 2100, by: 7)) + Array(-12...12) + edges {
                for text in ["\(number)", number < 0 ? "-00\(-number)" : "+\(number)", number < 0 ? "-0\(-number)" : "00\(number)"] {
                    let within = Int(text).map(range.contains) ?? false
                    if (text.wholeMatch(of: pattern) != nil) != within { wrong.append(text) }
                }
            }
            #expect(wrong.isEmpty, "\(range): \(wrong)")
        }
        let whole = try Regex("^" + ArgumentConstraints.integerPattern(Int.min...Int.max) + "$")
        for text in ["9223372036854775807", "-9223372036854775808", "0", "-0", "+0042"] {
            #expect(text.wholeMatch(of: whole) != nil, "\(text)")
        }
        for text in ["9223372036854775808", "-9223372036854775809", "", "-", "1.0", " 1"] {
            #expect(text.wholeMatch(of: whole) == nil, "\(text)")
        }
    }
}
