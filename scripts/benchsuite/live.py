"""Scenario 16: live results, lists followed as event streams by many callers while rows change."""

import os
import re
import resource
import selectors
import socket
import subprocess
import time

import jwt  # PyJWT: Debian's python3-jwt (scripts/setup)

from .processes import SQL_REST, Server, postgres_cpu_seconds, postmaster_pid, run
from .results import mb


LIVE_CALLERS = 10_000
LIVE_PROCESSES = 4
LIVE_RATE = 100  # committed changes a second
LIVE_FILTERS = 5  # filters: employeeNumber in one of 5 ranges of 100
LIVE_ROLES = ("live_bench_all", "live_bench_women")  # row-level security: every row, or gender = 'F'
LIVE_WAVE = 250  # streams opened at once, each waiting for its snapshot before the next wave
LIVE_TIMED = 10  # every 10th stream is read at once and its events timed


def live_path(numbers):
    """The followed list of the employees numbered in `numbers` (a range)."""
    return f"/employees?employeeNumber=gte.{numbers[0]}&employeeNumber=lt.{numbers[1]}"


def live_admin(sql):
    """Runs `sql` on the sample database as the cluster's superuser."""
    return run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql],
               env=dict(os.environ, PGUSER="postgres", PGDATABASE="employees"))


