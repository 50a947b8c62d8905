"""The soak: the S6 mix at a steady pace for a long run (10 minutes by default) on PostgreSQL
and Redis, at the default log level, sampling once a minute what a leak would show: resident
memory, open file descriptors, database connections, and the p99 and errors of that minute.
Started by bench/soak; writes its section of bench/RESULTS.md.

The pace: each of CONNECTIONS connections waits DELAY_MS between requests (wrk's `delay`), so
the offered load stays near a fixed rate far below the peak, as production traffic would.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

from run import replace_section, BENCH, DB, ENV, PORT, TANDEM, parse_wrk, prepare_data, psql, sh, wait_ready

MINUTES = int(os.environ.get("SOAK_MINUTES", "10"))
WARMUP_SECONDS = int(os.environ.get("SOAK_WARMUP_SECONDS", "60"))
CONNECTIONS = int(os.environ.get("SOAK_CONNECTIONS", "16"))
DELAY_MS = int(os.environ.get("SOAK_DELAY_MS", "10"))
SECTION = "## Soak"


def paced_minute(token, seconds=60):
    env = {**ENV, "BENCH_DELAY_MS": str(DELAY_MS)}
    args = ["wrk", "-t2", f"-c{CONNECTIONS}", f"-d{seconds}s", "--latency", "-H", f"Authorization: Bearer {token}",
            "-s", str(BENCH / "wrk" / "mix.lua"), f"http://127.0.0.1:{PORT}/"]
    return parse_wrk(subprocess.run(args, check=True, capture_output=True, text=True, env=env).stdout)


def sample(pid):
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    rss_mb = int(status["VmRSS"].split()[0]) / 1024
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    connections = int(psql(f"SELECT count(*) FROM pg_stat_activity WHERE datname = '{DB}'"))
    return {"rss": rss_mb, "fds": fds, "db": connections}


def main():
    print(f"data ready ({prepare_data():.1f} s)")
    psql("CHECKPOINT")
    env = {**ENV}
    # The default log level, one access-log line per request, written where an operator would.
    env.pop("TANDEM_LOG", None)
    log = open(BENCH / ".soak.log", "w")
    server = subprocess.Popen([str(TANDEM), "serve"], env=env, stdout=log, stderr=log)
    token = sh(str(TANDEM), "token", "--sub", "soak", "--role", "admin", "--ttl", "2h").strip()
    rows = []
    try:
        wait_ready(f"http://127.0.0.1:{PORT}/health/ready")
        if server.poll() is not None:
            raise RuntimeError(f"the server exited (another one on port {PORT}?): see bench/.soak.log")
        warmup = paced_minute(token, WARMUP_SECONDS)
        start = sample(server.pid)
        print(f"warm-up: {warmup['rps']:.0f} req/s, {start}")
        for minute in range(1, MINUTES + 1):
            result = paced_minute(token)
            rows.append({"minute": minute, **result, **sample(server.pid)})
            print(rows[-1], flush=True)
    finally:
        server.terminate()
        server.wait(timeout=60)
        log.close()
    write(start, rows)
    growth = rows[-1]["rss"] - start["rss"]
    return 0 if growth <= 1.0 and all(r["errors"] == 0 for r in rows) else 1


def write(start, rows):
    growth = rows[-1]["rss"] - start["rss"]
    peak_growth = max(r["rss"] for r in rows) - start["rss"]
    lines = [
        SECTION,
        "",
        f"`bench/soak` on {time.strftime('%Y-%m-%d %H:%M')}: the S6 mix (80% reads by id, 15% customer pages, 5% keyed "
        f"POSTs) for {len(rows)} minutes after {WARMUP_SECONDS} s of warm-up, {CONNECTIONS} connections each waiting "
        f"{DELAY_MS} ms between requests, release build on PostgreSQL and Redis, at the default log level (one "
        "access-log line a request, to a file). A `bench/run` keeps this section as it is.",
        "",
        "| minute | req/s | p50 ms | p99 ms | errors | RSS MB | open fds | db connections |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
        f"| warm-up end | | | | | {start['rss']:.2f} | {start['fds']} | {start['db']} |",
    ]
    for r in rows:
        lines.append(f"| {r['minute']} | {r['rps']:,.0f} | {r['p50']:.2f} | {r['p99']:.2f} | {r['errors']} | "
                     f"{r['rss']:.2f} | {r['fds']} | {r['db']} |")
    verdict = "met" if growth <= 1.0 else "not met"
    lines += ["", f"RSS growth after warm-up: {growth:+.2f} MB at the end, {peak_growth:+.2f} MB at most "
              f"(target ≤ 1 MB: {verdict}).", ""]
    replace_section(SECTION, lines)


if __name__ == "__main__":
    sys.exit(main())
