"""Alternating A/B of Tandem builds on one scenario: the CPU each request costs the server.

    python3 bench/ab.py OLD_BINARY,NEW_BINARY ROUNDS PATH [WRK_SCRIPT|-] [SECONDS]
    python3 bench/ab.py /tmp/tandem-old,target/release/tandem 4 /health/live
    python3 bench/ab.py /tmp/tandem-old,target/release/tandem 4 / keyed_post.lua
    python3 bench/ab.py target/profiling/tandem 0 / random_user.lua   # instructions only
    python3 bench/ab.py target/release/examples/bare_hyper 0 /          # the floors take an address

On this shared 2-core VM, requests per second drift by up to 45% between consecutive runs of one
binary; user and system CPU per request, read from /proc/<pid>/stat, drift far less, and taking
turns spreads the drift over both builds. A binary may carry environment settings after `@`, e.
g. `target/release/tandem@MIMALLOC_PURGE_DELAY=10`. Needs the data `bench/run` seeds.

Then, once per binary, the measure this machine cannot blur: instructions (and cycles) per
request of the server process over a fixed number of answered requests (BENCH_COUNTED, 4,000;
0 skips the count),
from `perf stat` where the machine has hardware counters, else from `valgrind --tool=callgrind`,
which counts instructions exactly but no cycles. The callgrind profile is kept in
bench/.callgrind/ for `callgrind_annotate --inclusive=yes` (the account by layer in RESULTS.md).
"""

import os
import re
import signal
import subprocess
import sys
import time

import run as bench

TICKS = os.sysconf("SC_CLK_TCK")
COUNTED = int(os.environ.get("BENCH_COUNTED", "4000"))
# Connections of the counted runs. wrk stops at the COUNTED-th answer; the server also answers
# the (at most) CONNECTIONS - 1 requests still in flight then: 0.2% of 4,000, left uncorrected.
COUNTED_CONNECTIONS = 8
PROFILES = bench.BENCH / ".callgrind"


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(fields[11]) / TICKS, int(fields[12]) / TICKS


def split(binary):
    executable, _, settings = binary.partition("@")
    return executable, {**bench.ENV, **dict(kv.split("=", 1) for kv in settings.split(";") if kv)}


def command(executable):
    """How to start the server: Tandem serves; the floors (`bare_hyper`, `bare_poem`) take an address."""
    if os.path.basename(executable).startswith("bare_"):
        return [executable, f"127.0.0.1:{bench.PORT}"], "/"
    return [executable, "serve"], "/health/ready"


def measure(binary, path, script, seconds, token):
    executable, env = split(binary)
    # The log goes to a file, as an operator keeps it: at the default level its cost is part of a request's.
    log = open(bench.BENCH / ".ab.log", "w")
    args, ready = command(executable)
    server = subprocess.Popen(args, env=env, stdout=log, stderr=log)
    try:
        bench.wait_ready(f"http://127.0.0.1:{bench.PORT}{ready}")
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


def counted_wrk(path, script, token, requests):
    """Exactly `requests` answers on one wrk thread (bench/wrk/counted.lua), then wrk is stopped."""
    done = bench.BENCH / ".counted"
    done.unlink(missing_ok=True)
    env = {**bench.ENV, "BENCH_REQUESTS": str(requests), "BENCH_DONE": str(done),
           "BENCH_SCRIPT": str(bench.BENCH / "wrk" / script) if script else ""}
    wrk = subprocess.Popen(["wrk", "-t1", f"-c{COUNTED_CONNECTIONS}", "-d3600s", "-s",
                            str(bench.BENCH / "wrk/counted.lua"), "-H", f"Authorization: Bearer {token}",
                            f"http://127.0.0.1:{bench.PORT}{path}"], env=env, stdout=subprocess.PIPE, text=True)
    deadline = time.time() + 1800
    while not done.exists():
        if wrk.poll() is not None or time.time() > deadline:
            raise RuntimeError("the counted run ended before its last answer")
        time.sleep(0.1)
    wrk.send_signal(signal.SIGINT)
    out, _ = wrk.communicate(timeout=60)
    done.unlink()
    if re.search(r"Non-2xx|Socket errors", out):
        raise RuntimeError(f"some counted requests failed:\n{out}")


