import Foundation
import HTTPTestClient
import Testing
import WebService

@Suite("Documentation")
struct DocumentationTests {
    let router: WebServiceRouter

    init() throws {
        router = try WebServiceRouter(services: [MathService(), CatalogService()])
    }

    @Test func apiHTMLDescribesEveryOperation() {
        let response = router.resolvedResponse(to: makeRequest(.get, "/math?api"))
        #expect(response.status == .ok)
        #expect(response.headers["Content-Type"] == "text/html; charset=utf-8")
        let html = response.text
        #expect(html.contains("<h1>/math</h1>"))
        #expect(html.contains("<h2>/math/sum</h2>"))
        #expect(html.contains("<code><b>GET</b> (a: double, b: double) &rarr; double</code>"))
        #expect(html.contains("<code><b>GET</b> (values: [double]) &rarr; double</code>"))
        #expect(html.contains("The first number."))
        #expect(html.contains("Returns the sum of a list of numbers."))
    }

    @Test func apiHTMLLinksStructuresAndEscapes() {
        let html = router.resolvedResponse(to: makeRequest(.get, "/catalog?api")).text
        #expect(html.contains("Exercises routing, arguments and results &lt;&amp;&gt;."))
        #expect(!html.contains("<&>"))
        #expect(html.contains("<h2>/catalog/items/{id}</h2>"))
        #expect(html.contains("<h2>/catalog/items/special</h2>"))
        #expect(html.contains(##"(body: <a href="#Employee">Employee</a>) &rarr; <a href="#Employee">Employee</a>"##))
        #expect(html.contains(#"<h3 id="Employee">Employee</h3>"#))
        #expect(html.contains("titles: [<a href=\"#Title\">Title</a>] <i>(optional)</i>"))
        #expect(html.contains(#"<h3 id="Title">Title</h3>"#))
        #expect(html.contains("  toDate: date-time <i>(optional)</i>"))
        #expect(html.contains(##"(details: [<a href="#Detail">Detail</a>]) &rarr; [string]"##))
        #expect(html.contains(#""titles" | "salaries""#))
        #expect(html.contains("(count: integer) &rarr; stream of [integer]"))
        #expect(html.contains("optional (default <code>100</code>)"))
        #expect(html.contains("<b>POST</b> () &rarr; void"))
        #expect(html.contains("(file: file)") || html.contains("file: file"))
    }

    @Test func apiJSONOnRequest() throws {
        let response = router.resolvedResponse(to: makeRequest(.get, "/math?api", headers: ["Accept": "application/json"]))
        #expect(response.headers["Content-Type"] == "application/json; charset=utf-8")
        #expect(
            response.text == #"{"path":"/math","description":"Math operations.","endpoints":[{"path":"/math/sum","operations":["#
                + #"{"method":"GET","operationId":"math.getSum","description":"Returns the sum of two numbers.","parameters":["#
                + #"{"name":"a","location":"argument","type":"double","required":true,"description":"The first number."},"#
                + #"{"name":"b","location":"argument","type":"double","required":true,"description":"The second number."}],"#
                + #""result":"double","streamed":false,"example":"curl 'http://localhost/math/sum?a=1.5&b=1.5'"},"#
                + #"{"method":"GET","operationId":"math.getSum","description":"Returns the sum of a list of numbers.","parameters":["#
                + #"{"name":"values","location":"argument","type":"[double]","required":false,"description":"The numbers to add."}],"#
                + #""result":"double","streamed":false,"example":"curl 'http://localhost/math/sum'"}]}],"structures":[],"#
                + #""enumerations":[]}"#)
    }

    @Test func apiJSONDescribesStructuresPathParametersAndDefaults() throws {
        let response = router.resolvedResponse(to: makeRequest(.get, "/catalog?api", headers: ["Accept": "application/json"]))
        let document = try #require(try JSONReader.value(response.text.utf8) as? [String: Any])
        let structures = try #require(document["structures"] as? [[String: Any]])
        let employee = try #require(structures.first { $0["name"] as? String == "Employee" })
        let fields = try #require(employee["fields"] as? [[String: Any]])
        #expect(fields.map { $0["name"] as? String } == ["employeeNumber", "firstName", "lastName", "hireDate", "titles"])
        #expect(fields.map { $0["type"] as? String } == ["integer", "string", "string", "date-time", "[Title]"])
        #expect(fields.map { $0["required"] as? Bool } == [true, true, true, true, false])
        let enumerations = try #require(document["enumerations"] as? [[String: Any]])
        #expect(enumerations.first?["values"] as? [String] == ["titles", "salaries"])

        let endpoints = try #require(document["endpoints"] as? [[String: Any]])
        let items = try #require(endpoints.first { $0["path"] as? String == "/catalog/items/{id}" })
        let operations = try #require(items["operations"] as? [[String: Any]])
        #expect(operations.map { $0["method"] as? String } == ["GET", "PUT", "PATCH", "DELETE"])
        let put = try #require(operations[1]["parameters"] as? [[String: Any]])
        #expect(put.map { $0["location"] as? String } == ["path", "argument"])
        let conversions = try #require(endpoints.first { $0["path"] as? String == "/catalog/conversions" })
        let parameters = try #require((conversions["operations"] as? [[String: Any]])?.first?["parameters"] as? [[String: Any]])
        let limit = try #require(parameters.first { $0["name"] as? String == "limit" })
        #expect(limit["required"] as? Bool == false)
        #expect(limit["defaultValue"] as? String == "100")
        #expect(parameters.first { $0["name"] as? String == "note" }?["required"] as? Bool == false)
        #expect(parameters.first { $0["name"] as? String == "uuid" }?["type"] as? String == "uuid")
    }

