"""Scenario a: what a bearer token and a role cost."""

import os
import statistics
import time

import jwt  # PyJWT: Debian's python3-jwt (scripts/setup)

from .processes import SERVER, Server, curl, http_status, measured, wrk


def auth_scenario(args, results, log):
    """What authentication and a role cost: scenario 1 (the pipeline loop)
    and scenario 3 (a streamed list) on a server that checks an HS256 token
    and runs each request's queries as its role (SET LOCAL ROLE through
    set_config), against the anonymous server, in the same rounds. The role
    is employees_reader, the server's own login role: the switch and its
    check are real, the grants the same."""
    title = "a. bearer token and role"
    print(title, flush=True)
    secret_path = os.path.join(os.path.dirname(args.output), "jwt-secret")
    secret = os.urandom(32).hex().encode()
    with open(secret_path, "wb") as file:
        file.write(secret)
    authorization = "Authorization: Bearer " + jwt.encode({"role": "employees_reader"}, secret, algorithm="HS256")
    anonymous = Server(log)
    anonymous.wait_until_serving()
    authenticated = Server(log, command=[SERVER, "--jwt-secret-file", secret_path])
    deadline = time.monotonic() + 10
    while http_status("127.0.0.1", authenticated.port, "/health/live") != 204 and time.monotonic() < deadline:
        time.sleep(0.01)
    plain_url, auth_url = f"http://127.0.0.1:{anonymous.port}", f"http://127.0.0.1:{authenticated.port}"
    wrk(args, plain_url, "employee.lua", [], args.warmup)
    wrk(args, auth_url, "employee.lua", ["", authorization], args.warmup)
    plain, authed, plain_lists, authed_lists = [], [], [], []
    for round_number in range(1, args.rounds + 1):
        load, plain_cpu = measured(lambda: wrk(args, plain_url, "employee.lua", [], args.duration), args.duration, anonymous)
        plain.append(load)
        load, auth_cpu = measured(lambda: wrk(args, auth_url, "employee.lua", ["", authorization], args.duration),
                                  args.duration, authenticated)
        authed.append(load)
        results.note(f"{title}, round {round_number}: with a token and a role {auth_cpu.text('wrk')}; "
                     f"anonymous {plain_cpu.text('wrk')}")
        if authed[-1].non_2xx or authed[-1].errors:
            raise SystemExit(f"bench: {title}: {authed[-1].non_2xx} non-2xx responses, {authed[-1].error_text}")
        _, plain_list, _ = curl(anonymous.port, "/employees")
        _, authed_list, _ = curl(authenticated.port, "/employees", [authorization])
        plain_lists.append(plain_list)
        authed_lists.append(authed_list)
        results.note(f"{title}, round {round_number}: GET /employees/{{n}} {authed[-1].requests_per_second:,.0f} req/s "
                     f"(p50 {authed[-1].p50_ms:.2f} ms) with a token and a role, "
                     f"{plain[-1].requests_per_second:,.0f} req/s (p50 {plain[-1].p50_ms:.2f} ms) anonymous; "
                     f"GET /employees {authed_list:.2f} s with, {plain_list:.2f} s without")
    anonymous.stop()
    authenticated.stop()
    os.remove(secret_path)
    rate = statistics.mean(l.requests_per_second for l in authed)
    plain_rate = statistics.mean(l.requests_per_second for l in plain)
    results.add("a. GET /employees/{n} with a bearer token and a role", f"{rate:,.0f} req/s",
                f"{plain_rate:,.0f} req/s anonymous", f"{rate / plain_rate:.2f}", "measured", True)
    wall = statistics.mean(authed_lists)
    plain_wall = statistics.mean(plain_lists)
    results.add("a. GET /employees with a bearer token and a role: wall time", f"{wall:.2f} s",
                f"{plain_wall:.2f} s anonymous", f"{wall / plain_wall:.2f}", "measured", True)
