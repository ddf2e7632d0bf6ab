#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Logging
import SQLRest
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
/// sql-rest serve --services services      # serves them (a file with a problem left out, and logged); SIGHUP reads the folder again
/// sql-rest serve --services services --strict  # refuses to start while a file has a problem
/// sql-rest serve --services services --watch   # and so does any change of a file in it
/// ```
@main
enum SQLRestCommand {
    static func main() {
        ServerProgram(
            name: "sql-rest",
            overview: "Serves a folder of annotated .sql files (one operation each) as a REST API.",
            environmentPrefix: "SQL_REST_"
        ) { options, pool in
            do {
                let strict = options[option: "strict"] == "true"
                let loaded = try pool.withConnection { try folder(options).load(on: $0, leavingOut: !strict) }
                logLeftOut(loaded.leftOut)
                return loaded.services
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
        .option(
            "strict", variable: "STRICT",
            meaning:
                "`serve` refuses to start (and a reload keeps the running services) while a file has a problem, instead of serving the others and logging what it left out",
            flag: true
        )
        .command(Check.self)
        .command(Init.self)
        .reloadingOnHangup { options in options[option: "watch"] == "true" ? options[option: "services"] : nil }
        .run()
    }

    /// A warning naming the files left out, then one per problem (`FILE:LINE: message`).
    static func logLeftOut(_ problems: [ServiceProblem]) {
        guard !problems.isEmpty else { return }
        let logger = Logger(label: "sql-rest")
        let files = Set(problems.map(\.file)).count
        logger.warning(
            "Left out \(files) file\(files == 1 ? "" : "s") with problems, serving the others (--strict refuses to start instead):")
        for problem in problems { logger.warning("left out \(problem)") }
    }

    /// The folder of `--services` (required: the options do not parse without it).
    static func folder(_ options: ServerOptions) -> ServiceFolder {
        ServiceFolder(options[option: "services"] ?? "")
    }

    /// The folder's summary on standard output; or every problem on
    /// standard error, and exit 1.
    static func check(_ folder: ServiceFolder, on connection: Connection) throws {
        do {
            print(try folder.load(on: connection).summary)
        } catch let error as ServiceFolder.ReadError {
            printError("--services \(error)")
            throw ExitCode.failure
        } catch {
            printError("\(error)")
            throw ExitCode.failure
        }
    }

    /// A folder that cannot be read, named with its option.
    struct FolderError: Error, CustomStringConvertible {
        let description: String
    }

    static func printError(_ line: String) {
        var text = line + "\n"
        text.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}

/// `sql-rest check`: prepares and describes every statement of the folder.
struct Check: ServerOptionsCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Prepares and describes every statement, prints every problem as FILE:LINE: message (exit 1) or a summary (exit 0).")

    @OptionGroup var server: ServerArguments

    func run() throws {
        let connection: Connection
        do {
            connection = try Connection(server.options.databaseURL)
        } catch {
            SQLRestCommand.printError("\(error)")
            throw ExitCode.failure
        }
        defer { connection.close() }
        try SQLRestCommand.check(SQLRestCommand.folder(server.options), on: connection)
    }
}

/// `sql-rest init`: writes a service folder for every table and view of
/// the schemas, never over a file that exists, prints what it wrote and
/// left, then checks the folder as `check` does.
struct Init: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract:
            "Writes list.sql (and one.sql for a table with a primary key; create, update and delete with --writes) for every table and view of the schemas (public by default), then checks them."
    )

    @Option(help: "libpq connection string or postgresql:// URL (env DATABASE_URL).")
    var databaseURL = getenv("DATABASE_URL").map { String(cString: $0) } ?? ""

    @Option(help: "The folder to write the files into (optional with --live).")
    var out: String?

    @Option(help: "A schema to read (repeatable); public by default.")
    var schema: [String] = []

    @Flag(help: "Also write create, update and delete operations.")
    var writes = false

    @Flag(
        help:
            "Also write live.sql beside the folder (or here, without --out): the triggers that let lists be followed as event streams; apply it with psql -f live.sql."
    )
    var live = false

    func validate() throws {
        guard live || !(out ?? "").isEmpty else { throw ValidationError("Missing '--out <folder>'.") }
    }

    /// Where `init --live` writes `live.sql`: in the folder that holds
    /// `out`, so that the service folder holds service files only.
    static func liveMigrationPath(besides out: String?) -> String {
        var folder = out ?? ""
        while folder.count > 1, folder.hasSuffix("/") { folder.removeLast() }
        guard let slash = folder.lastIndex(of: "/") else { return "live.sql" }
        return String(folder[...slash]) + "live.sql"
    }

    func run() throws {
        let schemas = schema.isEmpty ? ["public"] : schema
        do {
            let connection = try Connection(databaseURL)
            defer { connection.close() }
            let catalog = try DatabaseCatalog.read(schemas: schemas, on: connection)
            guard !catalog.relations.isEmpty || !catalog.functions.isEmpty else {
                SQLRestCommand.printError("Error: no table, view or function in \(schemas.joined(separator: ", ")).")
                throw ExitCode.failure
            }
            let scaffold = ServiceScaffold(catalog: catalog, writes: writes)
            if live {
                let path = Self.liveMigrationPath(besides: out)
                try scaffold.writeLiveMigration(to: path)
                print("wrote \(path): apply it (psql -f \(path)) for lists to be followed as event streams")
            }
            guard let out, !out.isEmpty else { return }
            for relation in scaffold.skipped {
                SQLRestCommand.printError(
                    "skipped \(relation.schema.debugDescription).\(relation.name.debugDescription): a name with a control character")
            }
            let outcomes = try scaffold.write(into: out)
            for outcome in outcomes {
                print(outcome.isWritten ? "wrote \(outcome.path)" : "left \(outcome.path) (it exists)")
            }
            let written = outcomes.filter(\.isWritten).count
            print(
                "\(written) file\(written == 1 ? "" : "s") written, \(outcomes.count - written) left, for \(catalog.relations.count) tables and views; checking them:"
            )
            try SQLRestCommand.check(ServiceFolder(out), on: connection)
        } catch let exit as ExitCode {
            throw exit
        } catch {
            SQLRestCommand.printError("Error: \(error)")
            throw ExitCode.failure
        }
    }
}
