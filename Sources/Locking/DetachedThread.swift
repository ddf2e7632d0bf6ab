#if canImport(Glibc)
import Glibc
#endif

/// A detached pthread for a loop that lives as long as the process (the
/// server's header watchdog, the log's flusher): no Swift concurrency
/// executor and no join.
///
/// ```swift
/// if !DetachedThread.start({ watchdog.watch() }) {
///     // no thread: run without it
/// }
/// ```
public enum DetachedThread {
    private final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    /// Runs `body` on a new detached thread; `false` when the thread could
    /// not be created (`body` is then released without running).
    @discardableResult
    public static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        var thread = pthread_t()
        let box = Unmanaged.passRetained(Body(body))
        let created = pthread_create(
            &thread, nil,
            { argument in
                // `argument` is the body passed to pthread_create: never nil.
                Unmanaged<Body>.fromOpaque(argument!).takeRetainedValue().run()
                return nil
            }, box.toOpaque())
        guard created == 0 else {
            box.release()
            return false
        }
        pthread_detach(thread)
        return true
    }
}
