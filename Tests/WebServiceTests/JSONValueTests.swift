import Testing
@testable import WebService

/// The one JSON tree: an object keeps its members' order, built or parsed,
/// and a parsed document is written back as the same JSON.
@Suite("JSON values")
struct JSONValueTests {
    @Test func orderedObjectsAreWrittenInTheOrderBuilt() {
        var document: JSONValue = ["openapi": "3.1.0", "info": ["title": "T", "version": "1"]]
        document["paths"] = [:]
        document["info"] = ["title": "U"]  // replaced where it stands
        #expect(document.jsonText == #"{"openapi":"3.1.0","info":{"title":"U"},"paths":{}}"#)
        document["openapi"] = nil
        #expect(document.jsonText == #"{"info":{"title":"U"},"paths":{}}"#)
        #expect(document["paths"]?.isEmptyObject == true)
        let repeated = JSONValue.Members([(key: "a", value: 1), (key: "b", value: 2), (key: "a", value: 3)])
        #expect(repeated.keys == ["a", "b"] && repeated["a"] == 3)
    }

    @Test func membersAreFoundByNameAndRemovedInPlace() {
        var members: JSONValue.Members = ["b": 1, "a": [true, .null, .number(2.5)], "c": .string("x\"\n"), "d": 4]
        members["a"] = nil
        #expect(members.keys == ["b", "c", "d"] && members["d"] == 4 && members["a"] == nil)
        members["a"] = [true, .null, .number(2.5)]
        let value = JSONValue.object(members)
        #expect(value.jsonText == #"{"b":1,"c":"x\"\n","d":4,"a":[true,null,2.5]}"#)
        #expect(value["a"] == [true, .null, .number(2.5)])
        #expect(JSONValue.string("x")["a"] == nil)
    }

    @Test func aParsedDocumentIsWrittenBackAsTheSameValue() throws {
        let text = #"{"z":[1,-2,3.5,"\u00e9"],"a":{"k":null,"j":false}}"#
        let value = try JSONValue.parse(Array(text.utf8))
        #expect(value.jsonText == #"{"z":[1,-2,3.5,"é"],"a":{"k":null,"j":false}}"#)
        #expect(try JSONValue.parse(value.jsonBytes) == value)
    }

    @Test func equalityIsStructural() {
        let ordered: JSONValue = ["a": 1, "b": 2]
        #expect(ordered == ["a": 1, "b": 2])
        #expect(ordered != ["b": 2, "a": 1])
        #expect(Set([ordered, ["a": 1, "b": 2]]).count == 1)
    }
}
