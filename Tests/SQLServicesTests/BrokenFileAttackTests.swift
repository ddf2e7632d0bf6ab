import Foundation
import HTTPTestClient
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A service file never stops the server: every kind of problem `check`
/// knows, fed to `sql-rest` at start (exit 1, each problem as
/// `FILE:LINE: message`, no signal), by SIGHUP and by `--watch` to a
/// running server (which logs the problems and keeps answering with its
/// services); a file at a path the server answers itself (`/jsonrpc`, …)
/// is one of them.
@Suite("A service file never stops the server", .serialized)
struct BrokenFileAttackTests {
    /// A broken file: its text, and the line and words of its problem.
    struct Broken {
        let file: String
        let text: String
        let line: Int
        let problem: String
    }

    /// One file per kind of problem: the header's and the sections' (ServiceFile+Parsing.swift),
    /// the database's (ServiceFolder.swift), the directives against the statements (OperationDraft.swift),
    /// and two files of one route.
    static let broken: [Broken] = [
        Broken(file: "noheader.sql", text: "SELECT 1", line: 1, problem: "the file must begin with a header comment"),
        Broken(
            file: "firstline.sql", text: "-- GETS /k2\nSELECT 1", line: 1, problem: "the header's first line must be a method and a path"),
        Broken(file: "twicevar.sql", text: "-- GET /k3/{a}/{a}\nSELECT :a::int AS a", line: 1, problem: "names the variable {a} twice"),
        Broken(file: "segment.sql", text: "-- GET /k4/a%20b\nSELECT 1", line: 1, problem: "the path segment `a%20b` is neither"),
        Broken(
            file: "variablefirst.sql", text: "-- GET /{id}\nSELECT :id::int AS id", line: 1, problem: "must begin with the service's name"),
        Broken(
            file: "returns.sql", text: "-- GET /k6\n-- @returns many\nSELECT 1 AS one", line: 2,
            problem: "@returns takes `list` or `object`"),
        Broken(
            file: "returnstwice.sql", text: "-- GET /k7\n-- @returns list\n-- @returns list\nSELECT 1 AS one", line: 3,
            problem: "@returns is given twice"),
        Broken(file: "pagedargument.sql", text: "-- GET /k8\n-- @paged 10\nSELECT 1 AS one", line: 2, problem: "@paged takes no argument"),
        Broken(file: "filterlist.sql", text: "-- GET /k9\n-- @filter a, *\nSELECT 1 AS a", line: 2, problem: "@filter takes the labels"),
        Broken(
            file: "filtertwice.sql", text: "-- GET /k10\n-- @filter *\n-- @filter *\nSELECT 1 AS a", line: 3,
            problem: "@filter is given twice"),
        Broken(
            file: "ordertwice.sql", text: "-- GET /k11\n-- @order *\n-- @order *\nSELECT 1 AS a", line: 3, problem: "@order is given twice"),
        Broken(
            file: "notfoundempty.sql", text: "-- GET /k12/{id}\n-- @notfound\nSELECT :id::int AS id", line: 2,
            problem: "@notfound needs the text"),
        Broken(
            file: "serviceempty.sql", text: "-- GET /k13\n-- @service\nSELECT 1 AS one", line: 2, problem: "@service needs the service's"),
        Broken(
            file: "detailinheader.sql", text: "-- GET /k14\n-- @detail x\nSELECT 1 AS one", line: 2,
            problem: "@detail starts a section of its own"),
        Broken(file: "unknownheader.sql", text: "-- GET /k15\n-- @cache 10\nSELECT 1 AS one", line: 2, problem: "unknown directive @cache"),
        Broken(
            file: "paramname.sql", text: "-- GET /k16\n-- @param 1x text\nSELECT 1 AS one", line: 2,
            problem: "@param needs a parameter name"),
        Broken(
            file: "paramquote.sql", text: "-- GET /k17\n-- @param a = \"open\nSELECT CAST(:a AS text) AS a", line: 2,
            problem: "opens a quote that it does not close"),
        Broken(
            file: "paramvalue.sql", text: "-- GET /k18\n-- @param a =\nSELECT CAST(:a AS text) AS a", line: 2,
            problem: "needs a default value"),
        Broken(
            file: "paramtwice.sql", text: "-- GET /k19\n-- @param a one\n-- @param a two\nSELECT CAST(:a AS text) AS a", line: 3,
            problem: "@param a is given twice"),
        Broken(
            file: "directiveindented.sql", text: "-- GET /k20\nSELECT 1 AS one -- @detail x\n", line: 2,
            problem: "a directive comment must begin its line"),
        Broken(
            file: "headerinbody.sql", text: "-- GET /k21\nSELECT 1 AS one;\n-- @paged\n", line: 3, problem: "@paged belongs in the header"),
        Broken(
            file: "unknownbody.sql", text: "-- GET /k22\nSELECT 1 AS one;\n-- @nest x\nSELECT 2", line: 3,
            problem: "unknown directive @nest; sections start"),
        Broken(
            file: "twostatements.sql", text: "-- GET /k23\nSELECT 1 AS one;\nSELECT 2 AS two", line: 3,
            problem: "a GET operation runs one statement"),
        Broken(
            file: "detailname.sql", text: "-- GET /k24/{id}\nSELECT :id::int AS id;\n-- @detail\nSELECT 1 AS one", line: 3,
            problem: "@detail needs a name"),
        Broken(
            file: "streamdotted.sql", text: "-- GET /k25/{id}\nSELECT :id::int AS id;\n-- @stream a.b\nSELECT 1 AS one", line: 3,
            problem: "@stream needs the name of the member"),
        Broken(
            file: "detailempty.sql", text: "-- GET /k26/{id}\nSELECT :id::int AS id;\n-- @detail x\n", line: 3,
            problem: "the detail \"x\" has no query"),
        Broken(
            file: "detailseveral.sql", text: "-- GET /k27/{id}\nSELECT :id::int AS id;\n-- @detail x\nSELECT 1 AS one; SELECT 2 AS two",
            line: 3, problem: "holds 2 statements"),
        Broken(
            file: "detailtwice.sql",
            text: "-- GET /k28/{id}\nSELECT :id::int AS id;\n-- @detail x\nSELECT 1 AS one;\n-- @detail x\nSELECT 2 AS two", line: 5,
            problem: "is declared twice"),
        Broken(
            file: "nostatement.sql", text: "-- GET /k29\n-- Only a header.\n", line: 3,
            problem: "the file has no SQL statement after its header"),
        Broken(file: "syntax.sql", text: "-- GET /k30\nSELECT emp_no,\nFROM employees", line: 3, problem: "syntax error"),
        Broken(file: "column.sql", text: "-- GET /k31\nSELECT nope FROM employees", line: 2, problem: "column \"nope\" does not exist"),
        Broken(
            file: "untyped.sql", text: "-- GET /k32\nSELECT 1 AS one\nWHERE :what IS NULL", line: 3,
            problem: "could not determine data type of parameter :what"),
        Broken(
            file: "writes.sql", text: "-- GET /k33\nWITH gone AS (DELETE FROM titles WHERE false RETURNING title)\nSELECT title FROM gone",
            line: 2, problem: "a GET statement must only read"),
        Broken(
            file: "hiddenwrite.sql", text: hiddenWrite(path: "/k34"), line: 2, problem: "a GET statement must only read"),
        Broken(
            file: "writedetail.sql", text: "-- POST /k35\nUPDATE titles SET title = title WHERE false;\n-- @detail x\nSELECT 1 AS one",
            line: 3, problem: "@detail nests a query in what a GET returns"),
        Broken(
            file: "writepaged.sql", text: "-- POST /k36\n-- @paged\nUPDATE titles SET title = title WHERE false", line: 2,
            problem: "@paged pages what a GET lists"),
        Broken(
            file: "writenotfound.sql", text: "-- DELETE /k37\n-- @notfound Gone.\nUPDATE titles SET title = title WHERE false", line: 2,
            problem: "@notfound is the 404 of a GET"),
        Broken(
            file: "objectpaged.sql", text: "-- GET /k38/{id}\n-- @paged\nSELECT :id::int AS id", line: 2, problem: "@paged pages a list"),
        Broken(
            file: "listnotfound.sql", text: "-- GET /k39\n-- @notfound None.\nSELECT 1 AS one", line: 2,
            problem: "@notfound is the 404 of an operation that returns an object"),
        Broken(
            file: "liststream.sql", text: "-- GET /k40\nSELECT 1 AS one;\n-- @stream s\nSELECT 2 AS two", line: 3,
            problem: "@stream adds a streamed member to an object"),
        Broken(
            file: "jsonrpc.sql", text: "-- GET /jsonrpc\nSELECT 1 AS one", line: 1,
            problem: "/jsonrpc is reserved for the JSON-RPC endpoint"),
        Broken(
            file: "jsonrpcbelow.sql", text: "-- POST /jsonrpc/{id}\nSELECT :id::int AS id", line: 1,
            problem: "/jsonrpc is reserved for the JSON-RPC endpoint"),
        Broken(
            file: "openapi.sql", text: "-- GET /openapi.json\nSELECT 1 AS one", line: 1,
            problem: "/openapi.json is reserved for the OpenAPI document"),
        Broken(
            file: "health.sql", text: "-- GET /health/x\nSELECT 1 AS one", line: 1,
            problem: "/health is reserved for the server's health checks"),
        Broken(
            file: "metrics.sql", text: "-- GET /metrics\nSELECT 1 AS one", line: 1, problem: "/metrics is reserved for the server's metrics"
        ),
        Broken(
            file: "paramunused.sql", text: "-- GET /k41\n-- @param nothing Not used.\nSELECT 1 AS one", line: 2,
            problem: "@param nothing: no statement uses :nothing"),
        Broken(
            file: "variableunused.sql", text: "-- GET /k42/{id}/{other}\nSELECT :id::int AS id", line: 1,
            problem: "the path variable {other} is not used"),
        Broken(
            file: "variabledefault.sql", text: "-- GET /k43/{id}\n-- @param id = 3 Defaulted.\nSELECT :id::int AS id", line: 2,
            problem: "is a path variable, which a request always gives"),
        Broken(
            file: "defaulttype.sql", text: "-- GET /k44\n-- @param n = ten A number.\nSELECT CAST(:n AS integer) AS n", line: 2,
            problem: "is not a valid integer"),
        Broken(
            file: "streamnested.sql",
            text: "-- GET /k45/{id}\nSELECT :id::int AS id;\n-- @stream s\nSELECT 2 AS two;\n-- @detail s.t\nSELECT 3 AS three", line: 5,
            problem: "a streamed member, which takes no detail"),
        Broken(
            file: "orphan.sql", text: "-- GET /k46/{id}\nSELECT :id::int AS id;\n-- @detail a.b\nSELECT 1 AS one", line: 3,
            problem: "which the file does not declare before it"),
        Broken(
            file: "detailparameter.sql", text: "-- GET /k47/{id}\nSELECT :id::int AS id;\n-- @detail x\nSELECT CAST(:nope AS int) AS n",
            line: 4, problem: "neither its parent's columns"),
        Broken(
            file: "ownparameter.sql", text: "-- GET /k48\n-- @paged\nSELECT 1 AS one LIMIT CAST(:limit AS int)", line: 1,
            problem: "the parameter \"limit\" is the operation's own"),
        Broken(
            file: "writefilter.sql", text: "-- POST /k49\n-- @filter *\nUPDATE titles SET title = title WHERE false", line: 2,
            problem: "@filter and @order choose among the rows a GET lists"),
        Broken(
            file: "objectfilter.sql", text: "-- GET /k50/{id}\n-- @filter *\nSELECT :id::int AS id", line: 2,
            problem: "this operation returns an object"),
        Broken(
            file: "filterlabel.sql", text: "-- GET /k51\n-- @filter nope\nSELECT 1 AS one", line: 2,
            problem: "which is not a column of the result"),
        Broken(
            file: "filterparameter.sql", text: "-- GET /k52\n-- @filter a\nSELECT CAST(:a AS int) AS a", line: 2,
            problem: "which is also a parameter of the operation"),
        Broken(
            file: "orderparameter.sql", text: "-- GET /k54\n-- @order *\nSELECT 1 AS one ORDER BY CAST(:order AS text)", line: 2,
            problem: "@order takes the parameter \"order\""),
        Broken(
            file: "notfoundname.sql", text: "-- GET /k55/{id}\n-- @notfound No {nope}.\nSELECT :id::int AS id", line: 2,
            problem: "@notfound names {nope}"),
        Broken(file: "routeone.sql", text: "-- GET /k56/{id}\nSELECT :id::int AS id", line: 0, problem: ""),
        Broken(file: "routetwo.sql", text: "-- GET /k56/{other}\nSELECT :other::int AS id", line: 1, problem: "is also declared by"),
    ]

