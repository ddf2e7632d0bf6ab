import Foundation
import HTTPTestClient
import Testing

/// A browser's own `EventSource`, in headless Chromium (Debian's
/// `chromium`, which scripts/setup installs): the page the fixture serves
/// follows a list, and a change made with `psql` reaches it.
@Suite("Event streams in Chromium", .serialized)
struct LiveBrowserTests {
    static let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test("EventSource receives the snapshot, ready, and an update committed by psql, which the page applies to its rows")
    func eventSourceInChromium() throws {
        let browser = try #require(Self.chromium, "headless Chromium is needed: scripts/setup installs Debian's chromium")
        let fixture = try LiveFixture()
        let profile = FileManager.default.temporaryDirectory.appending(path: "live-chromium-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: profile) }
        let page = try ChildProcess(
            "/usr/bin/timeout",
            [
                "60", browser, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(profile)",
                "--virtual-time-budget=5000", "--dump-dom", "http://127.0.0.1:\(fixture.port)/live/page",
            ], separateErrors: true)
        // The page follows the list once it is ready; then the change, from psql.
        let deadline = Date().addingTimeInterval(30)
        while fixture.feed.statistics.streams == 0, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        Thread.sleep(forTimeInterval: 0.5)
        _ = try ToolProcess.run(
            "/usr/bin/psql",
            [
                "-X", "-q", "-v", "ON_ERROR_STOP=1", "-U", "postgres", "-d", try SampleDatabase.variable("EMPLOYEES_DATABASE"),
                "-c", "UPDATE \(fixture.schema).items SET title = 'from psql' WHERE id = 2",
            ])
        #expect(page.wait(timeout: 60) == 0, "\(page.errors)")
        let outcome = try #require(page.output.firstMatch(of: /<pre id="outcome">([^<]*)<\/pre>/).map { String($0.1) }, "\(page.output)")
        #expect(outcome == "update alpha,from psql,delta")
    }
}
