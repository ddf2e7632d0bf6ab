import PostgreSQL
@testable import PostgreSQLWebService
import WebService
import Testing

/// PostgREST's read language, read and turned into SQL without a database.
@Suite struct ReadRequestTests {
    /// Albums and their tracks: a one-to-many one way, many-to-one the other.
    static let graph = ResourceGraph([
        Resource(
            name: "album", sql: #"SELECT id AS "albumId", title, artist_id AS "artistId" FROM album ORDER BY id"#,
            columns: [.init("albumId", type: .int4), .init("title", type: .text), .init("artistId", type: .int4)],
            relationships: [
                Relationship(
                    name: "track", constraint: "track_album_id_fkey", columns: ["album_id"], target: 1, cardinality: .many,
                    link: .columns([.init(source: "albumId", target: "albumId")]))
            ]),
        Resource(
            name: "track", sql: #"SELECT id AS "trackId", name, album_id AS "albumId", milliseconds, data FROM track ORDER BY id"#,
            columns: [
                .init("trackId", type: .int4), .init("name", type: .text), .init("albumId", type: .int4),
                .init("milliseconds", type: .int4), .init("data", type: .jsonb),
            ],
            relationships: [
                Relationship(
                    name: "album", constraint: "track_album_id_fkey", columns: ["album_id"], target: 0, cardinality: .one,
                    link: .columns([.init(source: "albumId", target: "albumId")]))
            ]),
    ])

    static func read(_ resource: Int, _ arguments: [(String, [String])]) throws -> Query {
        let request = try ReadRequest(graph: graph, resource: resource, arguments: arguments.map { (name: $0.0, values: $0.1) })
        return try Query.list(graph.resources[resource].sql).reading(request).resolvingChoices()
    }

    @Test func noArgumentsRunTheStatementAsItIs() throws {
        let query = try Self.read(0, [])
        #expect(query.sql == Self.graph.resources[0].sql)
        #expect(query.embeds.isEmpty)
    }

    @Test func embeddingManyAndOne() throws {
        let albums = try Self.read(0, [("select", ["title,track(name)"])])
        #expect(
            albums.sql.hasPrefix(
                #"SELECT "t0"."title" AS "title", NULL AS "\#u{2}0", NULL AS "\#u{1}hidden", "t0"."albumId" AS "albumId" FROM ("#))
        #expect(albums.embeds.count == 1)
        #expect(albums.embeds[0].kind == .many)
        #expect(albums.embeds[0].query.sql.contains(#"WHERE "t1"."albumId" = :albumId"#))
        let tracks = try Self.read(1, [("select", ["name,album(title)"])])
        #expect(tracks.embeds[0].kind == .one)
    }

    @Test func filtersLogicAndOrder() throws {
        let query = try Self.read(
            1,
            [
                ("milliseconds", ["gt.300000"]), ("or", ["(name.eq.a,and(trackId.gte.2,name.is.null))"]),
                ("order", ["milliseconds.desc.nullslast,name"]), ("data->>genre", ["eq.rock"]),
            ])
        #expect(query.sql.contains(#"WHERE ("t0"."milliseconds" > :readValue"#))
        #expect(query.sql.contains(" OR "))
        #expect(query.sql.contains(#"ORDER BY "t0"."milliseconds" DESC NULLS LAST, "t0"."name" ASC"#))
        #expect(query.sql.contains(#"to_jsonb("t0"."data")->>"#))
    }

    @Test func innerEmbedsAndEmbeddedFilters() throws {
        let query = try Self.read(
            0, [("select", ["title,track!inner(name)"]), ("track.milliseconds", ["lt.1000"]), ("track.limit", ["2"])])
        #expect(query.sql.contains("EXISTS (SELECT 1 FROM ("))
        #expect(query.embeds[0].query.sql.contains(" LIMIT "))
    }

    @Test func spreadsAndEmptyEmbeds() throws {
        let spread = try Self.read(1, [("select", ["name,...album(title)"])])
        #expect(spread.embeds[0].kind == .spread)
        #expect(spread.sql.contains(#"NULL AS "\#u{3}0""#))
        let many = try Self.read(0, [("select", ["title,...track(name)"])])
        #expect(many.embeds[0].kind == .spreadMany)
        let empty = try Self.read(0, [("select", ["title,track!inner()"]), ("track.name", ["eq.x"])])
        #expect(empty.embeds.isEmpty, "an empty embed is written nowhere")
        #expect(empty.sql.contains("EXISTS ("))
    }

    @Test func problemsNameTheirParameter() throws {
        #expect(throws: ReadError.self) { try Self.read(0, [("select", ["nope"])]) }
        #expect(throws: ReadError.self) { try Self.read(0, [("select", ["title,genre(*)"])]) }
        #expect(throws: ReadError.self) { try Self.read(0, [("track.name", ["eq.x"])]) }
        #expect(throws: ReadError.self) { try Self.read(0, [("albumId", ["eq.abc"])]) }
        #expect(throws: ReadError.self) { try Self.read(0, [("title", ["xx.abc"])]) }
        // Nothing may follow a logic tree's closing parenthesis.
        #expect(throws: ReadError.self) { try Self.read(0, [("or", ["(title.eq.x) OR ('1'='1)"])]) }
    }

    @Test func limitsNameThemselvesAndPostgreSQLsParametersAreNeverPassed() throws {
        let filters = (0..<51).map { _ in "gte.1" }
        var limits = ReadLimits(RequestLimits(filters: 50))
        do {
            _ = try ReadRequest(graph: Self.graph, resource: 0, arguments: [("albumId", filters)], limits: limits)
            Issue.record("51 filters past a limit of 50")
        } catch {
            let problem = try #require(error.httpError)
            #expect(String(decoding: problem.problemJSON, as: UTF8.self).contains(#""limit":"filters","maximum":50"#))
        }
        // Past raised limits, a statement of 70,000 bound values is refused before it is sent.
        limits.conditions = 100_000
        let many = try ReadRequest(
            graph: Self.graph, resource: 0, arguments: [("albumId", (0..<70_000).map { _ in "gte.1" })], limits: limits)
        #expect {
            _ = try Query.list(Self.graph.resources[0].sql).reading(many).resolvingChoices()
        } throws: { error in
            let json = (error as? HTTPError).map { String(decoding: $0.problemJSON, as: UTF8.self) } ?? ""
            return json.contains(#""limit":"postgreSQLParameters","maximum":65535"#)
        }
    }
}
