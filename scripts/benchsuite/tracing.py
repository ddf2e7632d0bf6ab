"""Scenario 10's tracing row: scenario 1 with spans exported by OTLP/HTTP (1 % sampled) against no endpoint."""

import threading

from .load import paired_load
from .processes import Server
from .results import mb, paired_verdict


class SpanSink:
    """An OTLP/HTTP receiver that answers every export 200 and only counts
    the bytes: what a collector costs the server, nothing of decoding."""

    def __init__(self):
        import http.server

        sink = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                sink.exports += 1
                sink.bytes += len(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.exports, self.bytes = 0, 0
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def tracing_scenario(args, results, log, target_ratio=0.95):
    """Scenario 1 with tracing on (spans exported by OTLP/HTTP to a sink,
    1 % of the traces recorded) against no endpoint: two servers, the same
    requests in the same rounds (their order alternating), by throughput."""
    title = "10. tracing: GET /employees/{n}, --otlp-endpoint with --trace-sampling 0.01 against none"
    print(title, flush=True)
    sink = SpanSink()
    on = Server(log, options=["--otlp-endpoint", sink.endpoint, "--trace-sampling", "0.01"])
    on.wait_until_serving()
    off = Server(log, env={"OTEL_EXPORTER_OTLP_ENDPOINT": ""})
    off.wait_until_serving()
    means, peaks, non_2xx, rates = paired_load(args, results, log, title, {"tracing on": on, "tracing off": off}, [])
    sink.close()
    verdict = paired_verdict(rates["tracing on"], rates["tracing off"], target_ratio)
    results.note(f"{title}: peak RSS with tracing {mb(peaks['tracing on']):.1f} MB, without {mb(peaks['tracing off']):.1f} MB; "
                 f"{sink.exports} exports, {sink.bytes / 1e6:.1f} MB of spans received")
    results.add(title, f"{means['tracing on']:,.0f} req/s (on, {non_2xx} non-2xx/errors)",
                f"{means['tracing off']:,.0f} req/s (off)", verdict.text,
                f">= {target_ratio} x off, 0 non-2xx, spans received",
                not verdict.missed and non_2xx == 0 and sink.exports > 0)