    @Test func apiHTMLRendersInlineCodeExamplesAndLinks() throws {
        let router = try WebServiceRouter(services: [ArchiveService(), CatalogService()])
        let html = router.resolvedResponse(to: makeRequest(.get, "/archive?api", headers: ["Host": "example.org:8081"])).text
        #expect(html.contains("<p>Entries by year; <code>year</code> may be left out.</p>"))
        #expect(html.contains("<p>The entries of one <code>year</code>, or of every year.</p>"))
        #expect(!html.contains("`"))
        #expect(html.contains(#"<a href="/openapi.json">/openapi.json</a>"#))
        #expect(html.contains(#"<span class="operation-id" title="operationId">archive.getByYear</span>"#))
        // One example request per operation, on the host asked for; a comma list given once, comma-separated.
        #expect(html.contains("<pre class=\"example\">curl &#39;http://example.org:8081/archive/2024&#39;</pre>"))
        #expect(html.contains("<pre class=\"example\">curl &#39;http://example.org:8081/archive&#39;</pre>"))
        #expect(
            html.contains(
                "<pre class=\"example\">curl &#39;http://example.org:8081/archive/entries&#39; "
                    + "-d &#39;title=Lamp%27s%20day&amp;day=2024-05-01&amp;details=titles,salaries&#39;</pre>"))
        #expect(html.contains("separate values by commas (<code>a,b</code>)"))

        // A host that is not a plain name and port is not repeated.
        let hostile = router.resolvedResponse(to: makeRequest(.get, "/archive?api", headers: ["Host": "x'><script>"])).text
        #expect(hostile.contains("curl &#39;http://localhost/archive/2024&#39;"))
        #expect(!hostile.contains("<script>"))

        let catalog = router.resolvedResponse(to: makeRequest(.get, "/catalog?api", headers: ["Host": "h"])).text
        #expect(catalog.contains("curl -X DELETE &#39;http://h/catalog/items/1&#39;"))
        #expect(catalog.contains("curl -X PUT &#39;http://h/catalog/items/1&#39; -d &#39;name=text&#39;"))
        #expect(catalog.contains("curl &#39;http://h/catalog/upload&#39; -F &#39;label=text&#39; -F &#39;file=@file.txt&#39;"))
        #expect(
            catalog.contains(
                "curl &#39;http://h/catalog/employees&#39; -H &#39;Content-Type: application/json&#39; "
                    + "-d &#39;{&quot;employeeNumber&quot;:1,&quot;firstName&quot;:&quot;text&quot;,&quot;lastName&quot;:&quot;text&quot;,"
                    + "&quot;hireDate&quot;:&quot;2024-05-01T12:00:00Z&quot;}&#39;"))
        #expect(catalog.contains("curl -X POST &#39;http://h/catalog/void&#39;"))
        // Links between structures: a field's structure type points at its heading.
        #expect(catalog.contains(##"titles: [<a href="#Title">Title</a>]"##) && catalog.contains(#"<h3 id="Title">"#))
    }

    @Test func rootListsServicesInHTMLAndJSON() {
        let html = router.resolvedResponse(to: makeRequest(.get, "/"))
        #expect(html.status == .ok)
        #expect(html.headers["Content-Type"] == "text/html; charset=utf-8")
        #expect(html.text.contains(#"<li><a href="/math?api">/math</a> &mdash; Math operations.</li>"#))
        #expect(html.text.contains(#"<a href="/catalog?api">/catalog</a>"#))
        let json = router.resolvedResponse(to: makeRequest(.get, "/", headers: ["Accept": "application/json"]))
        #expect(json.headers["Content-Type"] == "application/json; charset=utf-8")
        #expect(json.text.hasPrefix(#"[{"path":"/math","description":"Math operations.","api":"/math?api"},{"path":"/catalog","#))
    }
}