def live_clients(port, targets, record, poll, connection, ready_event, stop_event):
    """One process of callers: a stream per `targets` entry (path, header
    lines), opened in waves of LIVE_WAVE, each wave once the last has its
    snapshot (`event: ready`); then reads them all, every `poll` seconds
    (a process of timed streams reads at once), and for the streams whose
    index is in `record` notes when each marker (`"firstName":"L<n>"`)
    arrives. Sends back (samples, streams ready, streams closed, failures,
    its CPU seconds while reading)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    selector = selectors.EpollSelector()
    state = {}  # socket -> [index, tail or head bytes, ready]
    samples, failures = [], []
    ready = closed = 0
    marker = re.compile(rb'"firstName":"L(\d+)"')
    # One buffer for every read: a new 256 KB buffer per `recv` is mapped
    # and unmapped by the allocator each time, on the processors the server
    # shares with the callers.
    buffer = bytearray(262144)
    view = memoryview(buffer)

    def open_stream(index):
        path, headers = targets[index]
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.connect(("127.0.0.1", port))
        sock.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
                      + "".join(f"{header}\r\n" for header in headers) + "\r\n").encode())
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ)
        state[sock] = [index, b"", False]

    def drop(sock):
        selector.unregister(sock)
        sock.close()
        del state[sock]

    def pump(timeout):
        nonlocal ready, closed
        for key, _ in selector.select(timeout):
            sock = key.fileobj
            try:
                data = view[:sock.recv_into(buffer)].tobytes()
            except OSError as error:
                data = b""
                failures.append(f"receive: {error.strerror}")
            now = time.monotonic()
            entry = state[sock]
            if not data:
                closed += 1
                drop(sock)
                continue
            if not entry[2]:
                entry[1] += data
                if len(entry[1]) >= 12 and not entry[1].startswith(b"HTTP/1.1 200"):
                    failures.append(entry[1][:12].decode(errors="replace"))
                    drop(sock)
                elif b"event: ready" in entry[1]:
                    entry[2] = True
                    ready += 1
                    entry[1] = entry[1][-64:]
                continue
            if entry[0] in record:
                text = entry[1] + data
                for match in marker.finditer(text, max(0, len(entry[1]) - 24)):
                    samples.append((int(match.group(1)), now))
                entry[1] = text[-64:]

    opened = 0
    while opened < len(targets):
        wave = min(LIVE_WAVE, len(targets) - opened)
        for index in range(opened, opened + wave):
            try:
                open_stream(index)
            except OSError as error:
                failures.append(f"connect: {error.strerror}")
        opened += wave
        deadline = time.monotonic() + 60
        while ready + len(failures) < opened and time.monotonic() < deadline:
            pump(0.5)
    ready_event.set()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    while not stop_event.is_set():
        pump(0.2)
        if poll:
            time.sleep(poll)
    pump(0.5)
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    cpu = cpu.ru_utime + cpu.ru_stime - usage.ru_utime - usage.ru_stime
    connection.send((samples, ready, closed, failures[:5], len(failures), cpu))
    for sock in list(state):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        sock.close()


def live_run_callers(port, targets, record):
    """Starts the processes of callers for `targets`: the streams whose
    index is in `record` in one process that reads at once and times the
    events, the others spread over the rest, which read every 100 ms (as a
    busy client would, taking several events per read); returns them once
    every stream has its snapshot."""
    import multiprocessing
    context = multiprocessing.get_context("fork")
    timed = [i for i in range(len(targets)) if i in record]
    others = [i for i in range(len(targets)) if i not in record]
    parts = [(timed, 0.0)] if timed else []
    readers = LIVE_PROCESSES - len(parts)
    parts += [(others[part::readers], 0.1) for part in range(readers)]
    processes = []
    for indices, poll in parts:
        parent, child = context.Pipe()
        ready, stop = context.Event(), context.Event()
        chosen = [targets[i] for i in indices]
        timed_here = {n for n, i in enumerate(indices) if i in record}
        process = context.Process(target=live_clients, args=(port, chosen, timed_here, poll, child, ready, stop))
        process.start()
        processes.append((process, parent, ready, stop))
    for _, _, ready, _ in processes:
        ready.wait(300)
    return processes


def live_collect(processes):
    """Stops the callers: their samples, streams ready and closed, failures and CPU seconds."""
    samples, ready, closed, failures, failure_count, cpu = [], 0, 0, [], 0, 0.0
    for _, _, _, stop in processes:
        stop.set()
    for process, pipe, _, _ in processes:
        part = pipe.recv()
        samples += part[0]
        ready += part[1]
        closed += part[2]
        failures += part[3]
        failure_count += part[4]
        cpu += part[5]
        process.join(30)
    return samples, ready, closed, failures, failure_count, cpu


class LiveWriter:
    """One psql session that commits `UPDATE employees SET first_name =
    'L<n>'` for one row at a time, and notes when each committed (psql
    prints `UPDATE 1` once the server answered)."""

    def __init__(self):
        self.process = subprocess.Popen(["psql", "-X", "-v", "ON_ERROR_STOP=1"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, bufsize=1,
                                        env=dict(os.environ, PGUSER="postgres", PGDATABASE="employees"))
        self.sequence = 0
        self.committed = {}

    def change(self, employee):
        self.sequence += 1
        self.process.stdin.write(f"UPDATE employees SET first_name = 'L{self.sequence}' WHERE emp_no = {employee};\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line.startswith("UPDATE 1"):
            raise SystemExit(f"bench: the live writer got {line!r}")
        self.committed[self.sequence] = time.monotonic()

    def run(self, rows, rate, seconds):
        """`rate` changes a second of random rows among `rows` for `seconds`."""
        import random
        start = time.monotonic()
        for index in range(int(rate * seconds)):
            due = start + index / rate
            if due > time.monotonic():
                time.sleep(due - time.monotonic())
            self.change(random.choice(rows))

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def live_metrics(port):
    """The live feed's counters from /metrics."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        text = b""
        while chunk := connection.recv(65536):
            text += chunk
    return {name.decode(): float(value) for name, value in re.findall(rb"\n(live_[a-z_]+) ([0-9.e+]+)", text)}


def live_transactions():
    """Transactions the sample database has run so far, as PostgreSQL counts them: each
    re-read of a group is one (an implicit transaction, as its role), each change one."""
    # A backend reports its counts when it goes idle, but at most once a
    # second: counts it could not report then wait for its idle timer,
    # 10 s (PostgreSQL's PGSTAT_IDLE_INTERVAL), or its next report.
    time.sleep(10.5)
    return int(live_admin("SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = 'employees'"))


def live_percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


def live_server(log, secret_path):
    server = Server(log, options=["--max-connections", str(LIVE_CALLERS + 256), "--jwt-secret-file", secret_path,
                                  "--anonymous-role", "employees_reader", "--pool-size", "32",
                                  "--connection-timeout", "120"])
    server.wait_until_serving()
    return server


