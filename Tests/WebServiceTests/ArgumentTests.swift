import Foundation
import Testing
import WebService

@Suite("Arguments")
struct ArgumentTests {
    let router: WebServiceRouter
    static let uuid = "0F3C2A5E-9B1D-4C8E-A7F6-2D4B6E8A1C3F"
    static let query =
        "text=caf%C3%A9+au+lait&integer=-42&long=9000000000&double=2.5&flag=1"
        + "&date=2024-05-01&uuid=\(uuid)&url=https%3A%2F%2Fexample.com%2Fa%3Fb%3Dc&detail=salaries&numbers=1&numbers=2"

    init() throws {
        router = try WebServiceRouter(services: [CatalogService()])
    }

    @Test func queryStringConvertsEveryType() {
        let response = router.resolvedResponse(to: makeRequest(.get, "/catalog/conversions?" + Self.query))
        #expect(response.status == .ok)
        #expect(
            response.text == #"{"text":"café au lait","integer":-42,"long":9000000000,"double":2.5,"flag":true,"#
                + #""date":"2024-05-01T00:00:00Z","uuid":"\#(Self.uuid)","url":"https://example.com/a?b=c","#
                + #""detail":"salaries","limit":100,"numbers":[1,2]}"#)
    }

    @Test func optionalsAndDefaultsTakeSuppliedValues() {
        let response = router.resolvedResponse(to: makeRequest(.get, "/catalog/conversions?" + Self.query + "&limit=5&note=hi"))
        #expect(response.object["limit"] as? Int == 5)
        #expect(response.object["note"] as? String == "hi")
    }

    @Test func dateTimesWithOffsets() {
        let base = Self.query.replacingOccurrences(of: "date=2024-05-01", with: "date=")
        for (text, expected) in [
            ("2024-05-01T12:30:00Z", "2024-05-01T12:30:00Z"),
            ("2024-05-01T12:30:00.250%2B02:00", "2024-05-01T10:30:00.250Z"),
            ("2024-02-29T23:00:00-01:00", "2024-03-01T00:00:00Z"),
        ] {
            let response = router.resolvedResponse(
                to: makeRequest(.get, "/catalog/conversions?" + base.replacingOccurrences(of: "date=", with: "date=\(text)")))
            #expect(response.object["date"] as? String == expected, "\(text)")
        }
        for bad in ["2024-02-30", "2024-05-01T12:30:00", "01/05/2024", "2024-13-01"] {
            let response = router.resolvedResponse(
                to: makeRequest(.get, "/catalog/conversions?" + base.replacingOccurrences(of: "date=", with: "date=\(bad)")))
            #expect(response.status == .badRequest, "\(bad)")
            #expect(response.object["parameter"] as? String == "date")
        }
    }

    @Test func booleansAcceptOnlyTrueFalseOneZero() {
        for (text, expected) in [("true", true), ("false", false), ("1", true), ("0", false)] {
            let response = router.resolvedResponse(
                to: makeRequest(.get, "/catalog/conversions?" + Self.query.replacingOccurrences(of: "flag=1", with: "flag=\(text)")))
            #expect(response.object["flag"] as? Bool == expected)
        }
        for text in ["yes", "TRUE", "2", ""] {
            let response = router.resolvedResponse(
                to: makeRequest(.get, "/catalog/conversions?" + Self.query.replacingOccurrences(of: "flag=1", with: "flag=\(text)")))
            #expect(response.status == .badRequest, "\(text)")
        }
    }

    @Test func enumerationsListAllowedValuesInErrors() {
        let response = router.resolvedResponse(to: makeRequest(.get, "/catalog/details?details=titles&details=bonuses"))
        #expect(response.status == .badRequest)
        #expect(response.object["parameter"] as? String == "details")
        #expect(response.object["allowedValues"] as? [String] == ["titles", "salaries"])
        #expect((response.object["detail"] as? String)?.contains("\"bonuses\"") == true)
        #expect(
            router.resolvedResponse(to: makeRequest(.get, "/catalog/details?details=titles&details=salaries")).text
                == #"["titles","salaries"]"#)
        #expect(router.resolvedResponse(to: makeRequest(.get, "/catalog/details")).text == "[]")
    }

    @Test func urlencodedFormFields() {
        let fields = [
            FormField(name: "name", value: .text("total")), FormField(name: "values", value: .text("4")),
            FormField(name: "values", value: .text("5")),
        ]
        let response = router.resolvedResponse(
            to: makeRequest(.post, "/catalog/form", headers: ["Content-Type": "application/x-www-form-urlencoded"], formFields: fields))
        #expect(response.text == #""total: 9""#)
    }

