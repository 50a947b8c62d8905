"""Tandem against one peer on S1, S2 and S5, taking turns: a quicker reading than `bench/run`,
which measures every peer once after Tandem's whole run.

    python3 bench/peer_ab.py [axum|fastify|fastify-cluster|fastapi] [ROUNDS]

Both servers run at once on the data `bench/run` seeds (or `BENCH_USERS` and `BENCH_CUSTOMERS`,
as seeded); wrk (2 threads, 64 connections, `BENCH_DURATION` each) goes to each in turn, and
the median run of each is compared. Tandem runs at its default log level, to a file.
"""

import signal
import subprocess
import sys

import run as bench

PEERS = {
    "axum": (["bench/peers/axum/target/release/tandem-peer-axum"], ".", 18484),
    "fastify": (["node", "server.js"], "bench/peers/fastify", 18383),
    "fastify-cluster": (["node", "cluster.js"], "bench/peers/fastify", 18384),
}


def main():
    name = sys.argv[1] if len(sys.argv) > 1 else "axum"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    bench.install_peers()
    token = bench.sh(str(bench.TANDEM), "token", "--sub", "bench", "--role", "admin", "--ttl", "2h").strip()
    command, cwd, port = PEERS[name]
    log = open(bench.BENCH / ".bench.log", "w")
    tandem = subprocess.Popen([str(bench.TANDEM), "serve"], env=bench.ENV, stdout=log, stderr=log)
    peer = subprocess.Popen(command, cwd=bench.ROOT / cwd, env=bench.peer_env(port), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        bench.wait_ready(f"http://127.0.0.1:{bench.PORT}/health/ready")
        bench.wait_for_peer(name, port, token)
        for scenario, (path, script) in bench.PEER_SCENARIOS.items():
            runs = {
                "tandem": {"path": path, "token": token, "script": script},
                name: {"path": path, "token": token, "script": script, "port": port},
            }
            measured = bench.interleaved(runs, rounds)
            ours, theirs = measured["tandem"]["rps"], measured[name]["rps"]
            errors = measured["tandem"]["errors"] + measured[name]["errors"]
            print(f"{scenario}: Tandem {ours:,.0f} req/s, {name} {theirs:,.0f} req/s, "
                  f"ratio {ours / theirs:.2f}, errors {errors}", flush=True)
    finally:
        for process in (tandem, peer):
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
        log.close()


if __name__ == "__main__":
    main()
