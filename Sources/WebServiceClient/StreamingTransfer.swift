import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One streamed transfer: the blocks received and not yet taken.
///
/// URLSession gives no back-pressure on Linux: FoundationNetworking's
/// `suspend()` only marks the task, libcurl keeps reading, and a block that
/// arrives meanwhile ends the transfer early. So the network is never
/// slowed down; instead, blocks beyond `memoryLimit` bytes waiting for the
/// consumer go to a temporary file (already unlinked, so nothing outlives
/// the process) and are read back in order. Memory stays flat whatever the
/// consumer's pace; a consumer slower than the network costs disk, up to
/// the body's size.
final class StreamingTransfer: TransferHandler, @unchecked Sendable {
    // `@unchecked Sendable`: the mutable fields are touched only with `lock`
    // held; `task` is set once.
    private let lock = NSLock()
    private let task: URLSessionTask
    private var blocks: [Data] = []
    private var blockIndex = 0
    private var buffered = 0
    private var spill: SpillFile?
    private var response: HTTPURLResponse?
    private var completion: Result<Void, any Error>?
    private var waiter: CheckedContinuation<Data?, any Error>?
    private var headWaiter: CheckedContinuation<HTTPURLResponse, any Error>?

    /// The most bytes kept in memory for the consumer.
    static let memoryLimit = 1 << 20
    /// The most bytes read back from the spill file at once.
    static let readBackSize = 64 << 10

    init(task: URLSessionTask) {
        self.task = task
    }

    deinit {
        // An iterator dropped before the end: the transfer stops with it.
        if completion == nil { task.cancel() }
    }

    func cancel() {
        task.cancel()
    }

    // MARK: - Events (the session's delegate queue)

    func received(_ response: HTTPURLResponse?) {
        guard let response else { return }
        lock.lock()
        let isFirst = self.response == nil
        if isFirst { self.response = response }
        let waiter = isFirst ? headWaiter : nil
        if isFirst { headWaiter = nil }
        lock.unlock()
        waiter?.resume(returning: response)
    }

    func received(_ data: Data) {
        lock.lock()
        let waiter = self.waiter
        self.waiter = nil
        var failure: (any Error)?
        if waiter == nil {
            if spill?.hasUnread == true || buffered + data.count > Self.memoryLimit {
                // Past the limit, and until the file is read back, blocks go
                // to the file so that they stay in order.
                do {
                    let file = try spill ?? SpillFile()
                    spill = file
                    try file.append(data)
                } catch {
                    failure = error
                }
            } else {
                blocks.append(data)
                buffered += data.count
            }
        }
        lock.unlock()
        waiter?.resume(returning: data)
        if failure != nil { task.cancel() }
    }

    func completed(_ error: (any Error)?) {
        lock.lock()
        completion = error.map { .failure($0) } ?? .success(())
        let waiter = self.waiter
        let headWaiter = self.headWaiter
        self.waiter = nil
        self.headWaiter = nil
        lock.unlock()
        if let error {
            waiter?.resume(throwing: error)
            headWaiter?.resume(throwing: error)
        } else {
            waiter?.resume(returning: nil)
            headWaiter?.resume(throwing: URLError(.badServerResponse))
        }
    }

    // MARK: - Consumer

    /// The response head, once it is there.
    func head() async throws -> HTTPURLResponse {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                lock.lock()
                var ready: Result<HTTPURLResponse, any Error>?
                if let response {
                    ready = .success(response)
                } else if case .failure(let error)? = completion {
                    ready = .failure(error)
                } else if completion != nil {
                    ready = .failure(URLError(.badServerResponse))
                } else {
                    headWaiter = continuation
                }
                lock.unlock()
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            task.cancel()
        }
    }

    /// The next block of the body, or `nil` at its end.
    func next() async throws -> Data? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                lock.lock()
                let ready = takeLocked(continuation)
                lock.unlock()
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            task.cancel()
        }
    }

    /// A block in memory, else from the file, else the end; or `nil`
    /// after making `continuation` the waiter.
    private func takeLocked(_ continuation: CheckedContinuation<Data?, any Error>) -> Result<Data?, any Error>? {
        if blockIndex < blocks.count {
            let block = blocks[blockIndex]
            blockIndex += 1
            buffered -= block.count
            if blockIndex == blocks.count {
                blocks.removeAll(keepingCapacity: true)
                blockIndex = 0
            }
            return .success(block)
        }
        if let spill, spill.hasUnread {
            return Result { try spill.read(upTo: Self.readBackSize) }
        }
        switch completion {
        case .success?: return .success(nil)
        case .failure(let error)?: return .failure(error)
        case nil:
            waiter = continuation
            return nil
        }
    }

    /// The rest of the body, whole (an error's problem document).
    func remainder() async throws -> Data {
        var data = Data()
        while let block = try await next() { data.append(block) }
        return data
    }
}

/// An unlinked temporary file that blocks are appended to and read back
/// from in order; emptied whenever everything written has been read.
final class SpillFile {
    private let descriptor: Int32
    private var written: Int64 = 0
    private var read: Int64 = 0

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/web-service-stream-XXXXXX").utf8CString)
        descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw URLError(.cannotCreateFile) }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
    }

    deinit {
        close(descriptor)
    }

    var hasUnread: Bool { read < written }

    func append(_ data: Data) throws {
        try data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let count = pwrite(descriptor, bytes.baseAddress! + offset, bytes.count - offset, off_t(written) + off_t(offset))
                guard count > 0 else { throw URLError(.cannotWriteToFile) }
                offset += count
            }
        }
        written += Int64(data.count)
    }

    func read(upTo limit: Int) throws -> Data {
        let count = Int(min(Int64(limit), written - read))
        guard count > 0 else { return Data() }
        var data = Data(count: count)
        let got = data.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress!, count, off_t(read)) }
        guard got == count else { throw URLError(.cannotOpenFile) }
        read += Int64(count)
        if read == written {
            _ = ftruncate(descriptor, 0)
            read = 0
            written = 0
        }
        return data
    }
}
