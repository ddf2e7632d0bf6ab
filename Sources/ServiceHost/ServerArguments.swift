import ArgumentParser
import SQLRestVersion

/// The server's options as swift-argument-parser reads them: a `--name`
/// option for each entry of the options table (``ServerOptions``' and the
/// program's own, ``ServerProgram/option(_:variable:meaning:required:flag:)``),
/// made from the table when the command line is read, so that an option is
/// declared once, in the table. After the command line, the environment
/// and the defaults fill in what it leaves out, and the whole is checked;
/// a bad value is a usage error that names its option (exit 64).
///
/// A command of a program that reads the server's options takes them as a
/// group, and its `--help` is the table's:
///
/// ```swift
/// struct Check: ServerOptionsCommand {
///     static let configuration = CommandConfiguration(commandName: "check", abstract: "Checks the services.")
///     @OptionGroup var server: ServerArguments
///     func run() throws {
///         print(server.options[option: "services"] ?? "")
///     }
/// }
/// ```
public struct ServerArguments: ParsableArguments, CustomReflectable {
    /// What the command line is read against: the table of options and
    /// where their variables come from.
    struct Context: Sendable {
        var programOptions: [ServerOptions.Option] = []
        var environmentPrefix = ""
        /// The value of a variable, `nil` when unset.
        var environment: @Sendable (String) -> String? = processEnvironment

        var table: [ServerOptions.Option] { programOptions + ServerOptions.table }
    }

    /// The table the next parse reads (a task-local value: tests parse in parallel with different tables).
    @TaskLocal static var context = Context()

    /// What ``ServerOptions/parse(_:environmentPrefix:programOptions:environment:)`` returns for `--version`.
    static var versionRequest: ServerArguments {
        var arguments = ServerArguments()
        arguments.version = true
        return arguments
    }

    /// The values the command line gives, by option name, in their order.
    var given: [String: [String]] = [:]
    /// Whether `--version` is on the command line.
    var version = false
    /// The settings: the command line's values over the environment's over the defaults.
    public private(set) var options = ServerOptions()

    /// The arguments of an empty command line, as swift-argument-parser asks for.
    ///
    /// ```swift
    /// let arguments = ServerArguments()   // the options' definitions only
    /// ```
    public init() {}