def live_scenario(args, results, log):
    """10,000 callers follow /employees as event streams in 10 groups (2
    roles, one under row-level security, by 5 filters) while 100 rows a
    second change; then, on a server of its own, one group's work per
    change with 1 caller against 1,000. The triggers of `sql-rest init
    --live` are applied to the sample database for the scenario, with the
    roles and the policy, and removed after it; the changed first names are
    put back."""
    title = f"16. live results: {LIVE_CALLERS:,} event streams"
    print(title, flush=True)
    folder = os.path.join(os.path.dirname(args.output), "live")
    os.makedirs(folder, exist_ok=True)
    admin_env = dict(os.environ, PGUSER="postgres", PGDATABASE="employees")
    run([SQL_REST, "init", "--live", "--schema", "public"], cwd=folder, env=admin_env)
    # Filters of 100 employees each: employeeNumber from 10001 + 100 k, the last one spare.
    ranges = [(10001 + 100 * k, 10101 + 100 * k) for k in range(LIVE_FILTERS + 1)]
    watched, spare = ranges[:LIVE_FILTERS], ranges[LIVE_FILTERS]
    rows = [int(n) for n in live_admin(
        f"SELECT emp_no FROM employees WHERE emp_no >= {ranges[0][0]} AND emp_no < {ranges[-1][1]}").split()]
    originals = live_admin("SELECT string_agg(format('(%s,%L)', emp_no, first_name), ',') FROM employees "
                           "WHERE emp_no IN (" + ",".join(map(str, rows)) + ")").strip()
    roles = " ".join(f"DO $$ BEGIN CREATE ROLE {role} NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$; "
                     f"GRANT {role} TO employees_reader; GRANT SELECT ON employees TO {role};" for role in LIVE_ROLES)
    live_admin(roles + " ALTER TABLE employees ENABLE ROW LEVEL SECURITY;"
               f" CREATE POLICY live_bench_others ON employees FOR SELECT USING (current_user <> '{LIVE_ROLES[1]}');"
               f" CREATE POLICY live_bench_women ON employees FOR SELECT TO {LIVE_ROLES[1]} USING (gender = 'F');")
    run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", os.path.join(folder, "live.sql")], env=admin_env)
    secret = os.urandom(32).hex().encode()
    secret_path = os.path.join(folder, "jwt-secret")
    with open(secret_path, "wb") as file:
        file.write(secret)
    tokens = {role: "Authorization: Bearer " + jwt.encode({"role": role}, secret, algorithm="HS256") for role in LIVE_ROLES}
    writer = LiveWriter()
    server = None
    try:
        server = live_server(log, secret_path)
        groups = [(role, numbers) for role in LIVE_ROLES for numbers in watched]
        targets = [(live_path(groups[i % len(groups)][1]), [tokens[groups[i % len(groups)][0]]]) for i in range(LIVE_CALLERS)]
        started = time.monotonic()
        processes = live_run_callers(server.port, targets, set(range(0, LIVE_CALLERS, LIVE_TIMED)))
        opened = time.monotonic() - started
        rss_open = server.status_kb("VmRSS")
        before, transactions_before = live_metrics(server.port), live_transactions()
        postmaster = postmaster_pid()
        cpu_before = (server.cpu_seconds(), postgres_cpu_seconds(postmaster))
        seconds = max(10, args.duration)
        writer.run([n for n in rows if watched[0][0] <= n < watched[-1][1]], LIVE_RATE, seconds)
        time.sleep(1)
        server_cpu, postgres_cpu = server.cpu_seconds() - cpu_before[0], postgres_cpu_seconds(postmaster) - cpu_before[1]
        after, transactions_after = live_metrics(server.port), live_transactions()
        samples, ready, closed, failures, failure_count, client_cpu = live_collect(processes)
        peak = server.status_kb("VmHWM")
        server.stop()
        server = None
        latencies = [(when - writer.committed[sequence]) * 1000 for sequence, when in samples
                     if sequence in writer.committed]
        batches = after.get("live_batches_total", 0) - before.get("live_batches_total", 0)
        statements = after.get("live_statements_total", 0) - before.get("live_statements_total", 0)
        delivered = after.get("live_events_total", 0) - before.get("live_events_total", 0)
        changes = int(LIVE_RATE * seconds)
        # Less the changes and the measuring query's own transaction.
        transactions = transactions_after - transactions_before - changes - 1
        p50, p99 = live_percentile(latencies, 0.5), live_percentile(latencies, 0.99)
        results.note(f"{title}: {ready:,} streams with their snapshot in {opened:.1f} s ({failure_count} failed: "
                     f"{', '.join(failures) or 'none'}; {closed} closed by the server), server RSS {mb(rss_open):.1f} MB "
                     f"once open; {changes} changes in {seconds} s, {delivered:.0f} events written to the groups, "
                     f"{len(latencies):,} timed on {LIVE_CALLERS // LIVE_TIMED:,} streams read at once: p50 {p50:.0f} ms, "
                     f"p99 {p99:.0f} ms; {batches:.0f} batches, {statements:.0f} statements by the server's count, "
                     f"{transactions} transactions besides the changes by PostgreSQL's; CPU seconds: server "
                     f"{server_cpu:.1f}, PostgreSQL {postgres_cpu:.1f}, the callers' processes {client_cpu:.1f}")
        results.add(title + ": delivery, commit to the event read", f"p50 {p50:.0f} ms, p99 {p99:.0f} ms",
                    f"{LIVE_RATE} changes/s, {len(groups)} groups", "-", "p99 <= 250 ms, every stream served",
                    p99 <= 250 and ready == LIVE_CALLERS and failure_count == 0)
        per_batch, database_per_batch = statements / max(batches, 1), transactions / max(batches, 1)
        results.add(title + ": statements per batch", f"{per_batch:.2f} ({database_per_batch:.2f} by PostgreSQL's count)",
                    f"{len(groups)} groups", "-", "<= the groups",
                    # PostgreSQL's count is the whole database's: 1 % for other sessions (autovacuum).
                    per_batch <= len(groups) and database_per_batch <= len(groups) * 1.01)
        results.add(title + ": peak RSS", f"{mb(peak):.1f} MB", "-", "-", "<= 200 MB", mb(peak) <= 200)

        # One group's work per change, on a server of its own: 1 caller, then 1,000.
        server = live_server(log, secret_path)
        spare_rows = [n for n in rows if spare[0] <= n < spare[1]]
        work = []
        for callers in (1, 1000):
            processes = live_run_callers(server.port, [(live_path(spare), [tokens[LIVE_ROLES[0]]])] * callers, set())
            metrics, transactions = live_metrics(server.port), live_transactions()
            postgres = postgres_cpu_seconds(postmaster)
            writer.run(spare_rows, 20, 5)
            time.sleep(1)
            cpu_ms = (postgres_cpu_seconds(postmaster) - postgres) * 1000
            statements = live_metrics(server.port).get("live_statements_total", 0) - metrics.get("live_statements_total", 0)
            database = live_transactions() - transactions - 100
            live_collect(processes)
            work.append((statements / 100, database / 100, cpu_ms / 100))
            results.note(f"{title}, one group with {callers:,} caller(s): per change {statements / 100:.2f} statements, "
                         f"{database / 100:.2f} transactions besides the change's, {cpu_ms / 100:.2f} ms of PostgreSQL CPU "
                         "(the change's own included)")
        ratio = work[1][2] / max(work[0][2], 1e-9)
        results.add(title + ": database work per change, 1,000 callers of one group against 1",
                    f"{work[1][0]:.2f} statements, {work[1][2]:.2f} ms CPU",
                    f"{work[0][0]:.2f} statements, {work[0][2]:.2f} ms CPU", f"{ratio:.2f}", "<= 2 x",
                    ratio <= 2 and work[1][0] <= 2 * max(work[0][0], 0.01))
    finally:
        writer.close()
        if server:
            server.stop()
        live_admin("DROP SCHEMA IF EXISTS sql_rest_live CASCADE; DROP POLICY IF EXISTS live_bench_others ON employees; "
                   "DROP POLICY IF EXISTS live_bench_women ON employees; ALTER TABLE employees DISABLE ROW LEVEL SECURITY; "
                   f"UPDATE employees AS e SET first_name = o.first_name FROM (VALUES {originals}) AS o(emp_no, first_name) "
                   "WHERE e.emp_no = o.emp_no;")
