"""Where a Tandem server's resident memory is: after start, then after each scenario in turn.

    python3 bench/memory.py [BINARY[@SETTING=VALUE;...]] [SECONDS]

Each line gives the peak RSS so far (VmHWM), then what is resident at that moment: anonymous
memory and mapped files. After the last scenario, the resident size of each mapping, largest
first: the binary's own pages are its code, mapped in from the page cache as it runs.
Needs the data `bench/run` seeds.
"""

import collections
import signal
import subprocess
import sys

import ab
import run as bench

SCENARIOS = [
    ("S0 /health/live", "/health/live", None),
    ("S1 user by id", "/", "random_user.lua"),
    ("S2 customers page 0", "/api/v2/customers?size=20", None),
    ("S2 on v1", "/api/customers?size=20", None),
    ("S5 keyed POST", "/", "keyed_post.lua"),
    ("S6 mix", "/", "mix.lua"),
]


def mappings(pid):
    """Resident kB by mapped file (or [anon], [stack], ...), from /proc/<pid>/smaps."""
    resident, name = collections.Counter(), None
    for line in open(f"/proc/{pid}/smaps"):
        fields = line.split()
        if "-" in fields[0] and not fields[0].endswith(":"):
            name = fields[5] if len(fields) > 5 else "[anon]"
        elif fields[0] == "Rss:":
            resident[name] += int(fields[1])
    return resident


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else str(bench.TANDEM)
    seconds = sys.argv[2] if len(sys.argv) > 2 else "5"
    executable, env = ab.split(binary)
    token = bench.sh(str(bench.TANDEM), "token", "--sub", "bench", "--role", "admin", "--ttl", "2h").strip()
    log = open(bench.BENCH / ".memory.log", "w")
    server = subprocess.Popen([executable, "serve"], env=env, stdout=log, stderr=log)

    def show(phase):
        m = bench.memory_mb(server.pid)
        print(f"{phase:22} peak {m['VmHWM']:5.1f} MB   now: anonymous {m['RssAnon']:5.1f} MB, "
              f"mapped files {m['RssFile']:5.1f} MB", flush=True)

    try:
        bench.wait_ready(f"http://127.0.0.1:{bench.PORT}/health/ready")
        show("started")
        for name, path, script in SCENARIOS:
            bench.wrk(path, token, script, duration=f"{seconds}s")
            show(f"after {name}")
        for name, kb in mappings(server.pid).most_common(8):
            print(f"{kb / 1024:6.1f} MB  {name}")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        log.close()


if __name__ == "__main__":
    main()
