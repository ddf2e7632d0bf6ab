// MARK: - live.sql: the triggers of the live feed

extension ServiceScaffold {
    /// The channel the triggers notify, which servers listen on (`LiveConfiguration.channel`).
    public static let liveChannel = "sql_rest_live"

    /// The migration `sql-rest init --live` writes, `live.sql`, which the
    /// user applies (`psql -f live.sql`): for each table of the catalog, a
    /// trigger that sends every committed change of a row on one channel
    /// (``liveChannel``) as the table, the operation, the row's key
    /// before and after, and the keys of the rows it refers to by its
    /// foreign keys (`docs/LIVE.md`). No row's values: the servers read
    /// the changed rows again, as each caller may see them. A payload past
    /// PostgreSQL's limit of 8,000 bytes (keys of long text) is sent as
    /// "the whole table", as a `TRUNCATE` is.
    ///
    /// Keys are written as PostgreSQL writes them as text, in ISO dates
    /// and in UTC, whatever the writer's session says. Applying it again
    /// (after a table's key or foreign keys changed) replaces what it made.
    ///
    /// ```swift
    /// try ServiceScaffold(catalog: catalog).liveMigration.write(toFile: "live.sql", atomically: true, encoding: .utf8)
    /// ```
    public var liveMigration: String {
        let tables = catalog.relations.filter { !$0.isView && Self.isWritable($0) }
        var text = """
            -- live.sql, written by `sql-rest init --live`: every committed change of
            -- the tables below is sent on the channel \(Self.liveChannel), as the table,
            -- the operation and the keys of the row (and of the rows it refers to),
            -- never its values; sql-rest's servers read the changed rows again for
            -- the callers who follow them (docs/LIVE.md). Apply it with
            -- `psql -f live.sql`; write and apply it again when a table, its primary
            -- key or its foreign keys change.
            BEGIN;

            CREATE SCHEMA IF NOT EXISTS sql_rest_live;

            -- `refs` with `key` added to the keys of `relation`, once.
            CREATE OR REPLACE FUNCTION sql_rest_live.add_key(refs jsonb, relation text, key jsonb) RETURNS jsonb
            LANGUAGE sql IMMUTABLE AS $$
              SELECT CASE WHEN EXISTS (SELECT FROM jsonb_array_elements(refs -> relation) AS known WHERE known = key) THEN refs
                          ELSE jsonb_set(refs, ARRAY[relation], coalesce(refs -> relation, '[]') || jsonb_build_array(key)) END
            $$;

            """
        for table in tables {
            text += "\n" + liveTrigger(table)
        }
        text += "\nCOMMIT;\n"
        return text
    }

    /// The function and triggers of one table.
    private func liveTrigger(_ table: DatabaseCatalog.Relation) -> String {
        let relation = table.schema + "." + table.name
        let qualified = Self.quotedIdentifier(table.schema) + "." + Self.quotedIdentifier(table.name)
        let function = "sql_rest_live." + Self.quotedIdentifier(relation)
        let name = Self.literal(relation)
        let key = table.primaryKey
        var old: [String] = []
        var new: [String] = []
        if !key.isEmpty {
            old.append("    keys := jsonb_build_array(jsonb_build_array(\(Self.keyArray(key, row: "OLD"))));")
            new.append("    IF keys -> 0 IS DISTINCT FROM jsonb_build_array(\(Self.keyArray(key, row: "NEW"))) THEN")
            new.append("      keys := keys || jsonb_build_array(jsonb_build_array(\(Self.keyArray(key, row: "NEW"))));")
            new.append("    END IF;")
        }
        for reference in references(of: table) {
            for (row, lines) in [("OLD", 0), ("NEW", 1)] {
                let condition = reference.columns.map { "\(row).\(Self.quotedIdentifier($0)) IS NOT NULL" }.joined(separator: " AND ")
                let line = """
                        IF \(condition) THEN
                          refs := sql_rest_live.add_key(refs, \(Self.literal(reference.relation)), jsonb_build_array(\(Self.keyArray(reference.columns, row: row))));
                        END IF;
                    """
                if lines == 0 { old.append(line) } else { new.append(line) }
            }
        }
        let keyNote =
            key.isEmpty ? "no primary key: its changes reach lists by the rows it refers to" : "key \(key.joined(separator: ", "))"
        return """
            -- \(relation): \(keyNote)
            CREATE OR REPLACE FUNCTION \(function)() RETURNS trigger
            LANGUAGE plpgsql
            SET datestyle TO 'ISO, YMD' SET intervalstyle TO 'postgres' SET timezone TO 'UTC' SET extra_float_digits TO '1'
            AS $$
            DECLARE
              keys jsonb := '[]';
              refs jsonb := '{}';
              payload text;
            BEGIN
              IF TG_OP = 'TRUNCATE' THEN
                PERFORM pg_notify('\(Self.liveChannel)', jsonb_build_object('relation', \(name), 'op', TG_OP, 'whole', true)::text);
                RETURN NULL;
              END IF;
              IF TG_OP <> 'INSERT' THEN
            \(old.joined(separator: "\n"))
              END IF;
              IF TG_OP <> 'DELETE' THEN
            \(new.joined(separator: "\n"))
              END IF;
              payload := jsonb_build_object('relation', \(name), 'op', TG_OP, 'keys', keys, 'refs', refs)::text;
              IF octet_length(payload) > 7999 THEN
                payload := jsonb_build_object('relation', \(name), 'op', TG_OP, 'whole', true)::text;
              END IF;
              PERFORM pg_notify('\(Self.liveChannel)', payload);
              RETURN NULL;
            END
            $$;
            DROP TRIGGER IF EXISTS sql_rest_live ON \(qualified);
            CREATE TRIGGER sql_rest_live AFTER INSERT OR UPDATE OR DELETE ON \(qualified)
              FOR EACH ROW EXECUTE FUNCTION \(function)();
            DROP TRIGGER IF EXISTS sql_rest_live_truncate ON \(qualified);
            CREATE TRIGGER sql_rest_live_truncate AFTER TRUNCATE ON \(qualified)
              FOR EACH STATEMENT EXECUTE FUNCTION \(function)();

            """
    }

    /// The tables `table` refers to by a foreign key on their primary key,
    /// each with `table`'s columns in the order of that key.
    private func references(of table: DatabaseCatalog.Relation) -> [(relation: String, columns: [String])] {
        table.foreignKeys.compactMap { foreignKey in
            guard
                let referenced = catalog.relations.first(where: {
                    $0.schema == foreignKey.referencedSchema && $0.name == foreignKey.referencedName
                }), !referenced.primaryKey.isEmpty, Set(referenced.primaryKey) == Set(foreignKey.referencedColumns)
            else { return nil }
            let columns = referenced.primaryKey.compactMap { keyColumn in
                foreignKey.referencedColumns.firstIndex(of: keyColumn).map { foreignKey.columns[$0] }
            }
            guard columns.count == referenced.primaryKey.count else { return nil }
            return (referenced.schema + "." + referenced.name, columns)
        }
    }

    /// `ROW.a::text, ROW.b::text`: a key's values as text.
    private static func keyArray(_ columns: [String], row: String) -> String {
        columns.map { "\(row).\(quotedIdentifier($0))::text" }.joined(separator: ", ")
    }

    /// An identifier, always double-quoted.
    static func quotedIdentifier(_ name: String) -> String {
        "\"" + name.replacing("\"", with: "\"\"") + "\""
    }

    /// A string literal.
    private static func literal(_ text: String) -> String {
        "'" + text.replacing("'", with: "''") + "'"
    }
}
