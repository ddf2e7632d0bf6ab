"""Scenario 18: GET /rpc/<a set-returning function> against pgbench calling it."""

import os
import shutil

from .load import load_scenario
from .processes import SQL_REST, run
from .writes import write_admin


RPC_PATH = "/rpc/employees_from?first=10001"


def rpc_scenario(args, results, log):
    """`sql-rest serve` on the folder `init` writes for a schema of the
    scenario's own holding one set-returning function (50 employees from
    a number on, read by the primary key), called by GET as PostgREST's clients call it, against
    pgbench running `SELECT * FROM` the function (bench/rpc.sql)."""
    api = os.path.join(os.path.dirname(args.output), "rpc", "api")
    shutil.rmtree(api, ignore_errors=True)
    write_admin("DROP SCHEMA IF EXISTS bench_rpc CASCADE; CREATE SCHEMA bench_rpc;"
                " GRANT USAGE ON SCHEMA bench_rpc TO employees_reader;"
                " CREATE FUNCTION bench_rpc.employees_from(first int) RETURNS SETOF public.employees LANGUAGE sql STABLE"
                " AS 'SELECT * FROM public.employees WHERE emp_no >= first AND emp_no < first + 50 ORDER BY emp_no';")
    try:
        run([SQL_REST, "init", "--out", api, "--schema", "bench_rpc"],
            env=dict(os.environ, PGUSER="employees_reader", PGDATABASE="employees"))
        load_scenario(args, results, log, f"18. sql-rest: GET {RPC_PATH}", 0.6, "path.lua", [RPC_PATH], "rpc.sql",
                      ["first=10001"], command=[SQL_REST, "serve", "--services", api], ready_path=RPC_PATH)
    finally:
        write_admin("DROP SCHEMA bench_rpc CASCADE")
