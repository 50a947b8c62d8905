"""Schemathesis hooks for Tandem's conformance run (tests/conformance/run).

A list's `cursor` is opaque: only a `nextCursor` the service issued is valid, and the document
cannot describe which strings those are. A positive case with a generated cursor would be
refused (400) by design, so positive cases are sent without one. Negative cases keep theirs:
a malformed cursor must still be refused. The service's own tests walk real cursors.
"""

import schemathesis
from schemathesis.generation import GenerationMode


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    meta = case.meta
    positive = meta is None or meta.generation.mode == GenerationMode.POSITIVE
    if positive and case.query and "cursor" in case.query:
        del case.query["cursor"]
