import ArgumentParser
import SQLRestVersion

// MARK: - The command line

extension ServerProgram {
    /// Runs the command `arguments` name (swift-argument-parser reads
    /// them), and returns the exit status.
    func runCommand(_ arguments: [String], context: ServerArguments.Context) -> Int32 {
        let command: any ParsableCommand
        do {
            command = try ProgramCommand.parseAsRoot(arguments)
        } catch {
            return exitStatus(error)
        }
        // A command that is none of the program's is swift-argument-parser's `help`.
        let isHelp =
            !(command is ProgramCommand || command is ServeCommand || command is HashPasswordCommand)
            && !commands.contains { type(of: command) == $0 }
        if isHelp, let help = tableHelp(arguments, context: context) {
            print(help, terminator: "")
            return 0
        }
        if let serve = command as? ServeCommand {
            do {
                try self.serve(serve.server.options)
                return 0
            } catch {
                printError("Error: \(error)")
                return 1
            }
        }
        do {
            var command = command
            try command.run()
            return 0
        } catch {
            return exitStatus(error)
        }
    }

    /// The options table as `--help` prints it, with the defaults the
    /// environment gives, for a command that reads the server's options;
    /// `nil` for another (`hash-password`, which swift-argument-parser describes).
    private func tableHelp(_ arguments: [String], context: ServerArguments.Context) -> String? {
        let named = ProgramCommand.configuration.subcommands.first { $0._commandName == arguments.first }
        guard named.map({ $0 is any ServerOptionsCommand.Type }) ?? true else { return nil }
        let defaults: ServerOptions
        do {
            defaults = try ServerOptions.environmentDefaults(
                table: context.table, environmentPrefix: environmentPrefix, environment: context.environment)
        } catch {
            return nil
        }
        let commandList =
            commands.isEmpty
            ? [] : ([ServeCommand.self] + commands).map { ($0._commandName, $0.configuration.abstract) }
        return ServerOptions.help(
            defaults: defaults, program: name, overview: overview, environmentPrefix: environmentPrefix,
            programOptions: programOptions, commands: commandList)
    }

    /// Prints what swift-argument-parser says of `error` (a usage error,
    /// help, the version) and returns its exit status: 64 (`EX_USAGE`) for
    /// a usage error.
    private func exitStatus(_ error: any Error) -> Int32 {
        let message = ProgramCommand.fullMessage(for: error)
        let status = ProgramCommand.exitCode(for: error)
        if !message.isEmpty {
            if status == .success { print(message) } else { printError(message) }
        }
        return status.rawValue
    }
}

/// The program's command line, as swift-argument-parser reads it: `serve`
/// (the command when the program has no other), the program's own
/// commands, and `hash-password`.
struct ProgramCommand: ParsableCommand {
    /// The program whose command line is read.
    struct Program: Sendable {
        var name = ""
        var overview = ""
        var commands: [any ParsableCommand.Type] = []
    }

    /// The program `ServerProgram.run` reads the command line of.
    @TaskLocal static var program = Program()

    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: program.name, abstract: program.overview, version: SwiftSQLRest.version,
            subcommands: [ServeCommand.self] + program.commands + [HashPasswordCommand.self],
            defaultSubcommand: program.commands.isEmpty ? ServeCommand.self : nil)
    }

    func run() throws {
        let commands: [any ParsableCommand.Type] = [ServeCommand.self] + Self.program.commands
        let names = commands.map { $0._commandName }
        throw ValidationError("Missing command (\(names.joined(separator: ", "))).")
    }
}
