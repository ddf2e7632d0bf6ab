import Foundation
import HTTPTestClient
import Testing

/// A new user's first hour, as a new user would spend it: the server
/// `make run` starts (`employees-server` on the sample database) and
/// `sql-rest serve` of the repository's `services/` and of
/// `Examples/sql-services`, each a real process. From `/`, every link is
/// followed; on each `?api` page (HTML, and its JSON form), every link is
/// followed and every `curl` line shown is run. Each must answer as
/// documented, with real data: 200 with rows or members (204 for an
/// operation that returns nothing), the counted list its `Content-Range`,
/// the CSV its lines.
@Suite("a new user's first hour: every link and every example of / and ?api answers", .serialized)
struct FirstHourTests {
    /// A command line shown by a page, as the request it sends.
    struct Example: CustomStringConvertible {
        var method = "GET"
        var target = ""
        var host = ""
        var headers: [(String, String)] = []
        var body: [UInt8] = []
        var text = ""
        var description: String { text }
    }

    /// The server processes a user starts: `employees-server`, and `sql-rest serve` of a folder.
    static func start(_ program: String, _ arguments: [String]) throws -> ChildProcess {
        let environment: [String: String?] = [
            "PGHOST": try Environment.variable("PGHOST"), "PGPORT": try Environment.variable("PGPORT"),
            "PGDATABASE": try Environment.variable("EMPLOYEES_DATABASE"), "PGUSER": "employees_reader", "DATABASE_URL": nil,
            "EMPLOYEES_DATABASE_URL": nil, "SQL_REST_DATABASE_URL": nil,
        ]
        return try ChildProcess(
            try ChildProcess.packageExecutable(program), arguments + ["--host", "127.0.0.1", "--port", "0"],
            environment: environment, separateErrors: true)
    }