    @Test func multipartFilePartsBecomeFileArguments() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("upload-\(UUID().uuidString)").path
        try "hello".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let file = UploadedFile(filename: "greeting.txt", contentType: "text/plain", path: path, size: 5)
        let fields = [FormField(name: "label", value: .text("doc")), FormField(name: "file", value: .file(file))]
        let response = router.resolvedResponse(
            to: makeRequest(.post, "/catalog/upload", headers: ["Content-Type": "multipart/form-data; boundary=x"], formFields: fields))
        #expect(response.text == #""doc greeting.txt 5 hello""#)

        let textInsteadOfFile = [FormField(name: "label", value: .text("doc")), FormField(name: "file", value: .text("hello"))]
        let wrong = router.resolvedResponse(to: makeRequest(.post, "/catalog/upload", formFields: textInsteadOfFile))
        #expect(wrong.status == .badRequest)
        #expect(wrong.object["parameter"] as? String == "file")
    }

    @Test func jsonObjectMembersBecomeArguments() {
        let response = router.resolvedResponse(to: makeJSONRequest(.post, "/catalog/form", json: #"{"name":"json","values":[1,2,3]}"#))
        #expect(response.text == #""json: 6""#)
        let wrongElement = router.resolvedResponse(to: makeJSONRequest(.post, "/catalog/form", json: #"{"name":"json","values":[1,"x"]}"#))
        #expect(wrongElement.status == .badRequest)
        #expect(wrongElement.object["parameter"] as? String == "values")
    }

    @Test func badJSONIs400() {
        let malformed = router.resolvedResponse(to: makeJSONRequest(.post, "/catalog/form", json: #"{"name":"#))
        #expect(malformed.status == .badRequest)
        #expect(malformed.object["detail"] as? String == "The request body is not valid JSON: unexpected end of the document at byte 8.")
        let notObject = router.resolvedResponse(to: makeJSONRequest(.post, "/catalog/form", json: "[1,2]"))
        #expect(notObject.status == .badRequest)
        let badBody = router.resolvedResponse(to: makeJSONRequest(.post, "/catalog/employees", json: #"{"employeeNumber":"x"}"#))
        #expect(badBody.status == .badRequest)
        #expect((badBody.object["detail"] as? String)?.contains("Employee") == true)
    }

    @Test func decodableBody() {
        let json = #"{"employeeNumber":10004,"firstName":"Chirstian","lastName":"Koblick","hireDate":"1986-12-01"}"#
        let response = router.resolvedResponse(to: makeJSONRequest(.post, "/catalog/employees", json: json))
        #expect(response.status == .ok)
        #expect(
            response.text == #"{"employeeNumber":10004,"firstName":"Chirstian","lastName":"Koblick","hireDate":"1986-12-01T00:00:00Z"}"#)
        #expect(router.resolvedResponse(to: makeRequest(.post, "/catalog/employees")).status == .badRequest)
    }

    @Test func handlersSeeTheRequest() {
        let response = router.resolvedResponse(to: makeRequest(.get, "/catalog/agent", headers: ["User-Agent": "curl/8"]))
        #expect(response.text == #""curl/8""#)
    }

    @Test func missingRequiredArgumentIs400NamingTheParameter() {
        let response = router.resolvedResponse(
            to: makeRequest(.get, "/catalog/conversions?" + Self.query.replacingOccurrences(of: "integer=-42&", with: "")))
        #expect(response.status == .badRequest)
        #expect(response.object["parameter"] as? String == "integer")
        #expect(response.object["detail"] as? String == #"The required parameter "integer" (integer) is missing."#)
    }

    @Test func unconvertibleValueIs400WithTypeAndValue() throws {
        let math = try WebServiceRouter(services: [MathService()]).resolvedResponse(to: makeRequest(.get, "/math/sum?a=2&b=abc"))
        #expect(math.status == .badRequest)
        #expect(math.object["parameter"] as? String == "b")
        #expect(math.object["detail"] as? String == #"The parameter "b" expects a double; received "abc"."#)
        for bad in ["long=9e9", "integer=1.5", "uuid=nope", "url=not%20a%20url", "double=nan"] {
            let name = String(bad.prefix { $0 != "=" })
            let query = Self.query.replacingOccurrences(of: #"(^|&)\#(name)=[^&]*"#, with: "$1\(bad)", options: .regularExpression)
            let failed = router.resolvedResponse(to: makeRequest(.get, "/catalog/conversions?" + query))
            #expect(failed.status == .badRequest, "\(bad)")
            #expect(failed.object["parameter"] as? String == name, "\(bad)")
        }
    }
}
