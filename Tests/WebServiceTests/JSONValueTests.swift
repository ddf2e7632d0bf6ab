import Testing
@testable import WebService

/// The one JSON tree: how each form of object is written, how an ordered
/// object is built, and that a parsed document is written back as JSON.
@Suite("JSON values")
struct JSONValueTests {
    @Test func orderedObjectsAreWrittenInTheOrderBuilt() {
        var document: JSONValue = ["openapi": "3.1.0", "info": ["title": "T", "version": "1"]]
        document["paths"] = [:]
        document["info"] = ["title": "U"]   // replaced where it stands
        #expect(document.jsonText == #"{"openapi":"3.1.0","info":{"title":"U"},"paths":{}}"#)
        document["openapi"] = nil
        #expect(document.jsonText == #"{"info":{"title":"U"},"paths":{}}"#)
        #expect(document["paths"]?.isEmptyObject == true)
        #expect(JSONValue.OrderedMembers([(key: "a", value: 1), (key: "b", value: 2), (key: "a", value: 3)]).members.map(\.key) == ["a", "b"])
    }

    @Test func objectsByNameAreWrittenWithTheirKeysSorted() {
        let value = JSONValue.object(["b": 1, "a": [true, .null, .number(2.5)], "c": .string("x\"\n")])
        #expect(value.jsonText == #"{"a":[true,null,2.5],"b":1,"c":"x\"\n"}"#)
        #expect(value["a"] == [true, .null, .number(2.5)])
        #expect(JSONValue.string("x")["a"] == nil)
    }

    @Test func aParsedDocumentIsWrittenBackAsTheSameValue() throws {
        let text = #"{"z":[1,-2,3.5,"\u00e9"],"a":{"k":null,"j":false}}"#
        let value = try JSONValue.parse(Array(text.utf8))
        #expect(value.jsonText == #"{"a":{"j":false,"k":null},"z":[1,-2,3.5,"é"]}"#)
        #expect(try JSONValue.parse(value.jsonBytes) == value)
    }

    @Test func equalityIsStructural() {
        let ordered: JSONValue = ["a": 1, "b": 2]
        #expect(ordered == ["a": 1, "b": 2])
        #expect(ordered != ["b": 2, "a": 1])
        #expect(ordered != .object(["a": 1, "b": 2]))
        #expect(Set([ordered, ["a": 1, "b": 2]]).count == 1)
    }
}
