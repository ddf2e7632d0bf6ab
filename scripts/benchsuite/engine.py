"""What the engine's choices buy: libmicrohttpd's patches (12), rows read
from the socket against libpq's single-row mode (13), TLS to the database (14)."""

import os
import statistics

from .connections import IDLE_CONNECTIONS, IdleConnections
from .load import paired_load
from .processes import ROOT, Server, curl, psql_seconds, run, wrk
from .results import mb, median_ratio


# MARK: - What the engine's choices buy

PATCHES = ["error-pages", "pool-release"]
# Patches judged elsewhere, on in every variant but "off" so that "on" and
# "without X" differ by X alone: event-writes acts on event streams only
# (scenario 16, measured with it and without it in BENCHMARKS.md).
CONSTANT_PATCHES = ["event-writes"]
# Patches that change what the server answers, not how fast or how small it
# is: judged by what they cost, not by what they buy.
FUNCTION_PATCHES = {"error-pages"}


def patch_variants():
    """`--mhd-patches` values by name: every patch, none, and every patch
    but one, for each."""
    variants = {"on": "on", "off": "off"}
    for patch in PATCHES:
        variants[f"without {patch}"] = ",".join(p for p in PATCHES + CONSTANT_PATCHES if p != patch)
    return variants


def percent(ratio):
    return f"{(ratio - 1) * 100:+.1f} %"


def stream_rounds(args, results, log, title, path, servers, rounds):
    """GET `path` from each of `servers` (name: Server), rounds interleaved,
    their order alternating. Returns each one's wall times and peak RSS."""
    for server in servers.values():
        curl(server.port, path + ("&" if "?" in path else "?") + "limit=1000")  # warm-up
    walls = {name: [] for name in servers}
    for round_number in range(1, rounds + 1):
        order = list(servers) if round_number % 2 else list(reversed(servers))
        for name in order:
            _, total, _ = curl(servers[name].port, path)
            walls[name].append(total)
        results.note(f"{title}, round {round_number}: " +
                     ", ".join(f"{name} {walls[name][-1]:.3f} s" for name in servers))
    peaks = {name: server.status_kb("VmHWM") for name, server in servers.items()}
    return walls, peaks


