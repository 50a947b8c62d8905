"""A real SMTP server on loopback for the e-mail notices suite (the book's clients/email.md).

aiosmtpd speaks SMTP; each message it accepts is parsed as a mail reader would (Python's
`email` package, the default policy: MIME, RFC 2047 headers decoded) and written as one JSON
line to stdout: the envelope, every header, and each part's type and text. Recipients steer
the replies: `busy-N-…@` is answered 451 for its first N attempts, `gone…@` 550.

Usage: server.py  (prints `port <n>` first, then one JSON line per message accepted)
"""

import asyncio
import email
import email.policy
import json
import sys
from collections import Counter

from aiosmtpd.smtp import SMTP


class Handler:
    def __init__(self):
        self.tries = Counter()

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        local = address.split("@", 1)[0]
        if local.startswith("gone"):
            return "550 5.1.1 No such mailbox"
        if local.startswith("busy-"):
            self.tries[address] += 1
            if self.tries[address] <= int(local.split("-")[1]):
                return "451 4.3.0 Try again later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        message = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        parts = []
        for part in message.walk():
            if part.is_multipart():
                parts.append({"type": part.get_content_type(), "multipart": True})
            else:
                parts.append({"type": part.get_content_type(), "charset": part.get_content_charset(),
                              "text": part.get_content()})
        line = {
            "from": envelope.mail_from,
            "to": envelope.rcpt_tos,
            "headers": [[name, str(value)] for name, value in message.items()],
            "raw_headers": envelope.original_content.split(b"\r\n\r\n", 1)[0].decode("ascii", "replace"),
            "parts": parts,
        }
        print(json.dumps(line), flush=True)
        return "250 2.0.0 Queued"


async def serve():
    handler = Handler()
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: SMTP(handler, hostname="tandem-test-relay"), "127.0.0.1", 0)
    print(f"port {server.sockets[0].getsockname()[1]}", flush=True)
    # Runs until the test closes its end of stdin.
    await loop.run_in_executor(None, sys.stdin.read)
    server.close()


if __name__ == "__main__":
    asyncio.run(serve())
