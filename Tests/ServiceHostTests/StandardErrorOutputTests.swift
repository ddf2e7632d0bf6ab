#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import ServiceHost

/// A pipe whose read end never blocks: what the output wrote so far.
private final class Pipe {
    let readEnd: Int32
    let writeEnd: Int32

    init() {
        var ends: [Int32] = [0, 0]
        precondition(pipe(&ends) == 0)
        (readEnd, writeEnd) = (ends[0], ends[1])
        _ = fcntl(readEnd, F_SETFL, fcntl(readEnd, F_GETFL) | O_NONBLOCK)
        // Room for 1 MB (F_SETPIPE_SZ), so that large writes never block the test.
        _ = fcntl(writeEnd, 1031, 1 << 20)
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Everything written since the last read, as text.
    func read() -> String {
        var text: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = Glibc.read(readEnd, &buffer, buffer.count)
            guard count > 0 else { break }
            text += buffer[..<count]
        }
        return String(decoding: text, as: UTF8.self)
    }
}

private func line(_ text: String) -> [UInt8] {
    Array((text + "\n").utf8)
}

@Test func linesWaitAndThenArriveTogetherInOrder() throws {
    let pipe = Pipe()
    let output = StandardErrorOutput(fileDescriptor: pipe.writeEnd)
    output.write(line("one"), immediately: false)
    output.write(line("two"), immediately: false)
    #expect(pipe.read() == "", "nothing is written at once")

    var written = ""
    let deadline = ContinuousClock.now + .seconds(5)
    while written.isEmpty, ContinuousClock.now < deadline {
        usleep(10_000)
        written = pipe.read()
    }
    #expect(written == "one\ntwo\n")
}

@Test func anImmediateLineWritesWhatWaitsBeforeIt() {
    let pipe = Pipe()
    let output = StandardErrorOutput(fileDescriptor: pipe.writeEnd)
    output.write(line("request"), immediately: false)
    output.write(line("warning"), immediately: true)
    #expect(pipe.read() == "request\nwarning\n")
}

@Test func flushWritesWhatWaits() {
    let pipe = Pipe()
    let output = StandardErrorOutput(fileDescriptor: pipe.writeEnd)
    output.write(line("last words"), immediately: false)
    output.flush()
    #expect(pipe.read() == "last words\n")
    output.flush()
    #expect(pipe.read() == "", "nothing is written twice")
}

@Test func aFullBatchArrivesWhole() {
    let pipe = Pipe()
    let output = StandardErrorOutput(fileDescriptor: pipe.writeEnd)
    output.write(line("first"), immediately: false)
    let started = ContinuousClock.now
    output.write(line(String(repeating: "x", count: StandardErrorOutput.capacity)), immediately: false)
    var written = 0
    while written < StandardErrorOutput.capacity + 7, ContinuousClock.now < started + .seconds(5) {
        usleep(1_000)
        written += pipe.read().utf8.count
    }
    #expect(written == StandardErrorOutput.capacity + 7)
}

@Test func aWriterFarBehindIsCaughtUpByTheLoggingThread() {
    let pipe = Pipe()
    let output = StandardErrorOutput(fileDescriptor: pipe.writeEnd)
    output.write(line(String(repeating: "x", count: 4 * StandardErrorOutput.capacity)), immediately: false)
    #expect(pipe.read().utf8.count == 4 * StandardErrorOutput.capacity + 1, "written before `write` returned")
}

@Test func linesFromManyThreadsStayWhole() async {
    let pipe = Pipe()
    let output = StandardErrorOutput(fileDescriptor: pipe.writeEnd)
    await withTaskGroup(of: Void.self) { group in
        for thread in 0..<8 {
            group.addTask {
                for number in 0..<50 { output.write(line("thread \(thread) line \(number)"), immediately: false) }
            }
        }
    }
    output.flush()
    let lines = pipe.read().split(separator: "\n")
    #expect(lines.count == 400)
    #expect(lines.allSatisfy { $0.wholeMatch(of: /thread \d line \d+/) != nil })
}
