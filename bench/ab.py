"""Alternating A/B of Tandem builds on one scenario: the CPU each request costs the server.

    python3 bench/ab.py OLD_BINARY,NEW_BINARY ROUNDS PATH [WRK_SCRIPT|-] [SECONDS]
    python3 bench/ab.py /tmp/tandem-old,target/release/tandem 4 /health/live
    python3 bench/ab.py /tmp/tandem-old,target/release/tandem 4 / keyed_post.lua

On this shared 2-core VM, requests per second drift by up to 45% between consecutive runs of one
binary; user and system CPU per request, read from /proc/<pid>/stat, drift far less, and taking
turns spreads the drift over both builds. A binary may carry environment settings after `@`, e.
g. `target/release/tandem@MIMALLOC_PURGE_DELAY=10`. Needs the data `bench/run` seeds.
"""

import os
import signal
import subprocess
import sys
import time

import run as bench

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(fields[11]) / TICKS, int(fields[12]) / TICKS


def measure(binary, path, script, seconds, token):
    executable, _, settings = binary.partition("@")
    env = {**bench.ENV, **dict(kv.split("=", 1) for kv in settings.split(";") if kv)}
    # The log goes to a file, as an operator keeps it: at the default level its cost is part of a request's.
    log = open(bench.BENCH / ".ab.log", "w")
    server = subprocess.Popen([executable, "serve"], env=env, stdout=log, stderr=log)
    try:
        bench.wait_ready(f"http://127.0.0.1:{bench.PORT}/health/ready")
        bench.wrk(path, token, script, duration="2s")  # warm-up
        user0, system0 = cpu_seconds(server.pid)
        result = bench.wrk(path, token, script, duration=f"{seconds}s")
        user1, system1 = cpu_seconds(server.pid)
        requests = result["rps"] * seconds
        peak = bench.memory_mb(server.pid)["VmHWM"]
        return result["rps"], 1e6 * (user1 - user0) / requests, 1e6 * (system1 - system0) / requests, peak
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        log.close()


def main():
    binaries, rounds, path = sys.argv[1].split(","), int(sys.argv[2]), sys.argv[3]
    script = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] != "-" else None
    seconds = int(sys.argv[5]) if len(sys.argv) > 5 else 5
    token = bench.sh(str(bench.TANDEM), "token", "--sub", "bench", "--role", "admin", "--ttl", "2h").strip()
    measured = {binary: [] for binary in binaries}
    for _ in range(rounds):
        for binary in binaries:
            rps, user, system, peak = measure(binary, path, script, seconds, token)
            measured[binary].append((rps, user, system))
            print(f"{binary[-40:]:>40}  {rps:9,.0f} req/s  user {user:5.2f} µs  sys {system:5.2f} µs  "
                  f"peak RSS {peak:.1f} MB", flush=True)
    for binary, runs in measured.items():
        user = sum(r[1] for r in runs) / len(runs)
        system = sum(r[2] for r in runs) / len(runs)
        print(f"{binary[-40:]:>40}  mean per request: user {user:.2f} µs, sys {system:.2f} µs")


if __name__ == "__main__":
    main()
