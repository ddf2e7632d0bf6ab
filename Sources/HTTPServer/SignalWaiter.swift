#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The write end of the self-pipe; the only thing the signal handler
/// touches. Set before the handler is installed and reset after it is
/// removed, by `SignalWaiter.wait` alone.
nonisolated(unsafe) private var signalPipeWriteEnd: Int32 = -1

/// SIGINT and SIGTERM received since `SignalWaiter.wait` began; the
/// handler reads and adds to it (a lock-free atomic is async-signal-safe).
private let terminationSignalsReceived = Atomic<Int>(0)

/// Waits for termination signals with the self-pipe trick.
///
/// A process-wide handler (installed with `sigaction`, so it works whichever
/// thread the kernel picks, unlike `sigwait`, which needs every thread to
/// block the signal) writes the signal number to a pipe; the waiting thread
/// reads it. Only `write(2)`, which is async-signal-safe, runs in the handler.
///
/// ```swift
/// SignalWaiter.wait(for: [SIGINT, SIGTERM]) { signal in server.stop() }
/// ```
enum SignalWaiter {
    /// Blocks until one of `signals` arrives, runs `then` with it while the
    /// handlers are still installed, then restores the previous handlers;
    /// waits for the next signal instead while `then` returns `true`.
    /// `ready` runs once the handlers are installed: a signal sent after
    /// it (by a script that waits for a line `ready` logs) is handled.
    ///
    /// A second SIGINT or SIGTERM while `then` runs (a graceful stop that
    /// takes too long for the operator) ends the process at once, with
    /// `_exit(128 + signal)` from the handler, as the default action of
    /// the signal would.
    static func wait(for signals: [Int32], ready: () -> Void = {}, then: (Int32) -> Bool) {
        var ends: [Int32] = [-1, -1]
        // The server is serving by now: a pipe fails only when the process
        // has no descriptor left at all, which the open-file limit the server
        // raises at start and `--max-connections` below it keep from happening.
        guard pipe(&ends) == 0 else {
            fatalError("cannot create the signal pipe: errno \(errno)")
        }
        signalPipeWriteEnd = ends[1]
        terminationSignalsReceived.store(0, ordering: .relaxed)

        var handler = sigaction()
        handler.__sigaction_handler.sa_handler = { signal in
            if signal == SIGINT || signal == SIGTERM,
                terminationSignalsReceived.add(1, ordering: .relaxed).newValue > 1
            {
                _exit(128 + signal)
            }
            var byte = UInt8(truncatingIfNeeded: signal)
            _ = write(signalPipeWriteEnd, &byte, 1)
        }
        sigemptyset(&handler.sa_mask)
        handler.sa_flags = SA_RESTART
        var previous = Array(repeating: sigaction(), count: signals.count)
        for (index, signal) in signals.enumerated() {
            sigaction(signal, &handler, &previous[index])
        }
        // A process inherits the signal mask of the thread that started it
        // (the test runner's threads block SIGTERM, for one): unblocked
        // here, the signals reach this thread instead of staying pending.
        var waited = sigset_t()
        sigemptyset(&waited)
        for signal in signals { sigaddset(&waited, signal) }
        var previousMask = sigset_t()
        pthread_sigmask(SIG_UNBLOCK, &waited, &previousMask)
        ready()

        var byte: UInt8 = 0
        repeat {
            while read(ends[0], &byte, 1) != 1 {}
        } while then(Int32(byte))

        pthread_sigmask(SIG_SETMASK, &previousMask, nil)
        for (index, signal) in signals.enumerated() {
            sigaction(signal, &previous[index], nil)
        }
        signalPipeWriteEnd = -1
        close(ends[0])
        close(ends[1])
    }

    static func name(of signal: Int32) -> String {
        switch signal {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        case SIGHUP: "SIGHUP"
        default: "signal \(signal)"
        }
    }
}
