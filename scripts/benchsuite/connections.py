"""Scenario 7: scenario 1 with 10,000 idle keep-alive connections open."""

import os
import re
import resource
import selectors
import socket
import statistics
import time

from .processes import Server, wrk
from .results import mb


# MARK: - Many connections


class IdleConnections:
    """`count` keep-alive connections to a server, each having served one
    request (so that the server holds each as an idle keep-alive connection,
    with the memory a served connection keeps), then left alone: this
    process only sleeps meanwhile, in `wrk` or `time.sleep`, and takes no
    CPU from the server. `check` sends one more request on each; any
    connection closed, reset or refused is a failure. The process's own
    limit on open files is raised to its hard limit first."""

    def __init__(self, port, count, path="/employees/10001", in_flight=256):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < count + 256:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        self.port, self.path, self.in_flight = port, path, in_flight
        self.sockets = []
        self.failures = []
        started = time.monotonic()
        for _ in range(count):
            connection = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            connection.setblocking(False)
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.sockets.append(connection)
        self._exchange(self.sockets, connect=True)
        self.open_seconds = time.monotonic() - started

    def check(self):
        """Sends one more request on every connection; the failures (closed,
        reset or refused) land in `failures`."""
        self._exchange([s for s in self.sockets if s.fileno() >= 0], connect=False)
        return self.failures

    def close(self):
        for connection in self.sockets:
            # Closed with a reset: no TIME_WAIT left on 10,000 local ports.
            try:
                connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            except OSError:
                pass
            connection.close()
        self.sockets = []

    def _exchange(self, connections, connect):
        """One request and its whole response on each connection, at most
        `in_flight` at a time."""
        request = f"GET {self.path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
        selector = selectors.DefaultSelector()
        waiting = iter(connections)
        received = {}

        def fail(connection, reason):
            self.failures.append(reason)
            selector.unregister(connection)
            del received[connection]
            connection.close()

        def start(connection):
            received[connection] = b""
            if connect:
                try:
                    connection.connect(("127.0.0.1", self.port))
                except BlockingIOError:
                    pass
                except OSError as error:
                    self.failures.append(f"connect: {error.strerror}")
                    del received[connection]
                    connection.close()
                    return
                selector.register(connection, selectors.EVENT_WRITE)
            else:
                try:
                    connection.send(request)
                except OSError as error:
                    self.failures.append(f"send: {error.strerror}")
                    del received[connection]
                    connection.close()
                    return
                selector.register(connection, selectors.EVENT_READ)

        def refill():
            while len(received) < self.in_flight:
                connection = next(waiting, None)
                if connection is None:
                    return
                start(connection)

        refill()
        while received:
            events = selector.select(timeout=30)
            if not events:
                for connection in list(received):
                    fail(connection, "no answer within 30 s")
                break
            for key, mask in events:
                connection = key.fileobj
                if mask & selectors.EVENT_WRITE:
                    error = connection.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                    if error:
                        fail(connection, f"connect: {os.strerror(error)}")
                        continue
                    connection.send(request)
                    selector.modify(connection, selectors.EVENT_READ)
                    continue
                try:
                    data = connection.recv(65536)
                except OSError as error:
                    fail(connection, f"receive: {error.strerror}")
                    continue
                if not data:
                    fail(connection, "closed by the server")
                    continue
                answer = received[connection] + data
                received[connection] = answer
                head, separator, body = answer.partition(b"\r\n\r\n")
                if not separator:
                    continue
                length = re.search(rb"\r\ncontent-length: *(\d+)", head, re.IGNORECASE)
                if length is None or len(body) < int(length.group(1)):
                    continue
                if not head.startswith(b"HTTP/1.1 200"):
                    self.failures.append(f"status {head[:12].decode(errors='replace')}")
                selector.unregister(connection)
                del received[connection]
            refill()
        selector.close()


IDLE_CONNECTIONS = 10_000


def many_connections_scenario(args, results, log):
    """Scenario 1 with 10,000 idle keep-alive connections open beside wrk's
    64, against scenario 1 alone on the same server in the same rounds."""
    title = f"7. {IDLE_CONNECTIONS:,} connections"
    print(title, flush=True)
    # Room for the idle connections, wrk's and the probes; an idle timeout
    # longer than a round, so that what is measured is the server holding
    # the connections, not its timeout closing them.
    server = Server(log, options=["--max-connections", str(IDLE_CONNECTIONS + 256),
                                  "--connection-timeout", str(max(30, 2 * args.duration + 60))])
    server.wait_until_serving()
    url = f"http://127.0.0.1:{server.port}"
    wrk(args, url, "employee.lua", [], args.warmup)
    alone, crowded, failures = [], [], []
    for round_number in range(1, args.rounds + 1):
        plain = wrk(args, url, "employee.lua", [], args.duration)
        idle = IdleConnections(server.port, IDLE_CONNECTIONS)
        rss_idle = server.status_kb("VmRSS")
        load = wrk(args, url, "employee.lua", [], args.duration)
        idle.check()
        idle.close()
        alone.append(plain)
        crowded.append(load)
        failures += idle.failures
        results.note(f"{title}, round {round_number}: {load.requests_per_second:,.0f} req/s "
                     f"(p50 {load.p50_ms:.2f} ms, p99 {load.p99_ms:.2f} ms, non-2xx {load.non_2xx}, "
                     f"{load.error_text}) with the idle connections (opened in {idle.open_seconds:.1f} s, "
                     f"server RSS {mb(rss_idle):.1f} MB once they were open; {len(idle.failures)} failed: "
                     f"{', '.join(sorted(set(idle.failures))[:3]) or 'none'}); alone {plain.requests_per_second:,.0f} req/s "
                     f"(p99 {plain.p99_ms:.2f} ms)")
    peak = server.status_kb("VmHWM")
    server.stop()
    service = statistics.mean(l.requests_per_second for l in crowded)
    limit = statistics.mean(l.requests_per_second for l in alone)
    p99 = max(l.p99_ms for l in crowded)
    errors = sum(l.non_2xx + l.errors for l in crowded) + len(failures)
    results.add(title + ": throughput", f"{service:,.0f} req/s (p99 {p99:.1f} ms, {errors} errors)",
                f"{limit:,.0f} req/s (scenario 1 alone)", f"{service / limit:.2f}",
                ">= 0.8 x alone, p99 <= 20 ms, 0 refused or reset",
                service / limit >= 0.8 and p99 <= 20 and errors == 0)
    results.add(title + ": peak RSS", f"{mb(peak):.1f} MB", "-", "-", "<= 80 MB", mb(peak) <= 80)
