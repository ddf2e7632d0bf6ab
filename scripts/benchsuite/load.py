"""Load scenarios: wrk against pgbench running the same SQL (1, 2, 5, 11),
sql-rest against employees-server (9), and servers compared in the same
rounds (paired_load, which 10 and 12 use too)."""

import statistics

from .processes import SQL_REST_COMMAND, SQL_REST_FILTERS_COMMAND, Server, measured, pgbench, wrk
from .results import mb, paired_verdict


# MARK: - Scenarios

def load_scenario(args, results, log, title, target_ratio, wrk_script, wrk_args, pgbench_script, defines=(),
                  command=None, ready_path="/employees/10001"):
    """wrk against the service (employees-server, or `command`, serving once
    `ready_path` answers) and pgbench against the database, in turns, with
    the baseline's build when one is given: pgbench, baseline, service in
    odd rounds, the reverse in even ones, so that none always follows
    the same one.

    Four times the rounds, each a quarter as long (3 s at least), their
    order alternating, as the paired scenarios: the machine's speed moves
    by 10 to 45 % from one measurement to the next (in one run, scenario
    1's wrk took 13.9 µs of CPU per request in one round and 20.2 in the
    next, for the same requests), and a slow spell that falls on the
    service's measurement or on pgbench's alone moves the ratio by as much.
    Shorter turns, taken more often, put the two nearer each other in time."""
    print(f"{title}", flush=True)
    server = Server(log, command=command)
    server.wait_until_serving(ready_path)
    url = f"http://127.0.0.1:{server.port}"
    cpu_before = server.cpu_seconds()
    wrk(args, url, wrk_script, wrk_args, args.warmup)
    pgbench(args, pgbench_script, args.warmup, defines)
    baseline = baseline_server(args, log, command)
    if baseline:
        baseline.wait_until_serving(ready_path)
        wrk(args, f"http://127.0.0.1:{baseline.port}", wrk_script, wrk_args, args.warmup)
    services, limits, baselines = [], [], []
    duration = max(3, args.duration // 4)
    for round_number in range(1, 4 * args.rounds + 1):
        def measure_limit():
            return measured(lambda: pgbench(args, pgbench_script, duration, defines), duration)
        def measure_baseline():
            if not baseline:
                return
            old = wrk(args, f"http://127.0.0.1:{baseline.port}", wrk_script, wrk_args, duration)
            baselines.append(old)
            results.note(f"{title}, round {round_number}, baseline: {old.requests_per_second:,.0f} req/s "
                         f"(p50 {old.p50_ms:.2f} ms, p99 {old.p99_ms:.2f} ms, non-2xx {old.non_2xx})")
        if round_number % 2:
            limit, limit_cpu = measure_limit()
            measure_baseline()
        service, service_cpu = measured(lambda: wrk(args, url, wrk_script, wrk_args, duration), duration, server)
        if not round_number % 2:
            measure_baseline()
            limit, limit_cpu = measure_limit()
        limits.append(limit)
        services.append(service)
        results.note(f"{title}, round {round_number}: {service.requests_per_second:,.0f} req/s "
                     f"(p50 {service.p50_ms:.2f} ms, p99 {service.p99_ms:.2f} ms, non-2xx {service.non_2xx}, "
                     f"{service.error_text}; {service_cpu.text('wrk')}); "
                     f"pgbench {limit.requests_per_second:,.0f} tps "
                     f"(latency avg {limit.p50_ms:.2f} ms, failed {limit.non_2xx}; {limit_cpu.text('pgbench')})")
    peak, cpu = server.status_kb("VmHWM"), server.cpu_seconds() - cpu_before
    server.stop()
    if baseline:
        baseline.stop()
    service = statistics.mean(s.requests_per_second for s in services)
    limit = statistics.mean(l.requests_per_second for l in limits)
    non_2xx = sum(s.non_2xx + s.errors for s in services)
    verdict = paired_verdict([s.requests_per_second for s in services], [l.requests_per_second for l in limits],
                             target_ratio)
    results.note(f"{title}: server peak RSS {mb(peak):.1f} MB, CPU {cpu:.1f} s over warm-up and "
                 f"{4 * args.rounds} rounds; p50 {statistics.mean(s.p50_ms for s in services):.2f} ms, "
                 f"p99 {statistics.mean(s.p99_ms for s in services):.2f} ms")
    p50 = statistics.mean(s.p50_ms for s in services)
    p99 = statistics.mean(s.p99_ms for s in services)
    results.add(title, f"{service:,.0f} req/s (p50 {p50:.1f} ms, p99 {p99:.0f} ms, {non_2xx} non-2xx/errors)",
                f"{limit:,.0f} tps (pgbench)", verdict.text,
                f">= {target_ratio} x pgbench, 0 non-2xx", not verdict.missed and non_2xx == 0)
    if baselines:
        old = statistics.mean(b.requests_per_second for b in baselines)
        against = paired_verdict([s.requests_per_second for s in services],
                                 [b.requests_per_second for b in baselines], 0.95)
        results.add(title + ": against the baseline", f"{service:,.0f} req/s", f"{old:,.0f} req/s (baseline)",
                    against.text, ">= 0.95 x baseline", not against.missed)


def baseline_server(args, log, command):
    """The same service from the baseline's build: `--baseline` for
    employees-server, `--baseline-sql-rest` for scenario 11's sql-rest (the
    other sql-rest scenarios serve what an older build may not); None when
    that build was not given."""
    if command is None:
        return Server(log, args.baseline) if args.baseline else None
    if command == SQL_REST_FILTERS_COMMAND and args.baseline_sql_rest:
        return Server(log, command=[args.baseline_sql_rest] + command[1:])
    return None


def sql_rest_scenario(args, results, log, title, wrk_args, target_ratio=0.95):
    """sql-rest serving services/ against employees-server, the same requests
    in the same rounds (their order alternating), by throughput."""
    print(f"{title}", flush=True)
    swift = Server(log)
    swift.wait_until_serving()
    generated = Server(log, command=SQL_REST_COMMAND)
    generated.wait_until_serving()
    means, peaks, non_2xx, rates = paired_load(args, results, log, title,
                                               {"employees-server": swift, "sql-rest": generated}, wrk_args)
    verdict = paired_verdict(rates["sql-rest"], rates["employees-server"], target_ratio)
    results.note(f"{title}: peak RSS sql-rest {mb(peaks['sql-rest']):.1f} MB, employees-server {mb(peaks['employees-server']):.1f} MB")
    results.add(title, f"{means['sql-rest']:,.0f} req/s (sql-rest, {non_2xx} non-2xx/errors)",
                f"{means['employees-server']:,.0f} req/s (employees-server)", verdict.text,
                f">= {target_ratio} x employees-server, 0 non-2xx", not verdict.missed and non_2xx == 0)


def metrics_scenario(args, results, log, target_ratio=0.95):
    """Scenario 1 with metrics on against off: two servers, the same
    requests in the same rounds (their order alternating), by throughput."""
    title = "10. metrics: GET /employees/{n}, --metrics on against off"
    print(title, flush=True)
    on = Server(log, options=["--metrics", "on"])
    on.wait_until_serving()
    off = Server(log, options=["--metrics", "off"])
    off.wait_until_serving()
    means, peaks, non_2xx, rates = paired_load(args, results, log, title, {"metrics on": on, "metrics off": off}, [])
    verdict = paired_verdict(rates["metrics on"], rates["metrics off"], target_ratio)
    results.note(f"{title}: peak RSS with metrics {mb(peaks['metrics on']):.1f} MB, without {mb(peaks['metrics off']):.1f} MB")
    results.add(title, f"{means['metrics on']:,.0f} req/s (on, {non_2xx} non-2xx/errors)",
                f"{means['metrics off']:,.0f} req/s (off)", verdict.text,
                f">= {target_ratio} x off, 0 non-2xx", not verdict.missed and non_2xx == 0)


def paired_load(args, results, log, title, servers, wrk_args):
    """The same wrk load (employee.lua) on each of `servers` (name: Server),
    rounds interleaved, their order alternating; stops the servers.
    Returns the mean req/s and the peak RSS by name, the non-2xx count, and
    each round's req/s by name (the pairs `median_ratio` judges).

    Four times the rounds, each a quarter as long (3 s at least), as the
    other load scenarios: the servers compared here differ by a few per
    cent (sql-rest and employees-server run the same instructions per
    request, within 1 %), and the machine's speed moves by 10 to 30 % from
    one measurement to the next; shorter turns, taken more often, put each
    server's measurements nearer the other's in time, and more of them
    average the rest out."""
    for server in servers.values():
        wrk(args, f"http://127.0.0.1:{server.port}", "employee.lua", wrk_args, args.warmup)
    measured_loads = {name: [] for name in servers}
    duration = max(3, args.duration // 4)
    for round_number in range(1, 4 * args.rounds + 1):
        order = list(servers) if round_number % 2 else list(reversed(servers))
        for name in order:
            server = servers[name]
            load, cpu = measured(lambda: wrk(args, f"http://127.0.0.1:{server.port}", "employee.lua", wrk_args, duration),
                                 duration, server)
            measured_loads[name].append(load)
            results.note(f"{title}, round {round_number}, {name}: {load.requests_per_second:,.0f} req/s "
                         f"(p50 {load.p50_ms:.2f} ms, p99 {load.p99_ms:.2f} ms, non-2xx {load.non_2xx}, "
                         f"{load.error_text}; {cpu.text('wrk')})")
    peaks = {name: server.status_kb("VmHWM") for name, server in servers.items()}
    for server in servers.values():
        server.stop()
    rates = {name: [l.requests_per_second for l in loads] for name, loads in measured_loads.items()}
    means = {name: statistics.mean(values) for name, values in rates.items()}
    non_2xx = sum(l.non_2xx + l.errors for loads in measured_loads.values() for l in loads)
    return means, peaks, non_2xx, rates
