#if canImport(Glibc)
import Glibc
#endif
import PostgreSQL
import SQLRestServer
import SQLServices

/// Serves a folder of annotated `.sql` files as a REST API; `--help` lists
/// the commands and options, each option also a `SQL_REST_` environment
/// variable. docs/SQL-SERVICES.md describes the files.
///
/// ```
/// sql-rest check --services services      # prepares and describes every statement; 0 when all is well
/// sql-rest check --services services/employees/list.sql   # one file: its problems only
/// sql-rest serve --services services      # serves them; SIGHUP reads the folder again
/// sql-rest serve --services services --watch   # and so does any change of a file in it
/// ```
@main
enum SQLRest {
    static func main() {
        SQLRestServer(
            name: "sql-rest",
            overview: "Serves a folder of annotated .sql files (one operation each) as a REST API.",
            environmentPrefix: "SQL_REST_"
        ) { options, pool in
            try pool.withConnection { try ServiceFolder(options[option: "services"]!).load(on: $0).services }
        }
        .option("services", variable: "SERVICES",
                meaning: "Folder of the `.sql` files, one operation each, read recursively; `check` also takes one file, and prints its problems only",
                required: true)
        .option("watch", variable: "WATCH", meaning: "`serve` reloads the services when a file in the folder changes, as SIGHUP does", flag: true)
        .command("check", summary: "Prepares and describes every statement, prints every problem as FILE:LINE: message (exit 1) or a summary (exit 0).") { options in
            do {
                let connection = try Connection(options.databaseURL)
                defer { connection.close() }
                print(try ServiceFolder(options[option: "services"]!).load(on: connection).summary)
                return 0
            } catch {
                var text = "\(error)\n"
                text.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
                return 1
            }
        }
        .reloadingOnHangup { options in options[option: "watch"] == "true" ? options[option: "services"] : nil }
        .run()
    }
}
