"""Streaming scenarios: a list's wall time and first byte against psql (3, 4),
what gzip, counts and metrics cost (10), 50 concurrent streams (8), and the
idle footprint (6)."""

import statistics
import subprocess
import threading
import time

from .load import metrics_scenario
from .processes import Server, curl, psql_seconds, wrk
from .results import mb
from .tracing import tracing_scenario


def stream_scenario(args, results, log, title, path, psql_script, target_ratio, first_byte_limit_ms, peak_rss_limit_mb):
    """One large response with curl against psql writing the same JSON; the first byte is
    checked against `first_byte_limit_ms` unless it is None."""
    print(f"{title}", flush=True)
    server = Server(log)
    server.wait_until_serving()
    cpu_before = server.cpu_seconds()
    curl(server.port, path + ("&" if "?" in path else "?") + "limit=1000")  # warm-up
    baseline = Server(log, args.baseline) if args.baseline else None
    if baseline:
        baseline.wait_until_serving()
        curl(baseline.port, path + ("&" if "?" in path else "?") + "limit=1000")
    services, limits, baselines = [], [], []
    for round_number in range(1, args.rounds + 1):
        limit = psql_seconds(psql_script)
        if baseline:
            _, old, _ = curl(baseline.port, path)
            baselines.append(old)
            results.note(f"{title}, round {round_number}, baseline: {old:.2f} s")
        first_byte, total, size = curl(server.port, path)
        limits.append(limit)
        services.append((first_byte, total))
        results.note(f"{title}, round {round_number}: {total:.2f} s, first byte {first_byte * 1000:.1f} ms, "
                     f"{size / 1e6:.1f} MB; psql {limit:.2f} s")
    peak, cpu = server.status_kb("VmHWM"), server.cpu_seconds() - cpu_before
    server.stop()
    if baseline:
        baseline.stop()
    wall = statistics.mean(total for _, total in services)
    first_byte = max(first for first, _ in services)
    limit = statistics.mean(limits)
    ratio = wall / limit
    results.note(f"{title}: server peak RSS {mb(peak):.1f} MB, CPU {cpu:.1f} s over {args.rounds} rounds")
    results.add(title + ": wall time", f"{wall:.2f} s", f"{limit:.2f} s (psql)", f"{ratio:.2f}",
                f"<= {target_ratio} x psql", ratio <= target_ratio)
    if first_byte_limit_ms is not None:
        results.add(title + ": first byte", f"{first_byte * 1000:.1f} ms", "-", "-", f"< {first_byte_limit_ms} ms",
                    first_byte * 1000 < first_byte_limit_ms)
    results.add(title + ": peak RSS", f"{mb(peak):.1f} MB", "-", "-", f"<= {peak_rss_limit_mb} MB",
                mb(peak) <= peak_rss_limit_mb)
    if baselines:
        old = statistics.mean(baselines)
        results.add(title + ": against the baseline", f"{wall:.2f} s", f"{old:.2f} s (baseline)",
                    f"{wall / old:.2f}", "<= 1.05 x baseline", wall / old <= 1.05)


def costs_scenario(args, results, log):
    """What gzip, counts and metrics cost: scenario 3 with and without gzip
    (wall time and bytes), a page of 10 with and without `Prefer:
    count=exact`, and scenario 1 with metrics on and off."""
    title = "10. gzip, counts and metrics"
    print(title, flush=True)
    server = Server(log)
    server.wait_until_serving()
    curl(server.port, "/employees?limit=1000", ["Accept-Encoding: gzip"])  # warm-up
    plain, gzipped = [], []
    for round_number in range(1, args.rounds + 1):
        _, plain_total, plain_size = curl(server.port, "/employees")
        _, gzip_total, gzip_size = curl(server.port, "/employees", ["Accept-Encoding: gzip"])
        plain.append((plain_total, plain_size))
        gzipped.append((gzip_total, gzip_size))
        results.note(f"{title}, round {round_number}: GET /employees {plain_total:.2f} s, {plain_size / 1e6:.1f} MB; "
                     f"with gzip {gzip_total:.2f} s, {gzip_size / 1e6:.1f} MB")
    wall = statistics.mean(t for t, _ in plain)
    gzip_wall = statistics.mean(t for t, _ in gzipped)
    size, gzip_size = plain[0][1], gzipped[0][1]
    results.add("10. GET /employees with gzip: wall time", f"{gzip_wall:.2f} s ({gzip_size / 1e6:.1f} MB)",
                f"{wall:.2f} s ({size / 1e6:.1f} MB) plain", f"{gzip_wall / wall:.2f}", "measured", True)
    url = f"http://127.0.0.1:{server.port}"
    pages, counted = [], []
    for round_number in range(1, args.rounds + 1):
        pages.append(wrk(args, url, "page.lua", [], args.duration))
        counted.append(wrk(args, url, "page.lua", ["count"], args.duration))
        results.note(f"{title}, round {round_number}: a page of 10 {pages[-1].requests_per_second:,.0f} req/s, "
                     f"with Prefer: count=exact {counted[-1].requests_per_second:,.0f} req/s "
                     f"(p50 {counted[-1].p50_ms:.1f} ms)")
    server.stop()
    page = statistics.mean(l.requests_per_second for l in pages)
    count = statistics.mean(l.requests_per_second for l in counted)
    results.add("10. a page of 10 with Prefer: count=exact", f"{count:,.0f} req/s", f"{page:,.0f} req/s without",
                f"{count / page:.2f}", "measured", True)
    metrics_scenario(args, results, log)
    tracing_scenario(args, results, log)


