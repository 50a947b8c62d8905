"""Ten times the data (issue 19): S2 (page 0 with exact totals), S3 (a cursor halfway through
the customers) and S4 (one branch) on 10,000,000 users and 10,000,000 customers, against the
same scenarios on the suite's 1,000,000-row database, in one run. Started by bench/tenfold;
writes its section of bench/RESULTS.md, with the seeding time.

Both servers run at once on their own database and take turns (three rounds each, the median
round reported); the latency of one request of each kind is the median of 31.
"""

import os
import subprocess
import sys
import time

from run import (BENCH, ENV, PORT, TANDEM, get_json, interleaved, prepare_data, psql, replace_section, sh, stop_all,
                 timed_get, wait_ready)

SECTION = "## Ten times the data"
BIG_DB = os.environ.get("BENCH_BIG_DATABASE", "tandem_bench_10m")
BIG_ROWS = int(os.environ.get("BENCH_BIG_ROWS", "10000000"))
SMALL_ROWS = int(ENV["BENCH_USERS"])
BIG_PORT = PORT + 5
BIG_ENV = {**ENV, "TANDEM_DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{BIG_DB}",
           "TANDEM_LISTEN": f"127.0.0.1:{BIG_PORT}", "BENCH_USERS": str(BIG_ROWS), "TANDEM_DRAIN_SECONDS": "0"}


def prepare_big():
    """Seeds the big database once; returns the seconds it took (0 when it was already there)."""
    if not psql(f"SELECT 1 FROM pg_database WHERE datname = '{BIG_DB}'"):
        psql(f"CREATE DATABASE {BIG_DB}")
    subprocess.run([str(TANDEM), "migrate"], check=True, env=BIG_ENV, capture_output=True)
    users = int(psql("SELECT count(*) FROM users", BIG_DB) or 0)
    customers = int(psql("SELECT coalesce(sum(n), 0) FROM customer_counts WHERE branch_code = ''", BIG_DB) or 0)
    if users >= BIG_ROWS and customers >= BIG_ROWS:
        return 0.0
    started = time.time()
    out = subprocess.run([str(TANDEM), "seed", "--users", str(max(0, BIG_ROWS - users)),
                          "--customers", str(max(0, BIG_ROWS - customers))],
                         check=True, capture_output=True, text=True, env=BIG_ENV)
    print(out.stderr.strip())
    return time.time() - started


def scenarios(token, port, rows):
    deep = get_json(f"/api/v2/customers?count=false&size=20&page={rows // 2 // 20}", token, port)["nextCursor"]
    return {
        "S2": {"path": "/api/v2/customers?size=20", "token": token, "port": port},
        "S3": {"path": f"/api/v2/customers?size=20&cursor={deep}", "token": token, "port": port},
        "S4": {"path": "/api/customers/branch/?branchCode=042&size=20", "token": token, "port": port},
    }


def main():
    print(f"1M data ready ({prepare_data():.1f} s)")
    seeded = prepare_big()
    print(f"10M data ready ({seeded:.1f} s seeding)")
    psql("CHECKPOINT")
    log = open(BENCH / ".tenfold.log", "w")
    small_env = {**ENV, "TANDEM_DRAIN_SECONDS": "0"}
    servers = [subprocess.Popen([str(TANDEM), "serve"], env=env, stdout=log, stderr=log) for env in (small_env, BIG_ENV)]
    token = sh(str(TANDEM), "token", "--sub", "tenfold", "--role", "admin", "--ttl", "2h").strip()
    try:
        for port in (PORT, BIG_PORT):
            wait_ready(f"http://127.0.0.1:{port}/health/ready")
        small, big = scenarios(token, PORT, SMALL_ROWS), scenarios(token, BIG_PORT, BIG_ROWS)
        runs = {}
        for name in small:
            runs[f"{name} 1M"] = small[name]
            runs[f"{name} 10M"] = big[name]
        results = interleaved(runs)
        latency = {f"{name} {size}": timed_get(kwargs["path"], token, port=kwargs["port"])
                   for size, table in (("1M", small), ("10M", big)) for name, kwargs in table.items()}
    finally:
        stop_all(servers)
        log.close()
    write(results, latency, seeded)
    return 0


def write(results, latency, seeded):
    what = {"S2": "page 0 with exact totals", "S3": "a cursor halfway (depth 500,000 / 5,000,000)",
            "S4": "one branch (`branchCode=042`), page 0"}
    lines = [
        SECTION,
        "",
        f"`bench/tenfold` on {time.strftime('%Y-%m-%d %H:%M')}: {BIG_ROWS:,} users and {BIG_ROWS:,} customers "
        f"(100 branches) against the suite's {SMALL_ROWS:,} of each, both servers up at once on their own "
        "database, release build on PostgreSQL and Redis at the default log level; wrk with 64 connections, "
        "three rounds each taking turns (median shown); latency is the median of 31 single requests.",
        "",
        f"Seeding the 10M database: {seeded:,.0f} s" + (" (seeded by an earlier run)." if seeded == 0 else "."),
        "",
        "| scenario | 1M req/s | 10M req/s | 1M ms | 10M ms | 10M latency ÷ 1M | target ≤ 1.2 |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for name, text in what.items():
        small, big = results[f"{name} 1M"], results[f"{name} 10M"]
        ratio = latency[f"{name} 10M"] / latency[f"{name} 1M"]
        throughput = small["rps"] / big["rps"]
        verdict = "met" if max(ratio, throughput) <= 1.2 else "not met"
        lines.append(f"| {name}: {text} | {small['rps']:,.0f} | {big['rps']:,.0f} | {latency[f'{name} 1M']:.2f} | "
                     f"{latency[f'{name} 10M']:.2f} | {ratio:.2f} (throughput {throughput:.2f}) | {verdict} |")
    lines.append("")
    replace_section(SECTION, lines)


if __name__ == "__main__":
    sys.exit(main())