def hardware_counters():
    """Whether `perf stat` can count instructions here (a VM often has no counters to offer)."""
    probe = subprocess.run(["perf", "stat", "-x,", "-e", "instructions", "true"], capture_output=True, text=True)
    return probe.returncode == 0 and "not supported" not in probe.stderr


def counted_by_perf(binary, path, script, token):
    """Instructions and cycles per request: `perf stat` attached to the server for COUNTED requests."""
    executable, env = split(binary)
    args, ready = command(executable)
    server = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        bench.wait_ready(f"http://127.0.0.1:{bench.PORT}{ready}")
        counted_wrk(path, script, token, COUNTED // 4)  # warm-up
        perf = subprocess.Popen(["perf", "stat", "-x,", "-e", "instructions,cycles", "-p", str(server.pid)],
                                stderr=subprocess.PIPE, text=True)
        counted_wrk(path, script, token, COUNTED)
        perf.send_signal(signal.SIGINT)
        _, report = perf.communicate(timeout=30)
        counts = {line.split(",")[2]: float(line.split(",")[0]) for line in report.splitlines() if line.count(",") > 2}
        return counts["instructions"] / COUNTED, counts["cycles"] / COUNTED
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)


def counted_by_callgrind(binary, path, script, token):
    """Instructions per request under callgrind (exact for the binary and inputs, whatever else
    the machine does; no cycles). Its counters are zeroed after a warm-up and dumped after
    COUNTED requests, so start-up is not counted. The profile stays in bench/.callgrind/."""
    executable, env = split(binary)
    PROFILES.mkdir(exist_ok=True)
    settings = binary.partition("@")[2]
    name = f"{os.path.basename(executable)}{'@' + settings if settings else ''}-{script or path}"
    name = re.sub(r"[^A-Za-z0-9@=._-]+", "_", name)
    out = PROFILES / f"{name}.out"
    for old in PROFILES.glob(f"{name}.out*"):
        old.unlink()
    args, ready = command(executable)
    server = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *args],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        bench.wait_ready(f"http://127.0.0.1:{bench.PORT}{ready}", seconds=300)
        counted_wrk(path, script, token, COUNTED // 4)  # warm-up: caches, pools, lazy statics
        bench.sh("callgrind_control", "-z", str(server.pid))
        counted_wrk(path, script, token, COUNTED)
        bench.sh("callgrind_control", "-d", str(server.pid))
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=120)
    # The dump after zeroing holds only the counted requests (the file at exit holds the rest).
    dump = max(PROFILES.glob(f"{name}.out.*"), key=lambda p: p.stat().st_mtime)
    totals = re.search(r"^(?:totals|summary): (\d+)", dump.read_text(errors="replace"), re.M)
    dump.rename(out)
    return int(totals.group(1)) / COUNTED, None


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
    for binary, runs in filter(lambda item: item[1], measured.items()):
        user = sum(r[1] for r in runs) / len(runs)
        system = sum(r[2] for r in runs) / len(runs)
        print(f"{binary[-40:]:>40}  mean per request: user {user:.2f} µs, sys {system:.2f} µs")
    by_perf = hardware_counters()
    for binary in binaries if COUNTED else []:
        count = counted_by_perf if by_perf else counted_by_callgrind
        instructions, cycles = count(binary, path, script, token)
        source = "perf stat" if by_perf else "callgrind; no cycles without hardware counters"
        cycles_text = f", {cycles:,.0f} cycles" if cycles else ""
        print(f"{binary[-40:]:>40}  per request over {COUNTED:,}: {instructions:,.0f} instructions{cycles_text} "
              f"({source})", flush=True)


if __name__ == "__main__":
    main()
