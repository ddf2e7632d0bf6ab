"""Scenario 17: a bulk insert as PostgREST's clients send it, against psql's \\copy."""

import json
import os
import statistics
import time
import urllib.request

from .processes import SQL_REST, Server, run
from .results import mb


WRITE_ROWS = 100_000


def write_admin(sql):
    """Runs `sql` on the sample database as the cluster's superuser."""
    return run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql],
               env=dict(os.environ, PGUSER="postgres", PGDATABASE="employees"))


def writes_scenario(args, results, log):
    """100,000 rows posted as one JSON array to `sql-rest serve` on a
    folder `init --writes` wrote for a table of the scenario's own, against
    psql's `\\copy` of the same rows as CSV into the same table, rounds
    alternating (the table emptied before each); the server's peak RSS."""
    title = f"17. POST of {WRITE_ROWS:,} rows as one JSON array"
    print(title, flush=True)
    folder = os.path.join(os.path.dirname(args.output), "writes")
    os.makedirs(folder, exist_ok=True)
    write_admin("DROP SCHEMA IF EXISTS bench_writes CASCADE; CREATE SCHEMA bench_writes;"
                " GRANT USAGE ON SCHEMA bench_writes TO employees_reader;"
                " CREATE TABLE bench_writes.item (id int PRIMARY KEY, name text NOT NULL, price numeric(10,2),"
                " added date NOT NULL DEFAULT current_date, note text);"
                " GRANT SELECT, INSERT, DELETE ON bench_writes.item TO employees_reader;")
    rows = [{"id": n, "name": f"item {n}", "price": f"{n % 1000}.{n % 100:02d}", "note": None if n % 3 else "third"}
            for n in range(1, WRITE_ROWS + 1)]
    body = json.dumps(rows).encode()
    csv_path = os.path.join(folder, "items.csv")
    with open(csv_path, "w") as file:
        for row in rows:
            file.write(f"{row['id']},{row['name']},{row['price']},{row['note'] or ''}\n")
    env = dict(os.environ, PGUSER="employees_reader", PGDATABASE="employees")
    run([SQL_REST, "init", "--out", os.path.join(folder, "api"), "--schema", "bench_writes", "--writes"], env=env)
    server = Server(log, command=[SQL_REST, "serve", "--services", os.path.join(folder, "api")])
    server.wait_until_serving("/item")
    served, copied = [], []
    try:
        for round_number in range(1, 2 * args.rounds + 1):
            for turn in (["server", "psql"] if round_number % 2 else ["psql", "server"]):
                write_admin("TRUNCATE bench_writes.item")
                started = time.monotonic()
                if turn == "server":
                    request = urllib.request.Request(
                        f"http://127.0.0.1:{server.port}/item", data=body, method="POST",
                        headers={"Content-Type": "application/json", "Prefer": "return=minimal"})
                    with urllib.request.urlopen(request, timeout=300) as answer:
                        if answer.status != 201:
                            raise SystemExit(f"bench: the bulk insert answered {answer.status}")
                    served.append(time.monotonic() - started)
                else:
                    run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c",
                         f"\\copy bench_writes.item (id, name, price, note) FROM '{csv_path}' WITH (FORMAT csv)"], env=env)
                    copied.append(time.monotonic() - started)
                count = int(write_admin("SELECT count(*) FROM bench_writes.item"))
                if count != WRITE_ROWS:
                    raise SystemExit(f"bench: {turn} stored {count} rows, not {WRITE_ROWS}")
            results.note(f"{title}, round {round_number}: the server {served[-1]:.2f} s, psql's \\copy {copied[-1]:.2f} s")
        peak = server.status_kb("VmHWM")
    finally:
        server.stop()
        write_admin("DROP SCHEMA bench_writes CASCADE")
    server_time, psql_time = statistics.median(served), statistics.median(copied)
    ratio = psql_time / server_time
    results.add(title, f"{server_time:.2f} s ({len(body) / 1e6:.1f} MB)", f"{psql_time:.2f} s (psql \\copy, CSV)",
                f"{ratio:.2f}", ">= 0.3 x psql's rate", ratio >= 0.3)
    results.add(title + ": peak RSS", f"{mb(peak):.1f} MB", "-", "-", "<= 40 MB", mb(peak) <= 40)
