#if canImport(Glibc)
import Glibc
#endif

/// Runs `body` on a new pthread (not the cooperative pool: it blocks).
func onThread(_ body: @escaping @Sendable () -> Void) -> pthread_t {
    final class Box { let body: @Sendable () -> Void; init(_ body: @escaping @Sendable () -> Void) { self.body = body } }
    var thread = pthread_t()
    let created = pthread_create(
        &thread, nil,
        { argument in
            Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue().body()
            return nil
        }, Unmanaged.passRetained(Box(body)).toOpaque())
    precondition(created == 0)
    return thread
}
