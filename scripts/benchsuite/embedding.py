"""Scenario 15: embedding spelled as PostgREST's clients spell it (select=) against details=."""

import statistics

from .processes import Server, wrk
from .results import paired_verdict
from .streams import stream_scenario


EMBED_PATHS = {
    "select=": "/employees?select=*,titles(*),salaries(*)&limit=20&offset=1000",
    "details=": "/employees?details=titles,salaries&limit=20&offset=1000",
}


def embedding_scenario(args, results, log):
    """Embedding spelled as PostgREST's clients spell it: pages of 20
    employees with their titles and salaries by `select=*,titles(*),salaries(*)`
    against `details=titles,salaries` on the same server (one engine, two
    spellings), rounds interleaved, their order alternating; a page of 10
    with `Prefer: count=planned` against none; and the whole list with
    embedded salaries streamed as scenario 4 streams `details=salaries`."""
    title = "15. embedding"
    print(title, flush=True)
    server = Server(log)
    server.wait_until_serving()
    url = f"http://127.0.0.1:{server.port}"
    rates = {name: [] for name in EMBED_PATHS}
    pages, planned = [], []
    for round_number in range(1, 2 * args.rounds + 1):
        order = list(EMBED_PATHS) if round_number % 2 else list(reversed(EMBED_PATHS))
        for name in order:
            rates[name].append(wrk(args, url, "path.lua", [EMBED_PATHS[name]], args.duration).requests_per_second)
        results.note(f"{title}, round {round_number}: " + ", ".join(f"{name} {rates[name][-1]:,.0f} req/s" for name in EMBED_PATHS))
    for round_number in range(1, args.rounds + 1):
        pages.append(wrk(args, url, "page.lua", [], args.duration).requests_per_second)
        planned.append(wrk(args, url, "page.lua", ["planned"], args.duration).requests_per_second)
        results.note(f"{title}, round {round_number}: a page of 10 {pages[-1]:,.0f} req/s, "
                     f"with Prefer: count=planned {planned[-1]:,.0f} req/s")
    server.stop()
    verdict = paired_verdict(rates["select="], rates["details="], 0.95)
    results.add("15. GET /employees?select=*,titles(*),salaries(*) against details=titles,salaries (pages of 20)",
                f"{statistics.mean(rates['select=']):,.0f} req/s", f"{statistics.mean(rates['details=']):,.0f} req/s (details=)",
                verdict.text, ">= 0.95 x details=", not verdict.missed)
    verdict = paired_verdict(planned, pages, 0.5)
    results.add("15. a page of 10 with Prefer: count=planned", f"{statistics.mean(planned):,.0f} req/s",
                f"{statistics.mean(pages):,.0f} req/s without a count", verdict.text, ">= 0.5 x without a count",
                not verdict.missed)
    stream_scenario(args, results, log, "15. GET /employees?select=*,salaries(*)", "/employees?select=*,salaries(*)",
                    "employees-salaries.sql", 0.5, None, 25)