STREAMS = 50
EMPLOYEES = 300_024
SLOW_RATE = "4M"  # bytes per second of a slow reader (curl --limit-rate)


def read_stream(port, path, slow, outcome):
    """One GET through curl, its body checked as it arrives: a JSON array of
    `EMPLOYEES` employee objects, whole (the framing ended and the array
    closed). The body is not kept: 50 copies of 200 MB would not fit."""
    command = ["curl", "-sS", "--no-buffer", "-o", "-", "-w", "%{stderr}%{http_code}"]
    if slow:
        command += ["--limit-rate", SLOW_RATE]
    process = subprocess.Popen(command + [f"http://127.0.0.1:{port}{path}"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    marker = b'{"employeeNumber":'
    count, size, head, tail = 0, 0, b"", b""
    while block := process.stdout.read(1 << 20):
        count += (tail[-(len(marker) - 1):] + block).count(marker)
        size += len(block)
        head = head or block[:len(marker) + 1]
        tail = (tail + block)[-64:]
    status = process.stderr.read().decode().strip()
    process.wait()
    outcome.update(status=status, returncode=process.returncode, count=count, size=size,
                   valid=process.returncode == 0 and status.endswith("200") and head == b"[" + marker
                   and tail.rstrip().endswith(b"]") and count == EMPLOYEES)


def concurrent_streams_scenario(args, results, log):
    """50 clients stream GET /employees?details=salaries at once, half of
    them reading slowly; every body is checked, the server's peak RSS kept."""
    title = f"8. {STREAMS} concurrent streams"
    path = "/employees?details=salaries"
    print(title, flush=True)
    # Every stream holds a database connection from its first row to its
    # last: a pool for all of them (the default, 16, would answer the 17th
    # with 503 once it had waited --acquire-timeout).
    server = Server(log, options=["--pool-size", str(STREAMS + 8)])
    server.wait_until_serving()
    curl(server.port, path + "&limit=1000")  # warm-up
    rss_before = server.status_kb("VmRSS")
    outcomes = [dict() for _ in range(STREAMS)]
    readers = [threading.Thread(target=read_stream, args=(server.port, path, index % 2 == 1, outcomes[index]))
               for index in range(STREAMS)]
    started = time.monotonic()
    for reader in readers:
        reader.start()
    peak_seen = 0
    while any(reader.is_alive() for reader in readers):
        peak_seen = max(peak_seen, server.status_kb("VmRSS"))
        time.sleep(0.2)
    wall = time.monotonic() - started
    time.sleep(1)
    peak, rss_after = server.status_kb("VmHWM"), server.status_kb("VmRSS")
    server.stop()
    valid = sum(1 for outcome in outcomes if outcome.get("valid"))
    broken = [outcome for outcome in outcomes if not outcome.get("valid")]
    size = sum(outcome.get("size", 0) for outcome in outcomes)
    results.note(f"{title}: {valid} of {STREAMS} bodies whole and valid ({EMPLOYEES:,} employees each, "
                 f"{size / 1e9:.1f} GB in all) in {wall:.0f} s, {STREAMS // 2} of them read at {SLOW_RATE}B/s; "
                 f"server RSS {mb(rss_before):.1f} MB before, peak {mb(peak):.1f} MB, "
                 f"{mb(rss_after):.1f} MB 1 s after the last" +
                 (f"; first broken: {broken[0]}" if broken else ""))
    results.add(title + ": bodies", f"{valid} of {STREAMS} whole and valid", "-", "-", "all", valid == STREAMS)
    results.add(title + ": peak RSS", f"{mb(peak):.1f} MB", f"{mb(rss_before):.1f} MB before", "-", "<= 40 MB",
                mb(peak) <= 40)


def idle_scenario(args, results, log):
    title = "6. idle footprint"
    print(title, flush=True)
    starts, rss_values = [], []
    for round_number in range(1, args.rounds + 1):
        server = Server(log)
        started = server.wait_until_serving()
        before = server.status_kb("VmRSS")
        time.sleep(1)
        rss = server.status_kb("VmRSS")
        server.stop()
        starts.append(started)
        rss_values.append(rss)
        results.note(f"{title}, round {round_number}: first request served {started * 1000:.1f} ms after start; "
                     f"RSS {mb(before):.1f} MB right after it, {mb(rss):.1f} MB after 1 s idle")
    start = max(starts)
    rss = max(rss_values)
    results.add(title + ": start to first served request", f"{start * 1000:.1f} ms", "-", "-", "<= 50 ms",
                start <= 0.050)
    results.add(title + ": idle RSS after start", f"{mb(rss):.1f} MB", "-", "-", "<= 15 MB", mb(rss) <= 15)