def crowded_rounds(args, results, log, title, variants):
    """Scenario 7 on one server per variant (name: --mhd-patches value), one
    after the other, rounds interleaved: wrk's load with 10,000 idle
    keep-alive connections open. Returns each one's req/s by round and the
    RSS once the idle connections were open."""
    rates = {name: [] for name in variants}
    rss = {name: [] for name in variants}
    duration = max(3, args.duration // 2)
    for round_number in range(1, args.rounds + 1):
        order = list(variants) if round_number % 2 else list(reversed(variants))
        for name in order:
            server = Server(log, options=["--mhd-patches", variants[name],
                                          "--max-connections", str(IDLE_CONNECTIONS + 256),
                                          "--connection-timeout", str(max(30, 2 * duration + 60))])
            server.wait_until_serving()
            url = f"http://127.0.0.1:{server.port}"
            wrk(args, url, "employee.lua", [], args.warmup)
            idle = IdleConnections(server.port, IDLE_CONNECTIONS)
            rss[name].append(server.status_kb("VmRSS"))
            load = wrk(args, url, "employee.lua", [], duration)
            idle.check()
            idle.close()
            server.stop()
            if load.non_2xx or load.errors or idle.failures:
                raise SystemExit(f"bench: {title}, {name}: {load.non_2xx} non-2xx, {load.error_text}, "
                                 f"{len(idle.failures)} idle connections failed")
            rates[name].append(load.requests_per_second)
        results.note(f"{title}, round {round_number}: " + ", ".join(
            f"{name} {rates[name][-1]:,.0f} req/s, RSS {mb(rss[name][-1]):.1f} MB" for name in variants))
    return rates, rss


def patches_scenario(args, results, log):
    """libmicrohttpd's patches (12): scenarios 1, 2, 3 and 7 on servers with
    every patch, with none, and with every patch but one, in the same
    rounds, `--repeat` times in a row. A patch's gain in a scenario is what
    leaving it out loses: the median of the per-round ratios for load, the
    median wall time and the peak (or crowded) RSS for the rest. Each
    patch is judged by the rule of BENCHMARKS.md over the runs: each
    figure's median over them, then the median and the worst of those."""
    title = "12. libmicrohttpd's patches"
    print(title, flush=True)
    # One run keeps the rows' names of the single-run tables in BENCHMARKS.md.
    runs = [measure_patches(args, results, log, title, "12.")] if args.repeat == 1 else [
        measure_patches(args, results, log, f"{title}, run {number} of {args.repeat}", f"12. run {number}:")
        for number in range(1, args.repeat + 1)]
    over = "" if args.repeat == 1 else f" (medians over {args.repeat} runs)"
    for patch in PATCHES:
        names = [where for where, _ in runs[0][patch]]
        medians = [(where, statistics.median(run[patch][index][1] for run in runs)) for index, where in enumerate(names)]
        figures = ", ".join(f"{where} {percent(ratio)}" for where, ratio in medians) + over
        typical = statistics.median(ratio for _, ratio in medians)
        worst = min(ratio for _, ratio in medians)
        if patch in FUNCTION_PATCHES:
            results.add(f"12. {patch} (problem documents for libmicrohttpd's refusals): what it costs", figures,
                        "every patch but it", f"{typical:.2f}", "costs < 3 % (median of the scenarios)", typical > 0.97)
        else:
            # The rule a patch is kept by (BENCHMARKS.md): over three runs (--repeat 3).
            results.add(f"12. {patch}: what it buys", figures, "every patch but it", f"{typical:.2f}",
                        ">= 3 % (median of the scenarios), none below -3 %", typical >= 1.03 and worst >= 0.97)


def measure_patches(args, results, log, title, prefix):
    """One run of scenario 12, its notes under `title` and its rows under
    `prefix`: for each patch, its gain (the ratio of "on" to "without it";
    > 1 is a gain) in each of its six figures, as (figure, ratio) pairs."""
    variants = patch_variants()
    gains = {patch: [] for patch in PATCHES}

    for label, wrk_args in (("1", []), ("2", ["?details=titles&details=salaries"])):
        servers = {name: Server(log, options=["--mhd-patches", value]) for name, value in variants.items()}
        for server in servers.values():
            server.wait_until_serving()
        means, _, non_2xx, rates = paired_load(args, results, log, f"{title}, scenario {label}", servers, wrk_args)
        ratio = median_ratio(rates["on"], rates["off"])
        results.add(f"{prefix} scenario {label} with the patches against without", f"{means['on']:,.0f} req/s (on)",
                    f"{means['off']:,.0f} req/s (off)", f"{ratio:.2f}", "measured, 0 non-2xx", non_2xx == 0)
        for patch in PATCHES:
            gains[patch].append((f"{label} req/s", median_ratio(rates["on"], rates[f"without {patch}"])))

    servers = {name: Server(log, options=["--mhd-patches", value]) for name, value in variants.items()}
    for server in servers.values():
        server.wait_until_serving()
    # A stream of 0.1 s, which a slow spell of the machine makes 0.17: ten
    # times the rounds and their median, or such spells would decide.
    walls, peaks = stream_rounds(args, results, log, f"{title}, scenario 3", "/employees", servers, 10 * args.rounds)
    for server in servers.values():
        server.stop()
    wall = {name: statistics.median(values) for name, values in walls.items()}
    results.add(f"{prefix} scenario 3 with the patches against without: wall time", f"{wall['on']:.2f} s (on)",
                f"{wall['off']:.2f} s (off)", f"{wall['on'] / wall['off']:.2f}", "measured", True)
    results.add(f"{prefix} scenario 3 with the patches against without: peak RSS", f"{mb(peaks['on']):.1f} MB (on)",
                f"{mb(peaks['off']):.1f} MB (off)", f"{peaks['on'] / peaks['off']:.2f}", "measured", True)
    for patch in PATCHES:
        gains[patch].append(("3 wall", wall[f"without {patch}"] / wall["on"]))
        gains[patch].append(("3 RSS", peaks[f"without {patch}"] / peaks["on"]))

    rates, rss = crowded_rounds(args, results, log, f"{title}, scenario 7", variants)
    crowded = {name: statistics.mean(values) for name, values in rss.items()}
    results.add(f"{prefix} scenario 7 with the patches against without: throughput",
                f"{statistics.mean(rates['on']):,.0f} req/s (on)", f"{statistics.mean(rates['off']):,.0f} req/s (off)",
                f"{median_ratio(rates['on'], rates['off']):.2f}", "measured, 0 errors", True)
    results.add(f"{prefix} scenario 7 with the patches against without: RSS with the idle connections",
                f"{mb(crowded['on']):.1f} MB (on)", f"{mb(crowded['off']):.1f} MB (off)",
                f"{crowded['on'] / crowded['off']:.2f}", "measured", True)
    for patch in PATCHES:
        gains[patch].append(("7 req/s", median_ratio(rates["on"], rates[f"without {patch}"])))
        gains[patch].append(("7 RSS", crowded[f"without {patch}"] / crowded["on"]))
    return gains


def rows_scenario(args, results, log):
    """How streamed rows are read (13): scenarios 3 and 4 with rows read
    from the socket (the default) against libpq's single-row mode
    (`--rows-from libpq`), in the same rounds."""
    title = "13. rows from the socket against libpq's single-row mode"
    print(title, flush=True)
    best = 0
    for label, path in (("3", "/employees"), ("4", "/employees?details=salaries")):
        servers = {"socket": Server(log), "libpq": Server(log, options=["--rows-from", "libpq"])}
        for server in servers.values():
            server.wait_until_serving()
        walls, peaks = stream_rounds(args, results, log, f"{title}, scenario {label}", path, servers, 2 * args.rounds)
        for server in servers.values():
            server.stop()
        socket_wall, libpq_wall = statistics.mean(walls["socket"]), statistics.mean(walls["libpq"])
        best = max(best, libpq_wall / socket_wall)
        results.add(f"13. scenario {label}, rows from the socket: wall time", f"{socket_wall:.2f} s",
                    f"{libpq_wall:.2f} s (libpq)", f"{socket_wall / libpq_wall:.2f}", "measured", True)
        results.add(f"13. scenario {label}, rows from the socket: peak RSS", f"{mb(peaks['socket']):.1f} MB",
                    f"{mb(peaks['libpq']):.1f} MB (libpq)", f"{peaks['socket'] / peaks['libpq']:.2f}", "measured", True)
    results.add("13. reading rows from the socket: what it buys", percent(best), "libpq's single-row mode",
                f"{best:.2f}", ">= 3 % in scenario 3 or 4", best >= 1.03)


def tls_scenario(args, results, log):
    """Scenario 3 with TLS to the database (14): the cluster lets clients on
    127.0.0.1 ask for TLS for this scenario only (scripts/pg-cluster tls);
    the server connects with sslmode=require, against psql with the same
    connection and against the server over TCP without TLS."""
    title = "14. GET /employees with TLS to the database"
    print(title, flush=True)
    cluster = os.path.join(ROOT, "scripts", "pg-cluster")
    run([cluster, "tls", "on"])
    try:
        tcp = dict(PGHOST="127.0.0.1")
        servers = {"TLS": Server(log, env=dict(tcp, PGSSLMODE="require")),
                   "no TLS": Server(log, env=dict(tcp, PGSSLMODE="disable"))}
        for server in servers.values():
            server.wait_until_serving()
        walls, peaks = stream_rounds(args, results, log, title, "/employees", servers, 2 * args.rounds)
        for server in servers.values():
            server.stop()
        limits = [psql_seconds("employees.sql", dict(tcp, PGSSLMODE="require")) for _ in range(args.rounds)]
    finally:
        run([cluster, "tls", "off"])
    wall, plain, limit = (statistics.mean(walls["TLS"]), statistics.mean(walls["no TLS"]), statistics.mean(limits))
    results.note(f"{title}: psql over TLS {', '.join(f'{l:.2f} s' for l in limits)}")
    results.add(title + ": wall time", f"{wall:.2f} s", f"{limit:.2f} s (psql over TLS)", f"{wall / limit:.2f}",
                "<= 0.6 x psql over TLS", wall / limit <= 0.6)
    results.add(title + ": against no TLS", f"{wall:.2f} s", f"{plain:.2f} s (TCP, no TLS)", f"{wall / plain:.2f}",
                "measured", True)
    results.add(title + ": peak RSS", f"{mb(peaks['TLS']):.1f} MB", "-", "-", "<= 40 MB", mb(peaks["TLS"]) <= 40)
