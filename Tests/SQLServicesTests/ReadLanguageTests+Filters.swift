import Foundation
import HTTPTestClient
import Testing

/// Every operator, logic, JSON paths, casts and aliases, on the tracks and
/// albums of ``ReadLanguageTests``' schema, each against the rows a
/// hand-written condition selects.
extension ReadLanguageTests {
    /// Checks that `path` with `arguments` lists the rows of `table` (`t`) that `condition` selects, by key.
    static func expectKeys(
        _ path: String, _ arguments: KeyValuePairs<String, String>, key: String, table: String, where condition: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let column = key == "trackId" ? "track_id" : key == "albumId" ? "album_id" : "playlist_id"
        let all = arguments.map { ($0.key, $0.value) } + [("select", key)]
        let response = try get(path, all)
        #expect(response.status == 200, "\(target(path, all)): \(response)", sourceLocation: sourceLocation)
        let keys = response.objects.compactMap { $0[key] as? Int }
        let expected = try database(
            "SELECT coalesce(json_agg(t.\(column) ORDER BY t.\(column)), '[]')::text FROM read_test.\(table) t WHERE \(condition)")
        #expect(
            text(keys) == text(expected),
            "\(target(path, all)): \(keys), expected \(text(expected))", sourceLocation: sourceLocation)
    }

    static func tracks(_ arguments: KeyValuePairs<String, String>, _ condition: String, sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        try expectKeys("/track", arguments, key: "trackId", table: "track", where: condition, sourceLocation: sourceLocation)
    }

    static func albums(_ arguments: KeyValuePairs<String, String>, _ condition: String, sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        try expectKeys("/album", arguments, key: "albumId", table: "album", where: condition, sourceLocation: sourceLocation)
    }

    @Test("eq, neq, gt, gte, lt, lte, like and ilike with *, match, imatch, in with quoted values, isdistinct, not.")
    func comparisons() throws {
        try Self.tracks(["milliseconds": "eq.562000"], "milliseconds = 562000")
        try Self.tracks(["milliseconds": "neq.562000"], "milliseconds <> 562000")
        try Self.tracks(["milliseconds": "gt.337000"], "milliseconds > 337000")
        try Self.tracks(["milliseconds": "gte.337000"], "milliseconds >= 337000")
        try Self.tracks(["milliseconds": "lt.200000"], "milliseconds < 200000")
        try Self.tracks(["milliseconds": "lte.200000", "milliseconds": "gt.153000"], "milliseconds <= 200000 AND milliseconds > 153000")
        try Self.tracks(["name": "like.*o*"], "name LIKE '%o%'")
        try Self.tracks(["name": "ilike.s*"], "name ILIKE 's%'")
        try Self.tracks(["name": "not.like.*o*"], "NOT name LIKE '%o%'")
        try Self.tracks(["milliseconds": "like.1*"], "milliseconds::text LIKE '1%'")
        try Self.tracks(["name": "match.^S.*n$"], "name ~ '^S.*n$'")
        try Self.tracks(["name": "imatch.^s"], "name ~* '^s'")
        try Self.tracks(["name": #"in.(Move,"So What","Be My Husband")"#], "name IN ('Move', 'So What', 'Be My Husband')")
        try Self.tracks(["data->>mood": #"in.("calm, quiet",fast)"#], "data->>'mood' IN ('calm, quiet', 'fast')")
        try Self.tracks(["name": "in.()"], "false")
        try Self.tracks(["track_id": "not.in.(100,101)"], "track_id NOT IN (100, 101)")
        try Self.tracks(["explicit": "isdistinct.true"], "explicit IS DISTINCT FROM true")
        try Self.tracks(["explicit": "not.isdistinct.false"], "explicit IS NOT DISTINCT FROM false")
        try Self.tracks(["genreId": "neq.1", "genre_id": "lt.4"], "genre_id <> 1 AND genre_id < 4")
    }

    @Test("is null, not_null, true, false and unknown, in any case; a value of the wrong type is a 400 naming the column")
    func truths() throws {
        try Self.tracks(["explicit": "is.null"], "explicit IS NULL")
        try Self.tracks(["explicit": "is.NULL"], "explicit IS NULL")
        try Self.tracks(["explicit": "is.not_null"], "explicit IS NOT NULL")
        try Self.tracks(["explicit": "not.is.null"], "explicit IS NOT NULL")
        try Self.tracks(["explicit": "is.TRUE"], "explicit IS TRUE")
        try Self.tracks(["explicit": "is.False"], "explicit IS FALSE")
        try Self.tracks(["explicit": "is.unknown"], "explicit IS UNKNOWN")
        try Self.tracks(["explicit": "not.is.true"], "explicit IS NOT TRUE")
        try Self.tracks(["explicit": "eq.t"], "explicit")
        for (name, value) in [
            ("milliseconds", "eq.long"), ("explicit", "eq.maybe"), ("milliseconds", "in.(1,x)"), ("track_id", "eq.99999999999"),
        ] {
            let refused = try Self.get("/track", [name: value])
            #expect(refused.status == 400, "\(name)=\(value): \(refused)")
            #expect(refused.object["parameter"] as? String == name, "\(name)=\(value): \(refused)")
        }
        // An operator that does not apply to the column's type is PostgreSQL's 42883, which PostgREST answers 404.
        for (name, value, status) in [
            ("milliseconds", "is.maybe", 400), ("milliseconds", "is.true", 400), ("name", "cs.{a}", 404), ("released", "eq.soon", 400),
        ] {
            let refused = try Self.get(name == "released" ? "/album" : "/track", [name: value])
            #expect(refused.status == status, "\(name)=\(value): \(refused)")
        }
    }

    @Test("eq(any), like(all) and the others' quantifiers")
    func quantifiers() throws {
        try Self.tracks(["name": #"eq(any).{Move,"So What"}"#], "name = ANY('{Move,\"So What\"}')")
        try Self.tracks(["name": "like(all).{*o*,S*}"], "name LIKE ALL('{%o%,S%}')")
        try Self.tracks(["name": "ilike(any).{s*,*green}"], "name ILIKE ANY('{s%,%green}')")
        try Self.tracks(["milliseconds": "gt(all).{200000,300000}"], "milliseconds > ALL('{200000,300000}')")
        try Self.tracks(["milliseconds": "lte(any).{153000,171000}"], "milliseconds <= ANY('{153000,171000}')")
        try Self.tracks(["name": "not.eq(any).{Move}"], "NOT name = ANY('{Move}')")
    }

    @Test("fts, plfts, phfts and wfts, with and without a configuration, on a tsvector and on text")
    func textSearch() throws {
        try Self.tracks(["search": "fts.blue"], "search @@ to_tsquery('blue')")
        try Self.tracks(["search": "fts(english).blues"], "search @@ to_tsquery('english', 'blues')")
        try Self.tracks(["search": "fts(english).modal & jazz"], "search @@ to_tsquery('english', 'modal & jazz')")
        try Self.tracks(["search": "plfts(english).jazz tune"], "search @@ plainto_tsquery('english', 'jazz tune')")
        try Self.tracks(["search": "phfts(english).blue green"], "search @@ phraseto_tsquery('english', 'blue green')")
        try Self.tracks(["search": "phfts.modal jazz"], "search @@ phraseto_tsquery('modal jazz')")
        try Self.tracks(
            ["search": #"wfts(english)."blues song" -husband"#], "search @@ websearch_to_tsquery('english', '\"blues song\" -husband')")
        try Self.tracks(["search": "not.wfts.run"], "NOT search @@ websearch_to_tsquery('run')")
        try Self.tracks(["name": "fts(english).green"], "to_tsvector('english', name) @@ to_tsquery('english', 'green')")
        try Self.tracks(["name": "plfts.so what"], "to_tsvector(name) @@ plainto_tsquery('so what')")
        let broken = try Self.get("/track", ["search": "fts.blue green"])
        #expect(broken.status == 400, "a text search query that does not parse: \(broken)")
        #expect(try Self.get("/track", ["search": "fts(nope).blue"]).status == 400)
    }

    @Test("cs, cd, ov on arrays; sl, sr, nxl, nxr, adj, cs, cd, ov on ranges")
    func arraysAndRanges() throws {
        try Self.tracks(["tags": "cs.{blues}"], "tags @> '{blues}'")
        try Self.tracks(["tags": #"cs.{"long song"}"#], "tags @> '{\"long song\"}'")
        try Self.tracks(["tags": "cd.{modal,blues,vocal}"], "tags <@ '{modal,blues,vocal}'")
        try Self.tracks(["ratings": "ov.{3,4}"], "ratings && '{3,4}'")
        try Self.tracks(["ratings": "not.ov.{5}"], "NOT ratings && '{5}'")
        try Self.tracks(["ratings": "eq.{5,5,4}"], "ratings = '{5,5,4}'")
        try Self.albums(["period": "sl.[1960,1965)"], "period << '[1960,1965)'")
        try Self.albums(["period": "sr.[1955,1960)"], "period >> '[1955,1960)'")
        try Self.albums(["period": "nxl.[1950,1960)"], "period &> '[1950,1960)'")
        try Self.albums(["period": "nxr.[1950,1960)"], "period &< '[1950,1960)'")
        try Self.albums(["period": "adj.[1966,1970)"], "period -|- '[1966,1970)'")
        try Self.albums(["period": "cs.[1965,1965]"], "period @> '[1965,1965]'::int4range")
        try Self.albums(["period": "cd.[1900,2000)"], "period <@ '[1900,2000)'")
        try Self.albums(["period": "ov.[1950,1960)"], "period && '[1950,1960)'")
    }

    @Test("or, and, not.or and not.and, nested, at the root")
    func logic() throws {
        try Self.tracks(["or": "(milliseconds.lt.160000,name.eq.So What)"], "milliseconds < 160000 OR name = 'So What'")
        try Self.tracks(
            ["or": "(milliseconds.gt.600000,and(explicit.is.true,name.like.B*),not.and(genre_id.gte.2,genre_id.lte.3))"],
            "milliseconds > 600000 OR (explicit IS TRUE AND name LIKE 'B%') OR NOT (genre_id >= 2 AND genre_id <= 3)")
        try Self.tracks(
            ["and": "(milliseconds.gt.160000,or(tags.cs.{modal},data->>mood.eq.calm))"],
            "milliseconds > 160000 AND (tags @> '{modal}' OR data->>'mood' = 'calm')")
        try Self.tracks(["not.or": "(explicit.is.null,milliseconds.gt.500000)"], "NOT (explicit IS NULL OR milliseconds > 500000)")
        try Self.tracks(["not.and": "(explicit.is.true,milliseconds.lt.160000)"], "NOT (explicit IS TRUE AND milliseconds < 160000)")
        try Self.tracks(
            ["or": #"(name.in.("So What",Move),name.not.like.*e*)"#, "milliseconds": "gt.150000"],
            "(name IN ('So What', 'Move') OR NOT name LIKE '%e%') AND milliseconds > 150000")
        try Self.tracks(
            ["or": "(name.eq(any).{Move,Sinnerman},search.fts(english).blue)"],
            "name IN ('Move', 'Sinnerman') OR search @@ to_tsquery('english', 'blue')")
        let malformed = try Self.get("/track", ["or": "(name.eq.x"])
        #expect(malformed.status == 400)
        #expect(malformed.object["code"] as? String == "PGRST100")
        #expect(malformed.object["parameter"] as? String == "or")
    }

    @Test("JSON paths in select, filters and order; casts; aliases")
    func pathsCastsAliases() throws {
        try Self.expect(
            "/track",
            [
                "select": "id:trackId,data->mood,bpm:data->>bpm,data->tags->0,first:tags->0,length:milliseconds::text,trackId::float8",
                "data->>mood": "neq.fast", "order": "data->>mood.desc,trackId",
            ],
            equals: Self.aggregate(
                """
                json_build_object('id', track_id, 'mood', data->'mood', 'bpm', data->>'bpm', 'tags', data->'tags'->0, 'first', to_jsonb(tags)->0,
                  'length', milliseconds::text, 'trackId', track_id::float8)
                """, "FROM read_test.track t WHERE data->>'mood' <> 'fast'", order: "data->>'mood' DESC, track_id"))
        try Self.tracks(["data->bpm": "gt.100"], "data->'bpm' > '100'")
        try Self.tracks(["data->tags->>0": "eq.live"], "data->'tags'->>0 = 'live'")
        try Self.tracks(["tags->>1": "eq.vocal"], "tags[2] = 'vocal'")
        let cast = try Self.get("/track", ["select": "name::text; DROP TABLE track"])
        #expect(cast.status == 400, "\(cast)")
    }

    @Test("every value the server writes in a column is taken back as that column's filter value")
    func writtenValuesFilter() throws {
        let cases: [(path: String, key: String, columns: [String])] = [
            ("/track", "trackId", ["recorded", "tags", "ratings", "explicit", "milliseconds", "name", "data"]),
            ("/album", "albumId", ["released", "price", "period", "title"]), ("/playlist", "playlistId", ["created"]),
        ]
        for (path, key, columns) in cases {
            for column in columns {
                let rows = try Self.get(path, ["select": "\(key),\(column)"])
                #expect(rows.status == 200)
                for row in rows.objects {
                    guard let id = row[key] as? Int, let value = row[column], !(value is NSNull) else { continue }
                    let text: String
                    if let string = value as? String {
                        text = string
                    } else {
                        text = String(
                            decoding: try JSONSerialization.data(withJSONObject: value, options: .fragmentsAllowed), as: UTF8.self)
                    }
                    let found = try Self.get(path, [("select", key), (column, "eq.\(text)")])
                    #expect(found.status == 200, "\(path) \(column)=eq.\(text): \(found)")
                    #expect(found.objects.contains { $0[key] as? Int == id }, "\(path) \(column)=eq.\(text): \(found.text)")
                }
            }
        }
    }
}
