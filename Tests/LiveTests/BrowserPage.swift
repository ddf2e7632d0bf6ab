/// The page headless Chromium loads from the test server: an `EventSource`
/// on the items of group 1, whose snapshot, `ready` and first change it
/// writes into `#outcome`, then closes.
enum BrowserPage {
    static let html = """
        <!doctype html>
        <html><body><pre id="outcome">pending</pre>
        <script>
        const outcome = document.getElementById("outcome");
        const rows = new Map();
        const source = new EventSource("/live/items?group=eq.1&select=id,title&order=id");
        source.addEventListener("snapshot", e => { for (const row of JSON.parse(e.data)) rows.set(row.id, row.title); });
        source.addEventListener("ready", e => { outcome.textContent = "ready " + [...rows.values()].join(","); fetch("/live/page?ready=" + e.lastEventId); });
        source.addEventListener("update", e => {
          const row = JSON.parse(e.data);
          rows.set(row.id, row.title);
          outcome.textContent = "update " + [...rows.values()].join(",");
          source.close();
        });
        source.onerror = () => { outcome.textContent += " (error)"; };
        </script></body></html>
        """
}
