"""The fleet's overhead (issue 18): the S6 mix through nginx on three instances against one
instance directly, in one run, on the same data, PostgreSQL and Redis. Started by bench/fleet;
writes its section of bench/RESULTS.md.

On 2 cores this measures what the proxy and the extra processes cost, not scale: three
instances and nginx share the cores one instance had. Both set-ups run at once (the idle one
costs nothing) and take turns, three rounds each; the median round of each is reported, with the
CPU time each process used per request.
"""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

from run import replace_section, stop_all, BENCH, ENV, PORT, ROOT, TANDEM, interleaved, prepare_data, sh, wait_ready

SECTION = "## Fleet"
FLEET_PORTS = [PORT + 1, PORT + 2, PORT + 3]
NGINX_PORT = PORT + 10


def cpu_seconds(pid):
    """User and system CPU time a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_cpu(pid):
    """A process's CPU time and its children's (nginx's workers)."""
    total = cpu_seconds(pid)
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    return total + sum(cpu_seconds(int(child)) for child in out)


def start_instance(port, log):
    env = {**ENV, "TANDEM_LISTEN": f"127.0.0.1:{port}", "TANDEM_DRAIN_SECONDS": "0"}
    env.pop("TANDEM_LOG", None)
    return subprocess.Popen([str(TANDEM), "serve"], env=env, stdout=log, stderr=log)


def start_nginx(work, upstreams, port):
    """deploy/nginx.conf listening on `port`, its upstream servers replaced by `upstreams` (the
    first as many as given; the rest of the three removed)."""
    home = work / f"nginx-{port}"
    home.mkdir(exist_ok=True)
    os.chmod(home, 0o777)
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    for i in range(1, 4):
        line = re.search(rf"^\s*server tandem{i}:8080[^;]*;\n", conf, re.M).group(0)
        replaced = line.replace(f"tandem{i}:8080", f"127.0.0.1:{upstreams[i - 1]}") if i <= len(upstreams) else ""
        conf = conf.replace(line, replaced)
    conf = conf.replace("listen 8080;", f"listen 127.0.0.1:{port};")
    conf = conf.replace("/tmp/nginx-tandem", str(home / "nginx-tandem"))
    # One access-log line a request, to a file, as the instances write theirs.
    conf = conf.replace("access_log /dev/stdout tandem;", f"access_log {home / 'access.log'} tandem;")
    path = home / "nginx.conf"
    path.write_text(conf)
    return subprocess.Popen(["nginx", "-c", str(path), "-p", str(home), "-g", "daemon off;"],
                            stdout=subprocess.DEVNULL, stderr=open(home / "error.log", "w"))


def main():
    print(f"data ready ({prepare_data():.1f} s)")
    work = BENCH / ".fleet"
    work.mkdir(exist_ok=True)
    os.chmod(work, 0o777)
    log = open(BENCH / ".fleet.log", "w")
    token = sh(str(TANDEM), "token", "--sub", "fleet-bench", "--role", "admin", "--ttl", "2h").strip()
    single = start_instance(PORT, log)
    fleet = [start_instance(port, log) for port in FLEET_PORTS]
    nginx = start_nginx(work, FLEET_PORTS, NGINX_PORT)
    # The proxy alone: nginx in front of the one instance, to tell its cost from the fleet's.
    proxy = start_nginx(work, [PORT], NGINX_PORT + 1)
    everything = [single, *fleet, nginx, proxy]
    processes = {"one instance": [single], "three instances": fleet, "nginx": [nginx], "proxy": [proxy]}
    try:
        for port in [PORT, *FLEET_PORTS, NGINX_PORT, NGINX_PORT + 1]:
            wait_ready(f"http://127.0.0.1:{port}/health/ready")
        for p in everything:
            if p.poll() is not None:
                raise RuntimeError("a process exited at start (another server on its port?): see bench/.fleet.log")
        runs = {
            "one instance, direct": {"path": "/", "token": token, "script": "mix.lua", "port": PORT},
            "nginx → one instance": {"path": "/", "token": token, "script": "mix.lua", "port": NGINX_PORT + 1},
            "nginx → three instances": {"path": "/", "token": token, "script": "mix.lua", "port": NGINX_PORT},
        }
        cpu_before = {name: sum(tree_cpu(p.pid) for p in ps) for name, ps in processes.items()}
        results = interleaved(runs)
        cpu_after = {name: sum(tree_cpu(p.pid) for p in ps) for name, ps in processes.items()}
    finally:
        stop_all(everything)
        log.close()
    cpu = {name: cpu_after[name] - cpu_before[name] for name in processes}
    write(results, cpu)
    for name, r in results.items():
        print(f"{name}: {r['rps']:,.0f} req/s, p99 {r['p99']:.2f} ms, errors {r['errors']}")
    return 0


def write(results, cpu):
    one, proxied, many = (results[n] for n in ("one instance, direct", "nginx → one instance",
                                                "nginx → three instances"))
    # Requests each set-up served across its three rounds, to put CPU time per request. The one
    # instance served both its direct runs and the proxied ones.
    rounds = 3
    duration = float(re.sub(r"[^0-9.]", "", os.environ.get("BENCH_DURATION", "10s")))
    served = {name: r["rps"] * duration * rounds for name, r in results.items()}
    per = lambda seconds, count: seconds / count * 1e6
    lines = [
        SECTION,
        "",
        f"`bench/fleet` on {time.strftime('%Y-%m-%d %H:%M')}: the S6 mix (80% reads by id, 15% customer pages, "
        "5% keyed POSTs), 64 connections, release build on PostgreSQL and Redis at the default log level, three "
        "rounds each taking turns (median shown). nginx is `deploy/nginx.conf` (two workers, upstream keepalive, "
        "its JSON access log to a file), in front of three instances and, to tell the proxy's cost from the "
        "fleet's, in front of the one instance. On 2 cores this is overhead, not scale: the processes share the "
        "two cores the one instance had.",
        "",
        "| set-up | req/s | p50 ms | p99 ms | errors | ÷ one instance |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, r in results.items():
        lines.append(f"| {name} | {r['rps']:,.0f} | {r['p50']:.2f} | {r['p99']:.2f} | {r['errors']} | "
                     f"{r['rps'] / one['rps']:.2f} |")
    single_served = served["one instance, direct"] + served["nginx → one instance"]
    lines += [
        "",
        f"Through nginx on three instances: {many['rps'] / one['rps']:.2f} × one instance's throughput "
        f"(nginx alone in front of one instance: {proxied['rps'] / one['rps']:.2f} ×).",
        "",
        "Where the time goes (CPU time over all rounds, per request each process served):",
        "",
        "| process | CPU µs per request |",
        "|---|---:|",
        f"| the one instance (direct and behind nginx) | {per(cpu['one instance'], single_served):.0f} |",
        f"| the three instances (behind nginx), together | {per(cpu['three instances'], served['nginx → three instances']):.0f} |",
        f"| nginx in front of the three | {per(cpu['nginx'], served['nginx → three instances']):.0f} |",
        f"| nginx in front of the one | {per(cpu['proxy'], served['nginx → one instance']):.0f} |",
        "",
    ]
    replace_section(SECTION, lines)


if __name__ == "__main__":
    sys.exit(main())
