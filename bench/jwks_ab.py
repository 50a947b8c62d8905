"""S1 with an RS256 token from an identity provider's key set against S1 with an HS256 secret:
the CPU each request costs the server, taking turns (as bench/ab.py does).

    python3 bench/jwks_ab.py [ROUNDS] [SECONDS]

Serves tests/fixtures' `rsa-1` public key as a JWK Set on a local port, mints an RS256 token with
its private key (kid rsa-1) and an HS256 one with `tandem token`, and runs the same release binary
both ways on S1 (GET /api/v2/users/<random id>). Tokens are verified once and then cached, so the
two should cost the same per request. Needs what bench/ab.py needs (wrk, the data `bench/run`
seeds), and Python's `cryptography`.
"""

import base64
import http.server
import json
import sys
import threading
import time

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

import ab
import run as bench

FIXTURES = bench.ROOT / "tests/fixtures"


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def rs256_token(sub, roles, ttl=7200):
    key = serialization.load_pem_private_key((FIXTURES / "rsa_private.pem").read_bytes(), None)
    header = b64(json.dumps({"alg": "RS256", "typ": "JWT", "kid": "rsa-1"}).encode())
    claims = b64(json.dumps({"sub": sub, "roles": roles, "exp": int(time.time()) + ttl}).encode())
    signature = key.sign(f"{header}.{claims}".encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{header}.{claims}.{b64(signature)}"


def serve_key_set():
    """The fixture key as a JWK Set, on a free port; its URL."""
    key_set = json.dumps({"keys": [json.loads((FIXTURES / "jwks_keys.json").read_text())["rsa-1"]]}).encode()

    class KeySet(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "application/jwk-set+json")
            self.send_header("Content-Length", str(len(key_set)))
            self.end_headers()
            self.wfile.write(key_set)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), KeySet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/jwks"


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    url = serve_key_set()
    binary = str(bench.TANDEM)
    arms = {
        "HS256 secret": (binary, bench.sh(binary, "token", "--sub", "bench", "--role", "admin", "--ttl", "2h").strip()),
        "RS256 from the key set": (
            f"{binary}@TANDEM_JWT_SECRET=;TANDEM_JWT_JWKS_URL={url}",
            rs256_token("bench", ["admin"]),
        ),
    }
    measured = {name: [] for name in arms}
    for _ in range(rounds):
        for name, (spec, token) in arms.items():
            rps, user, system, peak = ab.measure(spec, "/", "random_user.lua", seconds, token)
            measured[name].append((rps, user, system))
            print(f"{name:>24}  {rps:9,.0f} req/s  user {user:5.2f} µs  sys {system:5.2f} µs  peak RSS {peak:.1f} MB",
                  flush=True)
    means = {}
    for name, runs in measured.items():
        means[name] = sum(r[1] + r[2] for r in runs) / len(runs)
        print(f"{name:>24}  mean CPU per request: {means[name]:.2f} µs")
    ratio = means["RS256 from the key set"] / means["HS256 secret"]
    print(f"RS256 from the key set ÷ HS256: {ratio:.3f} (target ≤ 1.05)")


if __name__ == "__main__":
    main()
