"""Schemathesis hooks for Tandem's conformance run (tests/conformance/run).

A list's `cursor` is opaque: only a `nextCursor` the service issued is valid, and the document
cannot describe which strings those are. A positive case with a generated cursor would be
refused (400) by design, so positive cases are sent without one. Negative cases keep theirs:
a malformed cursor must still be refused. The service's own tests walk real cursors.

In the stateful phase each POST carries a key of its own. A generated key repeats, and a repeat
with the same body is a retry, answered with the kept 201 even when that user has been deleted
since (CONTRACT §7); the "created resource not found" check would take that Location's 404 for a
lost resource. The other phases keep the generated keys, replays and reuse included.
"""

import uuid

import schemathesis
from schemathesis.generation import GenerationMode
from schemathesis.generation.meta import TestPhase


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    meta = case.meta
    positive = meta is None or meta.generation.mode == GenerationMode.POSITIVE
    if positive and case.query and "cursor" in case.query:
        del case.query["cursor"]
    stateful = meta is not None and meta.phase.name == TestPhase.STATEFUL
    if stateful and case.headers and "Idempotency-Key" in case.headers:
        case.headers["Idempotency-Key"] = f"stateful-{uuid.uuid4()}"