    /// Reads each option of the table from swift-argument-parser's decoder.
    ///
    /// ```swift
    /// let arguments = try ServerArguments.parse(["--port", "9000"])
    /// ```
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        for option in Self.context.table {
            let values: [String]
            if option.isFlag {
                values = try container.decode(Option<String?>.self, forKey: Key(option.name)).wrappedValue.map { [$0] } ?? []
            } else {
                values = try container.decode(Option<[String]>.self, forKey: Key(option.name)).wrappedValue
            }
            if !values.isEmpty { given[option.name] = values }
        }
        version = try container.decode(Flag<Bool>.self, forKey: Key("version")).wrappedValue
    }

    /// Settles ``options``; swift-argument-parser calls it once the command line is read.
    ///
    /// ```swift
    /// var arguments = ServerArguments()
    /// try arguments.validate()   // the environment's values over the defaults
    /// ```
    public mutating func validate() throws {
        if version { throw CleanExit.message(SwiftSQLRest.version) }
        let context = Self.context
        do {
            options = try ServerOptions.settle(
                given, table: context.table, environmentPrefix: context.environmentPrefix, environment: context.environment)
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// The options of the table, for swift-argument-parser, which finds a
    /// type's options by reflection.
    ///
    /// ```swift
    /// Mirror(reflecting: ServerArguments()).children.count   // the table's options, and --version
    /// ```
    public var customMirror: Mirror {
        let prefix = Self.context.environmentPrefix
        var children: [Mirror.Child] = Self.context.table.map { option in
            let help = ArgumentHelp(
                option.meaning.filter { $0 != "`" } + " (env \(option.variable(prefix: prefix))).", valueName: option.name)
            let definition: Any =
                option.isFlag
                ? Option<String?>(
                    wrappedValue: nil, name: .customLong(option.name), defaultAsFlag: "true", parsing: .next, help: help,
                    transform: { $0 })
                // Unconditional, so that a value may begin with `-` (`--shutdown-timeout -1` is refused as a number of seconds).
                : Option<[String]>(wrappedValue: [], name: .customLong(option.name), parsing: .unconditionalSingleValue, help: help)
            return (label: option.name, value: definition)
        }
        children.append((label: "version", value: Flag(wrappedValue: false, name: .customLong("version"), help: "Show the version.")))
        return Mirror(self, children: children)
    }

    /// The coding key of an option: its name.
    struct Key: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

/// A command that reads the server's options (`@OptionGroup var server:
/// ServerArguments`): its `--help` prints the options table, with the
/// defaults the environment gives.
///
/// ```swift
/// struct Check: ServerOptionsCommand {
///     @OptionGroup var server: ServerArguments
///     func run() throws { print(server.options.port) }
/// }
/// ```
public protocol ServerOptionsCommand: ParsableCommand {}

/// `serve`: the server's own command, which ``ServerProgram`` runs.
struct ServeCommand: ServerOptionsCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Serves the services until SIGINT or SIGTERM.")

    @OptionGroup var server: ServerArguments
}

extension ServerOptions {
    /// What reading the command line found: settings, a request for help
    /// (with the defaults the environment gives), or for the version.
    enum Command: Equatable {
        case serve(ServerOptions)
        case help(ServerOptions)
        case version
    }

    /// Reads `arguments` (without the program name) over the environment
    /// variables and the defaults, as ``ServerProgram`` does. `--name
    /// value` and `--name=value` both work; the variables are named with
    /// `environmentPrefix` (`EMPLOYEES_PORT`), except `DATABASE_URL` and
    /// `LOG_LEVEL`.
    static func parse(
        _ arguments: [String], environmentPrefix: String, programOptions: [Option] = [],
        environment: @escaping @Sendable (String) -> String?
    ) throws(UsageError) -> Command {
        let context = ServerArguments.Context(
            programOptions: programOptions, environmentPrefix: environmentPrefix, environment: environment)
        let parsed: Result<ServerArguments?, UsageError> = ServerArguments.$context.withValue(context) {
            do {
                return .success(try ServerArguments.parse(arguments))
            } catch {
                if ServerArguments.exitCode(for: error) == .success {
                    return ServerArguments.message(for: error) == SwiftSQLRest.version
                        ? .success(ServerArguments.versionRequest) : .success(nil)
                }
                return .failure(UsageError(description: ServerArguments.message(for: error)))
            }
        }
        let arguments = try parsed.get()
        if arguments?.version == true { return .version }
        guard let arguments else {
            return .help(try environmentDefaults(table: context.table, environmentPrefix: environmentPrefix, environment: environment))
        }
        return .serve(arguments.options)
    }

    /// The settings `given` on the command line (values by option name)
    /// over the environment's over the defaults, checked.
    static func settle(
        _ given: [String: [String]], table: [Option], environmentPrefix: String, environment: (String) -> String?
    ) throws(UsageError) -> ServerOptions {
        var options = try environmentDefaults(table: table, environmentPrefix: environmentPrefix, environment: environment)
        for option in table {
            for value in given[option.name] ?? [] where !option.apply(&options, value) {
                throw UsageError(description: "The value '\(value)' is invalid for '--\(option.name) \(option.valueName)'.")
            }
        }
        try options.validate()
        for option in table where option.isRequired && options.programOptions[option.name] == nil {
            throw UsageError(
                description: "Missing '--\(option.name) \(option.valueName)' (or \(option.variable(prefix: environmentPrefix))).")
        }
        return options
    }

    /// The settings the environment gives over the defaults, unchecked
    /// (what `--help` shows as the defaults).
    static func environmentDefaults(
        table: [Option], environmentPrefix: String, environment: (String) -> String?
    ) throws(UsageError) -> ServerOptions {
        var options = ServerOptions()
        for option in table {
            let variable = option.variable(prefix: environmentPrefix)
            guard let value = environment(variable), !value.isEmpty else { continue }
            guard option.apply(&options, value) else {
                throw UsageError(description: "The value '\(value)' of \(variable) is invalid for --\(option.name) \(option.valueName).")
            }
        }
        return options
    }
}