    @Test(
        "every link on / and ?api is there, every curl line answers with real data",
        arguments: [
            ("employees-server", [String]()), ("sql-rest", ["serve", "--services", "services"]),
            ("sql-rest", ["serve", "--services", "Examples/sql-services"]),
        ])
    func everyLinkAndExample(program: String, arguments: [String]) throws {
        let arguments = arguments.map {
            $0.hasPrefix("services") || $0.hasPrefix("Examples") ? Environment.root.appending(path: $0).path : $0
        }
        let server = try Self.start(program, arguments)
        defer { server.stop() }
        let port = try server.servingPort()
        var visited: Set<String> = []
        var pages = ["/"]
        var examples = 0
        while let page = pages.popLast() {
            guard visited.insert(page).inserted else { continue }
            let reply = try TestClient.request("GET", page, port: port)
            try #require(reply.status == 200, "\(program): GET \(page): \(reply.status) \(reply.text)")
            guard reply.header("Content-Type")?.hasPrefix("text/html") == true else {
                #expect(!reply.body.isEmpty, "\(program): GET \(page) is empty")
                continue
            }
            let html = reply.text
            // Links: anchors on the page itself, other pages fetched in turn.
            let anchors = Set(html.matches(of: /id="([^"]+)"/).map { String($0.1) })
            for match in html.matches(of: /href="([^"]+)"/) {
                let link = Self.unescaped(String(match.1))
                if link.hasPrefix("#") {
                    #expect(anchors.contains(String(link.dropFirst())), "\(program): \(page) links \(link), which it lacks")
                } else {
                    #expect(link.hasPrefix("/"), "\(program): \(page) links \(link), off the server")
                    pages.append(link)
                }
            }
            guard page.hasSuffix("?api") else { continue }
            #expect(html.contains("href=\"/\""), "\(program): \(page) has no link back to /")
            // The examples of the HTML are those of the JSON form, which says what each answers.
            let json = try TestClient.request("GET", page, port: port, headers: [("Accept", "application/json")])
            let documentation = json.object
            let operations = (documentation["endpoints"] as? [[String: Any]] ?? []).flatMap {
                $0["operations"] as? [[String: Any]] ?? []
            }
            var expected: [String: Int] = [:]
            for operation in operations {
                let example = try #require(operation["example"] as? String, "\(program): \(page): an operation without example")
                expected[example] = operation["result"] == nil ? 204 : 200
                for note in operation["notes"] as? [[String: Any]] ?? [] {
                    if let request = note["example"] as? String { expected[request] = 200 }
                }
            }
            let shown = Self.commands(in: html)
            #expect(Set(shown).isSuperset(of: expected.keys), "\(program): \(page): the HTML lacks examples of its JSON form")
            for command in shown {
                let example = try #require(Self.parse(command), "\(program): \(page): cannot read `\(command)`")
                #expect(example.host == "127.0.0.1", "\(program): \(page): `\(command)` is not on the page's host")
                try Self.run(example, expecting: expected[command] ?? 200, port: port, context: "\(program): \(page)")
                examples += 1
            }
        }
        #expect(visited.contains("/openapi.json"))
        #expect(visited.count >= 3, "\(program): only \(visited.sorted()) reached")
        #expect(examples >= 3, "\(program): only \(examples) examples run")
    }

    /// Sends `example` and requires `status`, with real data.
    static func run(_ example: Example, expecting status: Int, port: Int, context: String) throws {
        let reply = try TestClient.request(example.method, example.target, port: port, headers: example.headers, body: example.body)
        let label = "\(context): `\(example.text)`"
        // A counted page short of the whole list is partial content, as PostgREST answers it.
        let counted = example.headers.contains { $0.0 == "Prefer" && $0.1.contains("count=") }
        let answered = counted && status == 200 && reply.status == 206 ? 200 : reply.status
        try #require(answered == status, "\(label): \(reply.status) \(reply.text.prefix(300))")
        guard status == 200 else { return }
        let accept = example.headers.first { $0.0 == "Accept" }?.1
        if accept == "text/csv" {
            #expect(reply.header("Content-Type")?.hasPrefix("text/csv") == true, "\(label)")
            #expect(reply.text.split(whereSeparator: \.isNewline).count >= 2, "\(label): no rows")
            return
        }
        if example.headers.contains(where: { $0 == ("Prefer", "count=exact") }) {
            #expect(reply.header("Content-Range")?.contains("/") == true, "\(label): no Content-Range")
        }
        guard reply.header("Content-Type")?.hasPrefix("application/json") == true else {
            // The metrics, as Prometheus reads them.
            #expect(!reply.body.isEmpty, "\(label): an empty body")
            return
        }
        let value = try #require(
            try? JSONSerialization.jsonObject(with: Data(reply.body), options: [.fragmentsAllowed]),
            "\(label): not JSON: \(reply.text.prefix(200))")
        if let list = value as? [Any] {
            #expect(!list.isEmpty, "\(label): an empty list")
        } else if let object = value as? [String: Any] {
            #expect(!object.isEmpty, "\(label): an empty object")
        }
    }

    /// The `curl` lines of a page: its examples, the requests of its notes,
    /// and the one that shows the page as JSON.
    static func commands(in html: String) -> [String] {
        var commands: [String] = []
        for match in html.matches(of: /<pre class="(?:example|request)">([^<]*)<\/pre>/) { commands.append(unescaped(String(match.1))) }
        for match in html.matches(of: /<code>(curl [^<]*)<\/code>/) { commands.append(unescaped(String(match.1))) }
        return commands
    }

    /// A `curl` command line as a page writes it: words in single quotes
    /// (`'\''` for a quote), `-X`, `-H`, `-d`, `-i`, and the URL.
    static func parse(_ command: String) -> Example? {
        var words: [String] = []
        var word: String?
        var quoted = false
        for character in command {
            if quoted {
                if character == "'" { quoted = false } else { word!.append(character) }
            } else if character == "'" {
                quoted = true
                word = word ?? ""
            } else if character == " " {
                if let done = word { words.append(done) }
                word = nil
            } else {
                word = (word ?? "") + String(character)
            }
        }
        if let done = word { words.append(done) }
        guard words.first == "curl" else { return nil }
        var example = Example(text: command)
        var index = 1
        while index < words.count {
            let current = words[index]
            switch current {
            case "-i": break
            case "-X", "-H", "-d":
                guard index + 1 < words.count else { return nil }
                let value = words[index + 1]
                index += 1
                if current == "-X" { example.method = value }
                if current == "-H", let colon = value.firstIndex(of: ":") {
                    example.headers.append((String(value[..<colon]), String(value[value.index(after: colon)...].drop { $0 == " " })))
                }
                if current == "-d" {
                    example.body = Array(value.utf8)
                    if example.method == "GET" { example.method = "POST" }
                    if !example.headers.contains(where: { $0.0 == "Content-Type" }) {
                        example.headers.append(("Content-Type", "application/x-www-form-urlencoded"))
                    }
                }
            default:
                guard current.hasPrefix("http://") else { return nil }
                let rest = current.dropFirst("http://".count)
                let slash = rest.firstIndex(of: "/") ?? rest.endIndex
                example.host = String(rest[..<slash])
                example.target = String(rest[slash...])
            }
            index += 1
        }
        return example.target.isEmpty ? nil : example
    }

    /// HTML text with its character references undone.
    static func unescaped(_ text: String) -> String {
        text.replacing("&lt;", with: "<").replacing("&gt;", with: ">").replacing("&quot;", with: "\"")
            .replacing("&#39;", with: "'").replacing("&amp;", with: "&")
    }
}
