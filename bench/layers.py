"""Instructions per request by layer, from a callgrind profile that bench/ab.py kept.

    python3 bench/layers.py bench/.callgrind/tandem-random_user.lua.out [REQUESTS]

Each instruction goes to the layer of the source file it came from (LAYERS below, matched
against the file's module path: `src/http/boundary.rs` is `tandem::http::boundary`, a crate's
file is under its crate's name), so code that fat LTO inlined into another layer's function is
still counted where it was written; the release profile keeps line tables for this. Without a
file, the function's name decides. Instructions of no layer (std, core, serde, the allocator,
memcpy) are shared out among their callers in proportion to what each call cost, up to code
that has a layer. Callgrind counts instructions in user space only: system calls (reads,
writes, epoll) are CPU time that `bench/ab.py` shows as `sys`, not instructions.
"""

import re
import sys
from collections import defaultdict

# First match wins; matched against the path a function's name starts with.
LAYERS = [
    ("access log (tracing)", r"tracing|tracing_core|tracing_subscriber|tracing_serde|tandem::telemetry::(json_lines|batched)"),
    ("traces (export off)", r"tandem::telemetry|opentelemetry"),
    ("boundary", r"tandem::http|tandem::wire::(context|error|body_limit)"),
    ("dispatch", r"tandem::(dispatch|changes|lifecycle|versions)"),
    ("token", r"tandem::auth|jsonwebtoken"),
    ("store client", r"tandem::store|tokio_postgres|postgres_protocol|postgres_types|sqlx|tandem::core::storage"),
    ("metrics", r"tandem::ops::metrics|prometheus"),
    ("activity and usage", r"tandem::ops"),
    ("handler and serde", r"tandem"),
    ("poem (router, endpoint wrappers)", r"poem_openapi|poem::(route|endpoint|middleware|web|request|response|error)"),
    ("listener and hyper", r"hyper|hyper_util|httparse|http::|h2|poem::server|poem::listener|mio|tokio::net|tokio::io"),
    ("runtime (tokio)", r"tokio"),
]
ALLOCATOR = re.compile(r"^_?mi_|^mi_")


def module_of(file):
    """`…/src/http/boundary.rs` → `tandem::http::boundary`; `…/tokio-1.48.0/src/net/x.rs` → `tokio::net::x`."""
    crate = re.search(r"/([a-z0-9_-]+)-\d+\.\d+\.\d+[^/]*/src/(.*)\.rs$", file)
    if crate:
        name, inner = crate.group(1).replace("-", "_"), crate.group(2)
    elif "/library/" in file or file.startswith("/rustc/"):
        return None
    else:
        local = re.search(r"(?:^|/)src/(.*)\.rs$", file)
        if not local:
            return None
        name, inner = "tandem", local.group(1)
    parts = [part for part in inner.split("/") if part not in ("mod", "lib", "main")]
    return "::".join([name, *parts])


def subject(name):
    """The path a demangled name is about: `<&mut a::B<T> as c::D>::f` is about `a::B`."""
    name = name.lstrip("<&").removeprefix("mut ").removeprefix("dyn ")
    return name


def layer_of(name, file=None):
    """The layer of the file the instructions came from, else of the function they ran in."""
    for path in ((module_of(file) if file else None), subject(name)):
        for layer, pattern in LAYERS:
            if path and re.match(rf"(?:{pattern})(?:::|\b)", path):
                return layer
    return None


def parse(path):
    """Self cost of each function and the inclusive cost of each caller → callee edge."""
    names, files, self_cost, edges = {}, {}, defaultdict(int), defaultdict(int)

    def expand(table, spec):
        """Callgrind's name compression: `(12) name` defines 12, a later `(12)` means it."""
        match = re.match(r"\((\d+)\)(?: (.*))?", spec)
        if not match:
            return spec
        if match.group(2) is not None:
            table[match.group(1)] = match.group(2)
        return table[match.group(1)]

    def name_of(spec):
        return expand(names, spec)

    def file_of(spec):
        return expand(files, spec)

    current, callee, in_call, function_file, file = None, None, False, None, None
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("fl="):
            function_file = file = file_of(line[3:])
        elif line.startswith(("fi=", "fe=")):
            file = file_of(line[3:])
        elif line.startswith(("cfi=", "cfl=")):
            file_of(line[4:])  # the callee's file: only its name is recorded here
        elif line.startswith("fn="):
            current, in_call, file = name_of(line[3:]), False, function_file
        elif line.startswith("cfn="):
            callee = name_of(line[4:])
        elif line.startswith("calls="):
            in_call = True
        elif line[:1].isdigit() or line[:1] in "+-*":
            fields = line.split()
            cost = int(fields[1]) if len(fields) > 1 else 0
            if in_call:
                edges[((current, file), callee)] += cost
                in_call = False
            elif current is not None:
                self_cost[(current, file)] += cost
    return self_cost, edges


def account(path):
    self_cost, edges = parse(path)
    callers = defaultdict(list)
    for (site, callee), cost in edges.items():
        if site[0] != callee:
            callers[callee].append((site, cost))
    shares = {}

    def share(code, seen=()):
        """How the cost of `code` (a function and the file of its instructions) divides among
        layers: its file's layer, else its function's, else its callers' mix."""
        if code in shares:
            return shares[code]
        function, file = code
        layer = layer_of(function, file)
        if layer:
            result = {layer: 1.0}
        else:
            result = defaultdict(float)
            incoming = [(c, w) for c, w in callers[function] if c[0] not in seen and w > 0]
            total = sum(w for _, w in incoming)
            for caller, weight in incoming:
                for name, part in share(caller, seen + (function,)).items():
                    result[name] += part * weight / total
            if not total:
                result = {"runtime (tokio)": 1.0}
        if not seen:
            shares[code] = result
        return result

    by_layer = defaultdict(float)
    for code, cost in self_cost.items():
        for layer, part in share(code).items():
            by_layer[layer] += cost * part
    allocator = sum(cost for (function, _), cost in self_cost.items() if ALLOCATOR.match(function))
    return by_layer, sum(self_cost.values()), allocator


def main():
    path = sys.argv[1]
    requests = int(sys.argv[2]) if len(sys.argv) > 2 else 4000
    by_layer, total, allocator = account(path)
    print("| Layer | instructions per request | share |")
    print("|---|---:|---:|")
    for layer, cost in sorted(by_layer.items(), key=lambda item: -item[1]):
        print(f"| {layer} | {cost / requests:,.0f} | {cost / total:.0%} |")
    print(f"| **total** | **{total / requests:,.0f}** | |")
    print(f"\nOf which the allocator itself (mimalloc, shared out above by its callers): "
          f"{allocator / requests:,.0f} per request.")


if __name__ == "__main__":
    main()
