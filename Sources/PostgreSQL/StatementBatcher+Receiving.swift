internal import CLibPQ
#if canImport(Glibc)
import Glibc
#endif
import EventLoops
import PrometheusMetrics
import Locking

// MARK: - Receiving

extension StatementBatcher {
    func readable(slot: Int) {
        guard case .open(let connection) = slots[slot] else { return }
        receive(on: connection, slot: slot)
        if !waiting.isEmpty { scheduleSend() }
    }

    func receive(on connection: BatcherConnection, slot: Int) {
        guard let handle = connection.connection.handle else { return }
        if connection.needsFlush {
            flush(connection, slot: slot)
            guard case .open = slots[slot] else { return }
        }
        guard PQconsumeInput(handle) == 1 else {
            return fail(connection, slot: slot, with: connection.connection.connectionError())
        }
        while !connection.expected.isEmpty, PQisBusy(handle) == 0 {
            let raw = PQgetResult(handle)
            switch connection.expected[connection.expectedStart] {
            case .preliminary(let statement):
                guard let raw else {
                    connection.advance()
                    continue
                }
                let result = QueryResult(taking: raw)
                guard let error = result.error else { continue }
                // Not prepared after all: the next job that needs it prepares it again.
                statement?.isPrepared = false
                // Skipped after an earlier statement's failure, which tells what happened.
                if result.status == PGRES_PIPELINE_ABORTED { continue }
                // The job's statements fail too (a group's first read's, for the
                // statement that makes the group read-only); this error is the one that tells.
                if let receiving = connection.receivingJob(), connection.inFlight[receiving].failure == nil {
                    connection.inFlight[receiving].failure = error
                }
            case .statement:
                guard let raw else {
                    connection.advance()
                    continue
                }
                let result = QueryResult(taking: raw)
                guard let receiving = connection.receivingJob() else { continue }
                let kept = result.status == PGRES_PIPELINE_ABORTED ? nil : result
                if let spans = connection.inFlight[receiving].spans {
                    let index = connection.inFlight[receiving].results.count
                    if index < spans.count { spans[index].end(kept) }
                }
                connection.inFlight[receiving].results.append(kept)
            case .sync:
                guard let raw else {
                    // Not yet: the synchronization point comes with the next input.
                    return
                }
                let status = PQresultStatus(raw)
                PQclear(raw)
                guard status == PGRES_PIPELINE_SYNC else { continue }
                connection.advance()
                completeGroup(on: connection)
            }
        }
        if PQstatus(handle) == CONNECTION_BAD {
            fail(connection, slot: slot, with: connection.connection.connectionError())
        }
    }

    /// The jobs up to the synchronization point just passed are done: each
    /// gets its results, except the reads skipped after another's failure,
    /// which wait to be sent again (first, keeping their place in line).
    func completeGroup(on connection: BatcherConnection) {
        var skipped: [(job: Job, time: ContinuousClock.Instant)] = []
        while !connection.inFlight.isEmpty {
            let done = connection.removeFirst()
            if !done.isAbandoned {
                if let failure = done.failure {
                    if let role = done.job.access.role, let failure = failure as? DatabaseError {
                        done.job.completion(.failure(RoleError.failure(failure, role: role)))
                    } else {
                        done.job.completion(.failure(failure))
                    }
                } else if done.results.count != done.count {
                    done.job.completion(
                        .failure(
                            DatabaseError(
                                code: .internalError, message: "a pipelined statement came back without a result")))
                } else if done.count > 0, done.results[0] == nil {
                    skipped.append((done.job, done.submitted))
                } else {
                    done.job.completion(.success(done.results))
                }
            }
            if done.endsGroup { break }
        }
        guard !skipped.isEmpty else { return }
        waiting.insert(contentsOf: skipped, at: 0)
        scheduleSend()
    }

    /// The connection is lost: its jobs (and `job`) fail, it closes, and a
    /// new one takes its place on the next job.
    func fail(_ connection: BatcherConnection, slot: Int, with error: DatabaseError, andAlso job: Job? = nil) {
        slots[slot] = .closed
        loop.unregister(connection.registration)
        let lost = connection.removeAll()
        connection.connection.close()
        var failure = error
        if !failure.isConnectionFailure {
            failure = DatabaseError(code: .connectionFailure, message: error.message)
        }
        for inFlight in lost {
            inFlight.endSpansLeft(failure: failure)
            if !inFlight.isAbandoned { inFlight.job.completion(.failure(failure)) }
        }
        job?.completion(.failure(failure))
    }
}
