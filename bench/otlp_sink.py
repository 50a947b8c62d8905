"""A collector that takes OTLP over HTTP and throws it away, for measuring export's cost.

    python3 bench/otlp_sink.py 4318 &
    python3 bench/ab.py OLD,NEW,NEW@OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 4 / random_user.lua

It counts what it received (spans are not decoded: bytes and exports) and prints it on SIGINT.
"""

import http.server
import signal
import sys

received = {"exports": 0, "bytes": 0}


class Sink(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        self.rfile.read(length)
        received["exports"] += 1
        received["bytes"] += length
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 4318
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Sink)
    signal.signal(signal.SIGINT, lambda *_: (print(received, flush=True), sys.exit(0)))
    server.serve_forever()


if __name__ == "__main__":
    main()