    /// A GET whose write hides behind a `--` comment ended by a lone
    /// carriage return: PostgreSQL runs the `DELETE`, and the login role,
    /// which may not delete, may not EXPLAIN it either, so its words tell.
    static func hiddenWrite(path: String) -> String {
        "-- GET \(path)\nWITH kept AS (SELECT 1) -- read only\r, gone AS (DELETE FROM titles WHERE false RETURNING title)\nSELECT title FROM gone"
    }

    /// A folder of every broken file, and one that is not UTF-8.
    static func brokenFolder() throws -> String {
        let folder = try Environment.folder(Dictionary(uniqueKeysWithValues: broken.map { ($0.file, $0.text) }))
        try Data([0x2D, 0x2D, 0x20, 0xFF, 0xFE]).write(to: URL(filePath: folder + "/latin1.sql"))
        return folder
    }

    /// Expects every problem of ``broken`` in `printed`, at its file and line.
    static func expectEveryProblem(in printed: String, folder: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let lines = printed.split(separator: "\n")
        for broken in broken where broken.line > 0 {
            let prefix = "\(folder)/\(broken.file):\(broken.line): "
            #expect(
                lines.contains { $0.contains(prefix) && $0.contains(broken.problem) },
                "\(broken.file): no \"\(prefix)…\(broken.problem)…\"", sourceLocation: sourceLocation)
        }
        #expect(
            lines.contains { $0.contains("\(folder)/latin1.sql:1: the file cannot be read as UTF-8 text") }, sourceLocation: sourceLocation)
    }

    /// Whether every problem of ``broken`` has been printed for `folder`.
    static func everyProblemPrinted(in printed: String, folder: String) -> Bool {
        printed.contains("\(folder)/latin1.sql:1:")
            && broken.allSatisfy { $0.line == 0 || printed.contains("\(folder)/\($0.file):\($0.line): ") }
    }

    /// Whether `run` exited on its own with `status`, not by a signal.
    static func exited(_ run: ChildProcess, with status: Int32) -> Bool {
        run.wait(timeout: 60) == status
    }

    static let good = ["things/list.sql": "-- GET /things\nSELECT dept_no AS number FROM departments ORDER BY dept_no LIMIT 2"]

    // MARK: - Reserved paths

    @Test("a file at /jsonrpc, /openapi.json, /health/…, /metrics: check and serve --strict report it at its line and exit 1, no signal")
    func reservedPathsAtStart() throws {
        for broken in Self.broken where broken.problem.contains("is reserved for") {
            let folder = try Environment.folder(Self.good.merging([broken.file: broken.text]) { $1 })
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let expected = "\(folder)/\(broken.file):1: \(broken.problem)"
            let check = try ProcessTests.start(["check", "--services", folder])
            #expect(Self.exited(check, with: 1), "\(broken.file): \(check.errors)")
            #expect(check.errors.contains(expected), "\(check.errors)")
            let serve = try ProcessTests.start(["serve", "--services", folder, "--port", "0", "--strict"])
            #expect(Self.exited(serve, with: 1), "\(broken.file): \(serve.errors)")
            #expect(serve.errors.contains("Error: The services in \(folder) have 1 problem:\n\(expected)"), "\(serve.errors)")
        }
    }

    @Test("saving a file at /jsonrpc under a running server --strict, by SIGHUP or --watch: logged, the server keeps its services")
    func reservedPathOnReload() throws {
        for watch in [false, true] {
            let folder = try Environment.folder(Self.good)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let run = try ProcessTests.start(
                ["serve", "--services", folder, "--port", "0", "--drain-seconds", "0", "--strict"] + (watch ? ["--watch"] : []))
            let port = try run.servingPort()
            try "-- GET /jsonrpc\nSELECT 1 AS one".write(toFile: folder + "/jsonrpc.sql", atomically: true, encoding: .utf8)
            if !watch { run.send(SIGHUP) }
            #expect(run.waitUntilPrinted { $0.contains("\(folder)/jsonrpc.sql:1: /jsonrpc is reserved for the JSON-RPC endpoint") })
            #expect(run.errors.contains("The services were not reloaded; the previous ones still serve"))
            #expect(try TestClient.request("GET", "/things", port: port).status == 200, "watch: \(watch)")
            let call = try TestClient.request(
                "POST", "/jsonrpc", port: port, headers: [("Content-Type", "application/json")],
                body: Array(#"{"jsonrpc":"2.0","method":"things.get","id":1}"#.utf8))
            #expect(call.text.hasPrefix(#"{"jsonrpc":"2.0","id":1,"result":[{"number":"d001"}"#), "\(call.text)")
            run.send(SIGTERM)
            #expect(Self.exited(run, with: 0), "watch: \(watch): \(run.errors.suffix(2000))")
        }
    }

    // MARK: - Every problem

    @Test("every kind of problem at once: check and serve --strict print each at its file and line, and exit 1, no signal")
    func everyProblemAtStart() throws {
        let folder = try Self.brokenFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let check = try ProcessTests.start(["check", "--services", folder])
        #expect(Self.exited(check, with: 1), "\(check.errors)")
        Self.expectEveryProblem(in: check.errors, folder: folder)
        let serve = try ProcessTests.start(["serve", "--services", folder, "--port", "0", "--strict"])
        #expect(Self.exited(serve, with: 1), "\(serve.errors)")
        #expect(serve.errors.hasPrefix("Error: The services in \(folder) have "), "\(serve.errors.prefix(300))")
        Self.expectEveryProblem(in: serve.errors, folder: folder)
    }

    @Test("every kind of problem saved under a running server --strict, by SIGHUP and by --watch: each logged, the old services answer")
    func everyProblemOnReload() throws {
        for watch in [false, true] {
            let folder = try Environment.folder(Self.good)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let run = try ProcessTests.start(
                ["serve", "--services", folder, "--port", "0", "--drain-seconds", "0", "--strict"] + (watch ? ["--watch"] : []))
            let port = try run.servingPort()
            let broken = try Self.brokenFolder()
            defer { try? FileManager.default.removeItem(atPath: broken) }
            for name in try FileManager.default.contentsOfDirectory(atPath: broken) {
                try FileManager.default.copyItem(atPath: broken + "/" + name, toPath: folder + "/" + name)
            }
            if !watch { run.send(SIGHUP) }
            // --watch may reload while the files are still being copied: wait for the reload that saw them all.
            #expect(run.waitUntilPrinted(timeout: 60) { Self.everyProblemPrinted(in: $0, folder: folder) }, "watch: \(watch)")
            #expect(run.errors.contains("The services were not reloaded; the previous ones still serve"))
            Self.expectEveryProblem(in: run.errors, folder: folder)
            #expect(try TestClient.request("GET", "/things", port: port).text == #"[{"number":"d001"},{"number":"d002"}]"#)
            #expect(try TestClient.request("GET", "/health/live", port: port).status == 204)

            // The folder emptied of its files: logged too, and the services stay.
            for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
                try FileManager.default.removeItem(atPath: folder + "/" + name)
            }
            if !watch { run.send(SIGHUP) }
            #expect(run.waitUntilPrinted { $0.contains("--services \(folder): no .sql file in the folder or below it") }, "watch: \(watch)")
            #expect(try TestClient.request("GET", "/things", port: port).status == 200)
            run.send(SIGTERM)
            #expect(Self.exited(run, with: 0), "watch: \(watch): \(run.errors.suffix(2000))")
        }
    }

    // MARK: - A write hidden from the lexer

    @Test("a GET whose DELETE follows a -- comment ended by a lone carriage return is refused by check")
    func hiddenWriteIsRefused() throws {
        let folder = try Environment.folder(["gone.sql": Self.hiddenWrite(path: "/gone")])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let check = try ProcessTests.start(["check", "--services", folder])
        #expect(Self.exited(check, with: 1), "\(check.output)")
        #expect(check.errors.contains("\(folder)/gone.sql:2: a GET statement must only read, but this one writes"), "\(check.errors)")
    }
}
