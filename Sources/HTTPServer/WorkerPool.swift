import Locking

/// Threads for the work an event loop must not do: handlers that block
/// and the pulls of streamed bodies. A thread is started when a task finds
/// none idle (up to `limit`), and ends after 30 s without work.
final class WorkerPool: @unchecked Sendable {
    // `@unchecked Sendable`: every stored property is touched only with `lock` held.
    private let lock = ConditionLock()
    private var tasks: [() -> Void] = []
    private var taskStart = 0
    private var idle = 0
    private var threads = 0
    private let limit: Int

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Runs `task` on a worker thread, soon. Past `limit` busy threads it waits for one.
    func submit(_ task: @escaping () -> Void) {
        lock.lock()
        tasks.append(task)
        let waiting = tasks.count - taskStart
        if waiting <= idle {
            lock.signal()
            lock.unlock()
            return
        }
        let mustStart = threads < limit
        if mustStart { threads += 1 }
        lock.unlock()
        if mustStart, !DetachedThread.start({ self.work() }) {
            lock.withLock { threads -= 1 }
        }
    }

    private func work() {
        while true {
            lock.lock()
            idle += 1
            while tasks.count == taskStart {
                if !lock.wait(until: .now + .seconds(30)), tasks.count == taskStart {
                    idle -= 1
                    threads -= 1
                    lock.unlock()
                    return
                }
            }
            idle -= 1
            let task = tasks[taskStart]
            taskStart += 1
            if taskStart == tasks.count {
                tasks.removeAll(keepingCapacity: true)
                taskStart = 0
            }
            lock.unlock()
            task()
        }
    }
}

/// The workers run the jobs of `async` handlers' tasks
/// (``HTTPResponse/async(_:)``), which therefore never run on an event loop
/// or on Swift's cooperative pool, where a blocking call would hold up
/// other tasks.
extension WorkerPool: TaskExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        submit { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
