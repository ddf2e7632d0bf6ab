"""The processes a scenario measures and the tools that measure them: the
servers, CPU accounting, wrk, pgbench, psql and curl."""

import os
import re
import resource
import socket
import subprocess
import time
from dataclasses import dataclass


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVER = os.path.join(ROOT, ".build", "release", "employees-server")
SQL_REST = os.path.join(ROOT, ".build", "release", "sql-rest")
SQL_REST_COMMAND = [SQL_REST, "serve", "--services", os.path.join(ROOT, "services")]
# A list as `sql-rest init` writes it (every column, @filter * and @order *), for scenario 11.
SQL_REST_FILTERS_COMMAND = [SQL_REST, "serve", "--services", os.path.join(ROOT, "bench", "services")]
FILTER_PATH = "/employees?lastName=eq.Facello&order=hireDate.desc"
BENCH = os.path.join(ROOT, "bench")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
SEARCH_PATTERN = "krohm*"  # the rarest last name: about 900 employees


# MARK: - Server process

class Server:
    """One employees-server process on a free port, with its /proc figures."""

    running = []  # stopped on the way out, also when the run is interrupted

    def __init__(self, log, binary=None, command=None, options=(), env=None):
        """employees-server, or `binary` (another build of it), or `command`
        (a program and its arguments before the options: sql-rest serve ...),
        with `options` besides host and port, and `env` over the variables."""
        self.port = free_port()
        # No drain on SIGTERM (the variables, which an older build ignores,
        # rather than the option, which it would refuse): nothing balances
        # the load here, and each stop would wait the drain out.
        env = dict(os.environ, PGUSER="employees_reader", PGDATABASE="employees",
                   EMPLOYEES_DRAIN_SECONDS="0", SQL_REST_DRAIN_SECONDS="0", **(env or {}))
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            (command or [binary or SERVER]) + ["--host", "127.0.0.1", "--port", str(self.port)] + list(options),
            env=env, stdout=log, stderr=log)
        self.pid = self.process.pid
        Server.running.append(self)

    def wait_until_serving(self, path="/employees/10001", timeout=10.0):
        """Seconds from the start of the process to the first 200 on `path`."""
        deadline = self.started + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"bench: employees-server exited with status {self.process.returncode}")
            status = http_status("127.0.0.1", self.port, path)
            if status == 200:
                return time.monotonic() - self.started
            time.sleep(0.001)
        raise SystemExit(f"bench: employees-server did not answer {path} within {timeout} s")

    def status_kb(self, field_name):
        with open(f"/proc/{self.pid}/status") as status:
            for line in status:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1])
        return 0

    def cpu_seconds(self):
        with open(f"/proc/{self.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime

    def stop(self):
        if self in Server.running:
            Server.running.remove(self)
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def http_status(host, port, path):
    """The status of one GET over a fresh connection, None if not reachable."""
    try:
        with socket.create_connection((host, port), timeout=2) as connection:
            connection.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
            head = connection.recv(64)
    except OSError:
        return None
    match = re.match(rb"HTTP/1\.[01] (\d{3})", head)
    return int(match.group(1)) if match else None


# MARK: - CPU accounting

def process_cpu_seconds(pid, children=False):
    """utime + stime of a process (with `children`, plus those of the children it has reaped)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    if children:
        ticks += int(fields[13]) + int(fields[14])  # cutime, cstime
    return ticks / CLOCK_TICKS


def postmaster_pid():
    """The PID of the cluster's postmaster, from the lock file beside its socket."""
    path = os.path.join(os.environ["PGHOST"], f".s.PGSQL.{os.environ['PGPORT']}.lock")
    try:
        with open(path) as lock:
            return int(lock.readline())
    except (OSError, ValueError):
        return None


def postgres_children(postmaster):
    """The postmaster's child processes (backends and auxiliary processes,
    zombies included), as {pid: CPU seconds}."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == postmaster:  # ppid
                children[int(entry)] = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
    return children


def postgres_cpu_seconds(postmaster):
    """CPU seconds used so far by the cluster: the postmaster, the backends it
    has reaped, and those still running. Only exact while no child is being
    reaped: one reaped between the two readings is counted twice or not at
    all (see `settle`)."""
    if postmaster is None:
        return 0.0
    return process_cpu_seconds(postmaster, children=True) + sum(postgres_children(postmaster).values())


def settle(postmaster, count, timeout=5.0):
    """Waits until the postmaster has no more than `count` children: the
    backends of a pgbench run that has just ended are gone (`pgbench` calls
    it). Their exit raced with `postgres_cpu_seconds`, and the CPU of a few
    of them (about a second each) moved from pgbench's measurement into the
    service's that followed: PostgreSQL seemed to spend 150–250 µs per
    request of scenario 2 for the service and 60–90 for pgbench, more than
    the two cores could give."""
    deadline = time.monotonic() + timeout
    while postmaster is not None and time.monotonic() < deadline:
        if len(postgres_children(postmaster)) <= count:
            return
        time.sleep(0.02)


_drained = False  # no load has run since the last drain found the database idle


def drain(timeout=5.0):
    """Waits, 5 s at most, until no client of the employees database runs a
    statement (two readings in a row, 50 ms apart). A server goes on
    executing the requests in flight when wrk stops (closing a connection
    cancels nothing), and the measurement that follows, of another server
    or of pgbench, would pay for that work. Each wrk and pgbench run, and
    each measured window before its first reading, begins here; a drain
    with no load since the last one returns at once."""
    global _drained
    if _drained:
        return
    query = ("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
             "AND backend_type = 'client backend' AND state = 'active' AND pid <> pg_backend_pid()")
    deadline = time.monotonic() + timeout
    idle_readings = 0
    while time.monotonic() < deadline:
        count = run(["psql", "-X", "-A", "-t", "-d", "employees", "-c", query],
                    env=dict(os.environ, PGUSER="postgres")).strip()
        idle_readings = idle_readings + 1 if count == "0" else 0
        if idle_readings == 2:
            _drained = True
            return
        time.sleep(0.05)
    print(f"bench: the database still ran statements {timeout:.0f} s after the load stopped", flush=True)


def loading():
    """Drains the database, then notes that a load starts on it."""
    global _drained
    drain()
    _drained = False


def children_cpu_seconds():
    """CPU seconds of the tools this script has run and waited for (wrk, pgbench)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass
class CPUSplit:
    """CPU microseconds per request (or transaction) of each process of a measurement."""
    server: float | None
    postgres: float
    tool: float

    def text(self, tool_name):
        parts = [] if self.server is None else [f"server {self.server:.1f}"]
        parts += [f"PostgreSQL {self.postgres:.1f}", f"{tool_name} {self.tool:.1f}"]
        return "CPU µs per request: " + ", ".join(parts)


def measured(measure, duration, server=None):
    """Runs `measure` (a wrk or pgbench run of `duration` seconds) and returns
    its `Load` with the CPU each process spent per request. The window
    opens on a drained database, so that it holds no earlier load's work."""
    drain()
    postmaster = postmaster_pid()
    before = (server.cpu_seconds() if server else 0.0, postgres_cpu_seconds(postmaster), children_cpu_seconds())
    load = measure()
    after = (server.cpu_seconds() if server else 0.0, postgres_cpu_seconds(postmaster), children_cpu_seconds())
    requests = max(load.requests_per_second * duration, 1.0)
    per_request = [(a - b) * 1e6 / requests for a, b in zip(after, before)]
    return load, CPUSplit(per_request[0] if server else None, per_request[1], per_request[2])


# MARK: - Tools

def run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise SystemExit(f"bench: {' '.join(command)} failed:\n{result.stdout}{result.stderr}")
    return result.stdout


@dataclass
class Load:
    requests_per_second: float
    p50_ms: float = 0.0
    p99_ms: float = 0.0
    non_2xx: int = 0
    errors: int = 0
    error_text: str = ""


def milliseconds(text):
    number, unit = re.match(r"([\d.]+)(us|ms|s|m)", text).groups()
    return float(number) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}[unit]


