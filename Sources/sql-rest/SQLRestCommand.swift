#if canImport(Glibc)
import Glibc
#endif
import PostgreSQL
import ServiceHost
import SQLServices

/// Serves a folder of annotated `.sql` files as a REST API; `--help` lists
/// the commands and options, each option also a `SQL_REST_` environment
/// variable. docs/SQL-SERVICES.md describes the files.
///
/// ```
/// sql-rest init --database-url URL --out api [--schema NAME ...] [--writes]   # a file per operation, from the catalog
/// sql-rest init --database-url URL --out api --live   # and live.sql beside api/: the triggers of event streams
/// sql-rest check --services services      # prepares and describes every statement; 0 when all is well
/// sql-rest check --services services/employees/list.sql   # one file: its problems only
/// sql-rest serve --services services      # serves them; SIGHUP reads the folder again
/// sql-rest serve --services services --watch   # and so does any change of a file in it
/// ```
@main
enum SQLRestCommand {
    static func main() {
        if CommandLine.arguments.dropFirst().first == "init" {
            exit(initCommand(Array(CommandLine.arguments.dropFirst(2))))
        }
        ServerProgram(
            name: "sql-rest",
            overview: "Serves a folder of annotated .sql files (one operation each) as a REST API.",
            environmentPrefix: "SQL_REST_"
        ) { options, pool in
            do {
                return try pool.withConnection { try folder(options).load(on: $0).services }
            } catch let error as ServiceFolder.ReadError {
                throw FolderError(description: "--services \(error)")
            }
        }
        .option(
            "services", variable: "SERVICES",
            meaning:
                "Folder of the `.sql` files, one operation each, read recursively; `check` also takes one file, and prints its problems only",
            required: true
        )
        .option(
            "watch", variable: "WATCH", meaning: "`serve` reloads the services when a file in the folder changes, as SIGHUP does",
            flag: true
        )
        .command(
            "check",
            summary: "Prepares and describes every statement, prints every problem as FILE:LINE: message (exit 1) or a summary (exit 0)."
        ) { options in
            do {
                let connection = try Connection(options.databaseURL)
                defer { connection.close() }
                return check(folder(options), on: connection)
            } catch {
                printError("\(error)")
                return 1
            }
        }
        .reloadingOnHangup { options in options[option: "watch"] == "true" ? options[option: "services"] : nil }
        .run()
    }

    /// `check`: the folder's summary on standard output, 0; or every problem on standard error, 1.
    static func check(_ folder: ServiceFolder, on connection: Connection) -> Int32 {
        do {
            print(try folder.load(on: connection).summary)
            return 0
        } catch let error as ServiceFolder.ReadError {
            printError("--services \(error)")
            return 1
        } catch {
            printError("\(error)")
            return 1
        }
    }

    /// The folder of `--services` (required: the options do not parse without it).
    static func folder(_ options: ServerOptions) -> ServiceFolder {
        ServiceFolder(options[option: "services"] ?? "")
    }

    /// `sql-rest init --database-url URL --out DIR [--schema NAME ...] [--writes] [--live]`:
    /// writes a service folder for every table and view of the schemas
    /// (`public` by default), never over a file that exists, prints what it
    /// wrote and left, then checks the folder as `check` does. With
    /// `--live`, also writes `live.sql` beside the folder (in the current
    /// folder without `--out`), the migration that makes lists followable
    /// as event streams, which the user applies (docs/LIVE.md).
    static func initCommand(_ arguments: [String]) -> Int32 {
        let usage = "Usage: sql-rest init --database-url <url> --out <folder> [--schema <name> ...] [--writes] [--live]"
        var databaseURL = getenv("DATABASE_URL").map { String(cString: $0) } ?? ""
        var out: String?
        var schemas: [String] = []
        var writes = false
        var live = false
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "--database-url": databaseURL = remaining.popFirst() ?? ""
            case "--out": out = remaining.popFirst()
            case "--schema":
                guard let schema = remaining.popFirst() else { printError(usage); return 64 }
                schemas.append(schema)
            case "--writes": writes = true
            case "--live": live = true
            case "-h", "--help":
                print(
                    usage
                        + "\nWrites list.sql (and one.sql for a table with a primary key; create, update and delete with --writes) for every table and view of the schemas (public by default), then checks them."
                        + "\nWith --live, also writes live.sql beside the folder (or here, without --out): the triggers that let lists be followed as event streams; apply it with psql -f live.sql."
                )
                return 0
            default:
                printError("Error: Unexpected argument '\(argument)'.\n" + usage)
                return 64
            }
        }
        guard live || !(out ?? "").isEmpty else {
            printError("Error: Missing '--out <folder>'.\n" + usage)
            return 64
        }
        do {
            let connection = try Connection(databaseURL)
            defer { connection.close() }
            let catalog = try DatabaseCatalog.read(schemas: schemas.isEmpty ? ["public"] : schemas, on: connection)
            guard !catalog.relations.isEmpty else {
                printError("Error: no table or view in \((schemas.isEmpty ? ["public"] : schemas).joined(separator: ", ")).")
                return 1
            }
            let scaffold = ServiceScaffold(catalog: catalog, writes: writes)
            if live {
                let path = liveMigrationPath(besides: out)
                try scaffold.writeLiveMigration(to: path)
                print("wrote \(path): apply it (psql -f \(path)) for lists to be followed as event streams")
            }
            guard let out, !out.isEmpty else { return 0 }
            for relation in scaffold.skipped {
                printError("skipped \(relation.schema.debugDescription).\(relation.name.debugDescription): a name with a control character")
            }
            let outcomes = try scaffold.write(into: out)
            for outcome in outcomes {
                print(outcome.isWritten ? "wrote \(outcome.path)" : "left \(outcome.path) (it exists)")
            }
            let written = outcomes.filter(\.isWritten).count
            print(
                "\(written) file\(written == 1 ? "" : "s") written, \(outcomes.count - written) left, for \(catalog.relations.count) tables and views; checking them:"
            )
            return check(ServiceFolder(out), on: connection)
        } catch {
            printError("Error: \(error)")
            return 1
        }
    }

    /// Where `init --live` writes `live.sql`: in the folder that holds
    /// `out`, so that the service folder holds service files only.
    static func liveMigrationPath(besides out: String?) -> String {
        var folder = out ?? ""
        while folder.count > 1, folder.hasSuffix("/") { folder.removeLast() }
        guard let slash = folder.lastIndex(of: "/") else { return "live.sql" }
        return String(folder[...slash]) + "live.sql"
    }

    /// A folder that cannot be read, named with its option.
    struct FolderError: Error, CustomStringConvertible {
        let description: String
    }

    private static func printError(_ line: String) {
        var text = line + "\n"
        text.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