def wrk(args, url, script, script_args, duration):
    command = ["wrk", "-t", str(args.threads), "-c", str(args.connections), "-d", f"{duration}s",
               "--timeout", f"{args.timeout}s", "--latency", "-s", os.path.join(BENCH, script), url]
    if script_args:
        command += ["--"] + script_args
    loading()
    output = run(command)
    load = Load(float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1)))
    load.p50_ms = milliseconds(re.search(r"\n\s+50%\s+(\S+)", output).group(1))
    load.p99_ms = milliseconds(re.search(r"\n\s+99%\s+(\S+)", output).group(1))
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    load.non_2xx = int(non_2xx.group(1)) if non_2xx else 0
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output)
    load.errors = sum(int(n) for n in errors.groups()) if errors else 0
    load.error_text = errors.group(0) if errors else "no socket errors"
    return load


def pgbench(args, script, duration, defines=()):
    command = ["pgbench", "-M", "prepared", "-n", "-c", str(args.pgbench_clients), "-j", "2",
               "-T", str(duration), "-f", os.path.join(BENCH, script)]
    for define in defines:
        command += ["-D", define]
    command.append("employees")
    loading()
    postmaster = postmaster_pid()
    count = len(postgres_children(postmaster)) if postmaster else 0
    output = run(command, env=dict(os.environ, PGUSER="employees_reader"))
    settle(postmaster, count)
    tps = re.search(r"tps = ([\d.]+) \((without initial connection time|excluding connections establishing)\)", output)
    failed = re.search(r"number of failed transactions: (\d+)", output)
    load = Load(float(tps.group(1)))
    load.p50_ms = float(re.search(r"latency average = ([\d.]+) ms", output).group(1))
    load.non_2xx = int(failed.group(1)) if failed else 0
    return load


def psql_seconds(script, env=None):
    env = dict(os.environ, PGUSER="employees_reader", PGDATABASE="employees", **(env or {}))
    started = time.monotonic()
    with open(os.devnull, "w") as sink:
        subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", os.path.join(BENCH, script)],
                       env=env, stdout=sink, check=True)
    return time.monotonic() - started


def curl(port, path, headers=()):
    output = run(["curl", "-sS", "-o", "/dev/null", "-w",
                  "%{http_code} %{time_starttransfer} %{time_total} %{size_download}"]
                 + [argument for header in headers for argument in ("-H", header)]
                 + [f"http://127.0.0.1:{port}{path}"])
    status, first_byte, total, size = output.split()
    if status != "200":
        raise SystemExit(f"bench: GET {path} answered {status}")
    return float(first_byte), float(total), int(size)
