"""The migration tools at an API's scale: N workbench clients written straight into PostgreSQL,
then the service's answers about them timed.

    python3 bench/scale.py [--clients N] [--fresh] [--verify]                  # the data alone
    python3 bench/scale.py --clients 10000 --binary target/release/tandem [--check] [--sigterm]

The database is `tandem_scale_<N>` (kept; `--fresh` drops and writes it again). Without a marker
row in `bench_scale_info` (an earlier run stopped half way) it is always written afresh. The
schema comes from `BINARY migrate` with `--binary`, else from psql applying
migrations/postgres/*.sql in name order, recorded in `_sqlx_migrations` as sqlx 0.8 records them,
so a later `--binary` run reuses the data (unless a migration file changed since: then --fresh).

The rows are drawn inside PostgreSQL (bench/scale/generate.sql, `INSERT … SELECT` from
generate_series, every draw a hash of the client's number: the same N writes the same clients,
counts and days on every run, dated back from the run's instant, the last day of data today, UTC),
with the spread set by the constants below; 1,000,000 clients take about 5 minutes on 2 cores.
`--verify` then runs bench/scale/check.sql, which recomputes every derived table from the rows it
derives from (allow a few minutes at 1,000,000).

With `--binary`, the server runs on that database (port 18090, log in bench/.scale.log), and each
read below is timed several times (median and max), with the server's resident memory after each
admin read and its CPU while idle, then /admin/dashboard is opened in headless Chromium (if
installed; /usr/bin/chromium) and timed from the log-in until the verdict and the first page of
clients are drawn; the table ends with a markdown section for bench/RESULTS.md.
`--check` exits 1 when a bound is missed (CI runs it at 10,000 clients). `--sigterm` then loads
v1 from 100,000 clients of tenant `load` with wrk (bench/wrk/tokens.lua), stops the server with
SIGTERM a second after the load, and compares what /metrics counted with what reached the tables.

Every client also uses two elements of v2 deprecated inside the version (the book's operators/elements.md; the server is started with them declared): `page` on GET /api/v2/users on each of its
active days, and a share of them `/age` on POST /api/v2/users; their readiness, the operators'
list and `sunset-check --deprecation` are timed with the version's.
"""

import argparse
import base64
import hashlib
import hmac
import http.client
import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
SQL = BENCH / "scale"
MIGRATIONS = ROOT / "migrations/postgres"
PG = ["psql", "-h", "127.0.0.1", "-p", "5432", "-U", "postgres", "-X", "-v", "ON_ERROR_STOP=1"]
# Every generator session: UTC days, memory for the sorts and index builds, no wait on each commit.
PG_OPTIONS = "-c timezone=UTC -c work_mem=1GB -c maintenance_work_mem=1GB -c synchronous_commit=off"

# The spread of the clients (bench/scale/generate.sql reads each as a psql variable).
TENANTS = 20                 # tenant-00 … tenant-19
TENANT_SKEW = 2.0            # client i of N is in tenant floor(20 (i/N)^2): tenant-00 22%, -01 9%, … -19 2.5%
EVERY_DAY = 0.03             # active on every one of the 90 days
ON_V2 = 0.30                 # also call v2
REHEARSED = 0.20             # rehearsed the sunset at least once …
REHEARSED_V2 = 0.50          # … half the v2 clients, the rest among v1-only ones
STALE = 0.10                 # not seen for over 30 days …
STALE_V2 = 0.25              # … more often a client that moved to v2
LAST_WEEK = 0.85             # of the others: last seen within the week (else 7 to 30 days ago)
DAYS_MIN, DAYS_MAX = 3, 8    # active days of a client that is not active every day
ONE_ROUTE, TWO_ROUTES = 0.10, 0.20   # operations called: 1, 2, else 3
SECOND_ROUTE = 0.5           # an active day calls a second operation
BODY_MIN, BODY_MAX = 2, 60   # requests per operation and active day: log-uniform for most …
TAIL, TAIL_MIN, TAIL_MAX = 0.04, 50, 30_000      # … a far tail for a few
EVERY_DAY_BOOST = 2          # every-day clients call more each day
OLDER = 0.5                  # called v1 before the 90 days of usage too
REFUSED = 0.02               # met a brownout (1 to 50 refusals)
EXPOSED = 0.82               # met changes, of the clients whose operations can meet one
TWO_EXPOSURES = 0.35         # met two changes rather than one
TWO_DETAILS = 0.4            # a change met through two details rather than one
DRY_RUN = 0.10               # tried dry runs (on v1; half of them on v2 too)
DRY_RUN_V2 = 0.5
AGE_INPUT = 0.4             # of the clients (all of whom send `page`), those that send `/age` too

# The timed service.
PORT = 18090
BASE = f"http://127.0.0.1:{PORT}"
SECRET = "scale-bench-secret-scale-bench-secret-40"   # 40 bytes
REPEATS = 5
PAGES = 5                    # pages followed through nextCursor after the first
DASHBOARD_LOADS = 3          # /admin/dashboard page loads in Chromium
DASHBOARD_WAIT_S = 60        # a load not drawn by then fails (the bound is DASHBOARD_MS)
LOAD_CLIENTS, LOAD_SECONDS, LOAD_TENANT = 100_000, 20, "load"
# The bounds: milliseconds, MB, % of one core.
GUIDE_MS, PAGE_MS, READINESS_MS, SUNSET_CHECK_MS, DASHBOARD_MS = 50, 1000, 2000, 5000, 3000
VERDICT_MS = 1000            # the dashboard's verdict, from the log-in (the book's operators/dashboard.md)
DEPRECATIONS_MS, CSV_LINES_PER_S = 1000, 50_000
CSV_RATE_FROM = 1_000_000     # lines: below, the CSV's rate is reported, not bound
# The two elements of v2 the generator's clients use (bench/scale/generate.sql, step elements).
ELEMENTS = ("offset-paging", "age-input")
RSS_MB, IDLE_CPU = 80, 1.0
TICKS = os.sysconf("SC_CLK_TCK")


def knobs():
    """The psql variables generate.sql draws from: the knobs, with the conditional shares that
    give the overall ones (rehearsed and stale among v1-only clients)."""
    rehearsed_v1_only = (REHEARSED - ON_V2 * REHEARSED_V2) / (1 - ON_V2)
    stale_v1_only = (STALE / (1 - EVERY_DAY) - ON_V2 * STALE_V2) / (1 - ON_V2)
    return {
        "tenants": TENANTS, "tenant_skew": TENANT_SKEW, "every_day": EVERY_DAY, "on_v2": ON_V2,
        "rehearsed_v2": REHEARSED_V2, "rehearsed_v1_only": round(rehearsed_v1_only, 6), "stale_v2": STALE_V2,
        "stale_v1_only": round(stale_v1_only, 6), "last_week": LAST_WEEK, "days_min": DAYS_MIN, "days_max": DAYS_MAX,
        "one_route": ONE_ROUTE, "two_routes": TWO_ROUTES, "second_route": SECOND_ROUTE, "body_min": BODY_MIN,
        "body_max": BODY_MAX, "tail": TAIL, "tail_min": TAIL_MIN, "tail_max": TAIL_MAX,
        "every_day_boost": EVERY_DAY_BOOST, "older": OLDER, "refused": REFUSED, "exposed": EXPOSED,
        "two_exposures": TWO_EXPOSURES, "two_details": TWO_DETAILS, "dry_run": DRY_RUN, "dry_run_v2": DRY_RUN_V2,
        "age_input": AGE_INPUT,
    }


# --- PostgreSQL ---------------------------------------------------------------------------------

def psql(sql, db="postgres"):
    out = subprocess.run(PG + ["-d", db, "-Atq", "-c", sql], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"psql failed on {db}:\n{out.stderr.strip()}")
    return out.stdout.strip()


def psql_script(sql, db, variables):
    """Runs `sql` from stdin (so psql fills in :variables) in one session of the generator's
    settings; its output, and the NOTICEs it raised (lines of stderr)."""
    args = PG + ["-d", db, "-Atq"] + [f"-v{name}={value}" for name, value in variables.items()]
    out = subprocess.run(args, input=sql, capture_output=True, text=True,
                         env={**os.environ, "PGOPTIONS": PG_OPTIONS})
    if out.returncode != 0:
        raise SystemExit(f"psql failed:\n{out.stderr.strip()}")
    notices = [line.split("NOTICE:", 1)[1].strip() for line in out.stderr.splitlines() if "NOTICE:" in line]
    return out.stdout.strip(), notices


def sections(path, marker):
    """The parts of an SQL file, each headed by a `-- <marker>: name` line, as (name, sql)."""
    parts = re.split(rf"^-- {marker}: (.*)$", path.read_text(), flags=re.M)
    return [(parts[i].strip(), parts[i + 1]) for i in range(1, len(parts), 2)]


def database(n):
    return f"tandem_scale_{n}"


def database_url(n):
    return f"postgres://postgres@127.0.0.1:5432/{database(n)}"


def filled(db):
    """The marker the generator writes last: its row, or None (no database, or a run stopped)."""
    if not psql(f"SELECT 1 FROM pg_database WHERE datname = '{db}'"):
        return None
    if psql("SELECT to_regclass('bench_scale_info') IS NOT NULL", db) != "t":
        return None
    row = psql("SELECT n, generated_at, seconds FROM bench_scale_info", db)
    return row.split("|") if row else None


def create_database(db):
    psql(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
    psql(f"CREATE DATABASE {db}")


def migrate_with_binary(binary, n):
    out = subprocess.run([binary, "migrate"], env=server_env(n), capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{binary} migrate failed (a migration changed since the data was written? "
                         f"then --fresh):\n{out.stderr.strip()}")


def migrate_with_psql(db):
    """Applies each migration file sqlx has not recorded, in name order, each in one transaction
    (`-1`: 0005 locks a table), and records it in `_sqlx_migrations` as sqlx 0.8 does: the version
    and description from the file name, the SHA-384 of its text, success."""
    psql("CREATE TABLE IF NOT EXISTS _sqlx_migrations (version BIGINT PRIMARY KEY, description TEXT NOT NULL, "
         "installed_on TIMESTAMPTZ NOT NULL DEFAULT now(), success BOOLEAN NOT NULL, checksum BYTEA NOT NULL, "
         "execution_time BIGINT NOT NULL)", db)
    applied = dict(line.split("|") for line in psql(
        "SELECT version, encode(checksum, 'hex') FROM _sqlx_migrations WHERE success", db).splitlines())
    for path in sorted(MIGRATIONS.glob("*.sql")):
        number, description = path.name.split("_", 1)
        version, description = int(number), description.removesuffix(".sql").replace("_", " ")
        checksum = hashlib.sha384(path.read_text().encode()).hexdigest()
        if str(version) in applied:
            if applied[str(version)] != checksum:
                raise SystemExit(f"{path.name} changed since {db} was migrated: rerun with --fresh")
            continue
        started = time.perf_counter_ns()
        record = (f"INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) "
                  f"VALUES ({version}, '{description.replace(chr(39), chr(39) * 2)}', true, '\\x{checksum}', -1)")
        out = subprocess.run(PG + ["-d", db, "-q", "-1", "-f", str(path), "-c", record], capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"{path.name} failed:\n{out.stderr.strip()}")
        psql(f"UPDATE _sqlx_migrations SET execution_time = {time.perf_counter_ns() - started} "
             f"WHERE version = {version}", db)


def generate(n, db):
    """Writes the rows, step by step (bench/scale/generate.sql), printing each step's time."""
    now = datetime.now(timezone.utc)
    variables = {"n": n, "now": now.isoformat(), "today": now.date().isoformat(), **knobs()}
    started = time.time()
    for name, sql in sections(SQL / "generate.sql", "step"):
        step = time.time()
        _, notices = psql_script(sql, db, variables)
        print(f"  {name:18} {time.time() - step:7.1f} s", flush=True)
        for notice in notices:
            if notice.startswith("built "):
                print(f"    {notice}")
    seconds = time.time() - started
    psql("CREATE TABLE bench_scale_info (n INTEGER NOT NULL, generated_at TIMESTAMPTZ NOT NULL, "
         "seconds FLOAT8 NOT NULL)", db)
    psql(f"INSERT INTO bench_scale_info VALUES ({n}, '{now.isoformat()}', {seconds:.1f})", db)
    return seconds


def prepare(n, fresh, binary):
    """The database of N clients, written unless an earlier run finished it; the seconds writing took."""
    db = database(n)
    marker = None if fresh else filled(db)
    if marker:
        print(f"{db}: {int(marker[0]):,} clients written {marker[1]} ({float(marker[2]):.0f} s), reused")
        if binary:
            migrate_with_binary(binary, n)
        return None
    print(f"{db}: writing {n:,} clients", flush=True)
    started = time.time()
    create_database(db)
    if binary:
        migrate_with_binary(binary, n)
    else:
        migrate_with_psql(db)
    print(f"  {'schema':18} {time.time() - started:7.1f} s", flush=True)
    generate(n, db)
    return time.time() - started


VERSION_TABLES = ["client_versions", "client_routes", "client_exposures", "client_exposure_details",
                  "client_dry_runs", "usage_daily", "client_usage", "usage_days"]
# Keyed by element, not version (the --sigterm load uses none).
ELEMENT_TABLES = ["element_usage", "element_clients", "element_days", "element_windows"]
TABLES = VERSION_TABLES + ELEMENT_TABLES


def row_counts(db):
    return {t: int(psql(f"SELECT count(*) FROM {t}", db)) for t in TABLES}


def sample_client(db):
    """A client with several operations and exposures, the same for the same N on every run."""
    row = psql("SELECT e.tenant, e.subject FROM client_exposures AS e "
               "JOIN client_versions AS c ON (c.version, c.tenant, c.subject) = (1, e.tenant, e.subject) "
               "WHERE e.version = 1 AND (SELECT count(*) FROM client_routes AS r WHERE "
               "(r.version, r.tenant, r.subject) = (1, e.tenant, e.subject)) >= 3 "
               "ORDER BY e.subject LIMIT 1", db)
    tenant, subject = row.split("|")
    return tenant, subject


def spread(db):
    """The spread the rows came out with, one fact a line (statuses as the README defines them)."""
    today = "(now() AT TIME ZONE 'UTC')::date"

    def share(where):
        return f"round(100.0 * count(*) FILTER (WHERE {where}) / count(*), 1)"

    facts = psql(f"""
        WITH v1 AS (SELECT c.*, u.last_day, d.days, r.operations, y.dry
                    FROM client_versions AS c
                    LEFT JOIN client_usage AS u USING (version, tenant, subject)
                    LEFT JOIN (SELECT tenant, subject, count(*) AS days FROM (SELECT DISTINCT tenant, subject, day
                               FROM usage_daily WHERE version = 1) AS x GROUP BY tenant, subject) AS d USING (tenant, subject)
                    LEFT JOIN (SELECT tenant, subject, count(*) AS operations FROM client_routes WHERE version = 1
                               GROUP BY tenant, subject) AS r USING (tenant, subject)
                    LEFT JOIN (SELECT DISTINCT tenant, subject, true AS dry FROM client_dry_runs) AS y USING (tenant, subject)
                    WHERE c.version = 1)
        SELECT json_build_object(
            'clients', count(*),
            'on v2 %', {share("last_successor IS NOT NULL")},
            'rehearsed %', {share("rehearsals > 0")},
            'brownout refusals %', {share("refusals > 0")},
            'with exposures %', {share("changes_met > 0")},
            'with dry runs %', {share("dry")},
            'every day %', {share("days = 90")},
            'last day in the week %', {share(f"last_day > {today} - 7")},
            'unseen over 30 days %', {share(f"last_day < {today} - 30")},
            'active days (others) avg', round(avg(days) FILTER (WHERE days < 90), 1),
            'usage rows per client', round((SELECT count(*) FROM usage_daily WHERE version = 1)::numeric / count(*), 1),
            'operations per client', round(avg(operations), 2),
            'requests p50/p90/p99/max', concat_ws(' / ', percentile_disc(0.5) WITHIN GROUP (ORDER BY requests),
                                                  percentile_disc(0.9) WITHIN GROUP (ORDER BY requests),
                                                  percentile_disc(0.99) WITHIN GROUP (ORDER BY requests), max(requests)),
            'done / ready / in-progress / not-started', concat_ws(' / ',
                count(*) FILTER (WHERE last_successor IS NOT NULL AND last_request < now() - interval '7 days'),
                count(*) FILTER (WHERE last_successor IS NOT NULL AND last_request >= now() - interval '7 days'
                                 AND last_rehearsal IS NOT NULL),
                count(*) FILTER (WHERE last_successor IS NOT NULL AND last_request >= now() - interval '7 days'
                                 AND last_rehearsal IS NULL),
                count(*) FILTER (WHERE last_successor IS NULL)),
            'largest tenants', (SELECT string_agg(tenant || ' ' || n, ', ') FROM (SELECT tenant, count(*) AS n FROM v1
                                GROUP BY tenant ORDER BY n DESC LIMIT 3) AS t),
            'smallest tenant', (SELECT tenant || ' ' || count(*) FROM v1 GROUP BY tenant ORDER BY count(*) LIMIT 1))
        FROM v1
    """, db)
    return json.loads(facts)


def verify(db):
    """Runs bench/scale/check.sql: each check counts the rows that break it. True when all pass."""
    moment = datetime.fromisoformat(psql("SELECT to_char(generated_at AT TIME ZONE 'UTC', "
                                         "'YYYY-MM-DD\"T\"HH24:MI:SS.US+00:00') FROM bench_scale_info", db))
    variables = {"now": moment.isoformat(), "today": moment.date().isoformat()}
    passed = True
    for name, sql in sections(SQL / "check.sql", "check"):
        started = time.time()
        broken = int(psql_script(sql, db, variables)[0].split()[-1])
        passed &= broken == 0
        print(f"  {'ok' if broken == 0 else f'FAILED ({broken:,} rows)':>18}  {name} ({time.time() - started:.1f} s)",
              flush=True)
    return passed


# --- The service --------------------------------------------------------------------------------

def server_env(n):
    now = datetime.now(timezone.utc).replace(microsecond=0)
    return {
        **os.environ,
        "TANDEM_DATABASE_URL": database_url(n),
        "TANDEM_LISTEN": f"127.0.0.1:{PORT}",
        "TANDEM_JWT_SECRET": SECRET,
        "TANDEM_V1_DEPRECATED_AT": (now - timedelta(days=90)).isoformat().replace("+00:00", "Z"),
        "TANDEM_V1_SUNSET_AT": (now + timedelta(days=60)).isoformat().replace("+00:00", "Z"),
        "TANDEM_V2_DEPRECATIONS": json.dumps(deprecations(now)),
        "TANDEM_LOG_FORMAT": "json",
        # The --sigterm load sends each client's requests as fast as wrk goes.
        "TANDEM_RATE_LIMIT": "10000000",
    }


def deprecations(now):
    """The two elements the generated clients use, deprecated 90 days ago, their sunset in 60."""
    at = lambda days: (now + timedelta(days=days)).isoformat().replace("+00:00", "Z")
    dates = {"deprecatedAt": at(-90), "sunsetAt": at(60)}
    return [
        {"id": ELEMENTS[0], "operation": "GET /api/v2/users", "parameter": "page", **dates,
         "replacement": "the cursor parameter", "instruction": "Follow nextCursor instead of counting pages."},
        {"id": ELEMENTS[1], "operation": "POST /api/v2/users", "field": "/age", **dates,
         "replacement": "the birthDate field", "instruction": "Send birthDate instead of age."},
    ]


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def token(sub, tenant=None, roles=(), hours=2):
    """An HS256 JWT signed with SECRET, as the service checks it (the book's operators/authentication.md)."""
    claims = {"sub": sub, "exp": int(time.time()) + hours * 3600, "roles": list(roles)}
    if tenant:
        claims["tenant"] = tenant
    signing = b64(b'{"alg":"HS256","typ":"JWT"}') + "." + b64(json.dumps(claims, separators=(",", ":")).encode())
    return signing + "." + b64(hmac.new(SECRET.encode(), signing.encode(), hashlib.sha256).digest())


def serve(binary, n, log):
    server = subprocess.Popen([binary, "serve"], env=server_env(n), stdout=log, stderr=log)
    deadline = time.time() + 60
    while time.time() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"{binary} serve exited with {server.returncode}: see {log.name}")
        try:
            with urllib.request.urlopen(f"{BASE}/health/ready", timeout=1) as answer:
                if answer.status == 200:
                    return server
        except (urllib.error.URLError, OSError):
            time.sleep(0.2)
    server.terminate()
    raise SystemExit(f"{BASE}/health/ready never answered: see {log.name}")


def get(path, bearer, accept=None):
    """One GET read to its end: (milliseconds, status, body)."""
    headers = {"Authorization": f"Bearer {bearer}"}
    if accept:
        headers["Accept"] = accept
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(urllib.request.Request(BASE + path, headers=headers), timeout=120) as answer:
            body, status = answer.read(), answer.status
    except urllib.error.HTTPError as error:
        body, status = error.read(), error.code
    return (time.perf_counter() - started) * 1000, status, body


def streamed_lines(path, bearer):
    """A GET read in chunks to its end without keeping it: (milliseconds, status, lines)."""
    started, lines = time.perf_counter(), 0
    request = urllib.request.Request(BASE + path, headers={"Authorization": f"Bearer {bearer}"})
    with urllib.request.urlopen(request, timeout=600) as answer:
        while chunk := answer.read(1 << 16):
            lines += chunk.count(b"\n")
        status = answer.status
    return (time.perf_counter() - started) * 1000, status, lines


def rss_mb(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_ticks(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


class Results:
    """Each measure as a row: what, median, max, unit, bound (None: reported only), a note, and
    whether it failed outright (a wrong status or exit code: missed, whatever its time)."""

    def __init__(self):
        self.rows = []

    def add(self, what, median, worst, unit, bound=None, note="", failed=False, rss=None, floor=False):
        """`floor`: the bound is a least value (a rate), which `worst` (then the lowest) must reach."""
        row = {"what": what, "median": median, "max": worst, "unit": unit, "bound": bound, "note": note,
               "failed": failed, "rss": rss, "floor": floor}
        self.rows.append(row)
        memory = "" if rss is None else f"  RSS {rss:5.1f} MB"
        print(f"  {what:52} median {median:9.1f}  max {worst:9.1f} {unit}{memory}  {self.verdict(row)}  {note}",
              flush=True)

    @staticmethod
    def verdict(row):
        if row["failed"]:
            return "failed"
        over = []
        if row["bound"] is not None and row["floor"] and row["max"] < row["bound"]:
            over.append(f"under {row['bound']:g} {row['unit']}")
        elif row["bound"] is not None and not row["floor"] and row["max"] > row["bound"]:
            over.append(f"over {row['bound']:g} {row['unit']}")
        if row["rss"] is not None and row["rss"] > RSS_MB:
            over.append(f"RSS over {RSS_MB} MB")
        if over:
            return "missed: " + ", ".join(over)
        return "" if row["bound"] is None and row["rss"] is None else "met"

    def missed(self):
        return [r for r in self.rows if self.verdict(r) == "failed" or self.verdict(r).startswith("missed")]

    def markdown(self, n, seconds, counts):
        lines = [
            "## At an API's scale",
            "",
            f"`bench/scale.py --clients {n}` on {time.strftime('%Y-%m-%d %H:%M')}: {n:,} workbench clients "
            f"({', '.join(f'{t} {c:,}' for t, c in counts.items())} rows)"
            + (f", written in {seconds:,.0f} s" if seconds else "") + f"; each read {REPEATS} times.",
            "",
            f"| measure | median | max | bound | server RSS after (≤ {RSS_MB} MB) | |",
            "|---|---:|---:|---:|---:|---|",
        ]
        for r in self.rows:
            bound = "" if r["bound"] is None else f"{'≥' if r['floor'] else '≤'} {r['bound']:,g} {r['unit']}"
            rss = "" if r["rss"] is None else f"{r['rss']:.1f} MB"
            verdict = self.verdict(r)
            verdict = f"**{verdict}**" if verdict != "met" and verdict else verdict
            what = r["what"] + (f" ({r['note']})" if r["note"] else "")
            lines.append(f"| {what} | {r['median']:,.1f} {r['unit']} | {r['max']:,.1f} {r['unit']} | {bound} | {rss} | "
                         f"{verdict} |")
        return "\n".join(lines + [""])


def timed(results, what, path, bearer, bound=None, accept=None, server=None, repeats=REPEATS):
    """`repeats` GETs of `path` after one untimed (a client's token is verified once, then cached):
    median and max (a status other than 200 fails the row and stops the repeats); with `server`,
    its RSS after the last. Returns the last body, None when it failed."""
    get(path, bearer, accept)
    times = []
    for _ in range(repeats):
        ms, status, body = get(path, bearer, accept)
        times.append(ms)
        if status != 200:
            results.add(what, ms, ms, "ms", bound, note=f"answered {status}: {body[:120].decode(errors='replace')}",
                        failed=True)
            return None
    times.sort()
    results.add(what, times[len(times) // 2], times[-1], "ms", bound, rss=rss_mb(server.pid) if server else None)
    return body


def next_cursor(body):
    try:
        return json.loads(body).get("nextCursor") if body else None
    except ValueError:
        return None


def admin_reads(results, server, admin, csv_repeats=3):
    """/admin/migration (first page, PAGES more through nextCursor, two filters, the dashboard's
    orders, numbered pages and search, the CSV read to
    its end `csv_repeats` times), /admin/usage and readiness at three windows, each followed by the
    server's RSS."""
    body = timed(results, "GET /admin/migration?version=1 (first page)", "/admin/migration?version=1", admin,
                 PAGE_MS, server=server)
    cursor = next_cursor(body)
    for page in range(2, PAGES + 2):
        if not cursor:
            break
        body = timed(results, f"GET /admin/migration?version=1, page {page} (nextCursor)",
                     f"/admin/migration?version=1&cursor={urllib.parse.quote(cursor)}", admin, server=server)
        cursor = next_cursor(body)
    timed(results, "GET /admin/migration?version=1&status=in-progress", "/admin/migration?version=1&status=in-progress",
          admin, server=server)
    timed(results, "GET /admin/migration?version=1&tenant=tenant-07", "/admin/migration?version=1&tenant=tenant-07",
          admin, server=server)
    # The dashboard's views (the book's operators/dashboard.md): its other orders and numbered pages
    # deep in them (bounded), and its search (reported: a substring of tenant or subject reads every
    # client's key).
    for view in ("sort=requests", "sort=last-seen", "sort=last-seen&page=90", "page=190&limit=50"):
        timed(results, f"GET /admin/migration?version=1&{view}", f"/admin/migration?version=1&{view}", admin,
              PAGE_MS, server=server)
    timed(results, "GET /admin/migration?version=1&q=client-00001", "/admin/migration?version=1&q=client-00001", admin,
          server=server)
    times = []
    for _ in range(csv_repeats):
        try:
            ms, status, lines = streamed_lines("/admin/migration?version=1&format=csv", admin)
        except urllib.error.HTTPError as error:
            results.add("GET /admin/migration?version=1&format=csv", 0, 0, "ms", note=f"answered {error.code}",
                        failed=True)
            break
        except http.client.IncompleteRead as error:
            results.add("GET /admin/migration?version=1&format=csv", 0, 0, "ms",
                        note=f"cut short after {len(error.partial)} bytes (see bench/.scale.log)", failed=True)
            break
        times.append(ms)
    else:
        times.sort()
        results.add("GET /admin/migration?version=1&format=csv", times[len(times) // 2], times[-1], "ms",
                    note=f"{lines:,} lines, read {len(times)} times",
                    rss=rss_mb(server.pid))
        # The rate is asked at the size it is about: a small CSV's time is mostly the answer's start.
        rates = [lines / (ms / 1000) for ms in reversed(times)]
        results.add("  the CSV's lines per second", rates[len(rates) // 2], rates[0], "lines/s",
                    CSV_LINES_PER_S if lines >= CSV_RATE_FROM else None, floor=True)
    timed(results, "GET /admin/usage?version=1&limit=100", "/admin/usage?version=1&limit=100", admin, server=server)
    for window in (7, 30, 90):
        timed(results, f"GET /admin/versions/1/readiness?window={window}",
              f"/admin/versions/1/readiness?window={window}", admin, READINESS_MS, server=server)
    timed(results, "GET /admin/deprecations", "/admin/deprecations", admin, DEPRECATIONS_MS, server=server)
    for element in ELEMENTS:
        for window in (7, 30, 90):
            timed(results, f"GET /admin/deprecations/{element}/readiness?window={window}",
                  f"/admin/deprecations/{element}/readiness?window={window}", admin, READINESS_MS, server=server)


def sunset_check(results, binary, n, *gate):
    """`BINARY sunset-check GATE…` (`--version 1` or `--deprecation ID`), REPEATS times: it must
    say "not ready" (exit 1)."""
    what, times = f"tandem sunset-check {' '.join(gate)}", []
    for _ in range(REPEATS):
        started = time.perf_counter()
        out = subprocess.run([binary, "sunset-check", *gate], env=server_env(n), capture_output=True, text=True)
        times.append((time.perf_counter() - started) * 1000)
        if out.returncode != 1:
            results.add(what, times[-1], times[-1], "ms", SUNSET_CHECK_MS,
                        note=f"exited {out.returncode}, not 1: {out.stderr.strip()[:120]}", failed=True)
            return
    times.sort()
    results.add(f"{what} (exit 1)", times[len(times) // 2], times[-1], "ms", SUNSET_CHECK_MS)


def idle_cpu(results, server, seconds=10):
    """The server's user and system CPU over `seconds` without a request, as % of one core."""
    time.sleep(2)
    before = cpu_ticks(server.pid)
    time.sleep(seconds)
    percent = (cpu_ticks(server.pid) - before) / TICKS / seconds * 100
    results.add(f"idle CPU over {seconds} s", percent, percent, "%", IDLE_CPU)


def chromium():
    """Where Chromium is, if installed (`TANDEM_TEST_CHROMIUM` overrides), as the API tests look."""
    if os.environ.get("TANDEM_TEST_CHROMIUM"):
        return os.environ["TANDEM_TEST_CHROMIUM"]
    return next((p for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser") if Path(p).exists()), None)


class DevTools:
    """One DevTools target over a websocket (RFC 6455, the least of it): the handshake, masked
    text frames out, unmasked frames in (7, 16 or 64-bit lengths, continuations joined, pings
    answered); a command waits for the reply with its id, skipping events on the way."""

    GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    def __init__(self, address, timeout=30):
        url = urllib.parse.urlsplit(address)
        self.sock = socket.create_connection((url.hostname, url.port), timeout=timeout)
        self.buffer, self.next_id = bytearray(), 0
        key = base64.b64encode(os.urandom(16)).decode()
        path = url.path + (f"?{url.query}" if url.query else "")
        self.sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {url.netloc}\r\nUpgrade: websocket\r\n"
                          f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
                          .encode())
        while b"\r\n\r\n" not in self.buffer:
            self._fill()
        end = self.buffer.index(b"\r\n\r\n")
        head, self.buffer = bytes(self.buffer[:end]).decode("latin-1"), self.buffer[end + 4:]
        status, *lines = head.split("\r\n")
        headers = {name.strip().lower(): value.strip() for name, value in (line.split(":", 1) for line in lines)}
        accept = base64.b64encode(hashlib.sha1((key + self.GUID).encode()).digest()).decode()
        if status.split(" ")[1:2] != ["101"] or headers.get("sec-websocket-accept") != accept:
            raise ConnectionError(f"{address}: no websocket upgrade ({status})")

    def _fill(self):
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise ConnectionError("the DevTools connection closed")
        self.buffer += chunk

    def _take(self, n):
        while len(self.buffer) < n:
            self._fill()
        data = bytes(self.buffer[:n])
        del self.buffer[:n]
        return data

    def _send(self, opcode, payload):
        n = len(payload)
        if n < 126:
            head = bytes([0x80 | opcode, 0x80 | n])
        elif n < 1 << 16:
            head = bytes([0x80 | opcode, 0x80 | 126]) + n.to_bytes(2, "big")
        else:
            head = bytes([0x80 | opcode, 0x80 | 127]) + n.to_bytes(8, "big")
        mask = os.urandom(4)
        keys = (mask * (n // 4 + 1))[:n]
        masked = (int.from_bytes(payload, "big") ^ int.from_bytes(keys, "big")).to_bytes(n, "big")
        self.sock.sendall(head + mask + masked)

    def _message(self):
        parts = []
        while True:
            first, second = self._take(2)
            opcode, n = first & 0x0F, second & 0x7F
            if second & 0x80:
                raise ConnectionError("a masked frame from the browser")
            if n == 126:
                n = int.from_bytes(self._take(2), "big")
            elif n == 127:
                n = int.from_bytes(self._take(8), "big")
            payload = self._take(n)
            if opcode == 0x8:
                raise ConnectionError("the browser closed the DevTools connection")
            if opcode == 0x9:
                self._send(0xA, payload)
            elif opcode in (0x0, 0x1, 0x2):
                parts.append(payload)
                if first & 0x80:
                    return b"".join(parts)

    def call(self, method, params=None):
        """Sends one command and returns its result (a protocol error raises RuntimeError)."""
        self.next_id += 1
        ident = self.next_id
        self._send(0x1, json.dumps({"id": ident, "method": method, "params": params or {}}).encode())
        while True:
            reply = json.loads(self._message())
            if reply.get("id") == ident:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def eval(self, expression):
        """The value of `expression` in the page (a thrown exception raises RuntimeError)."""
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:60]}: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def close(self):
        self.sock.close()


class Chromium:
    """Headless Chromium as tests/api/harness/browser.rs starts it, driven through its page target;
    in a process group of its own, which close() kills whole."""

    FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
             "--remote-debugging-port=0", "--window-size=1100,900"]

    def __init__(self, binary):
        self.page = None
        self.profile = tempfile.TemporaryDirectory(prefix="scale-chromium-", ignore_cleanup_errors=True)
        self.process = subprocess.Popen([binary, *self.FLAGS, f"--user-data-dir={self.profile.name}", "about:blank"],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        start_new_session=True)
        try:
            announced, said = queue.Queue(), []
            threading.Thread(target=self._stderr, args=(announced, said), daemon=True).start()
            try:
                browser = announced.get(timeout=30)
            except queue.Empty:
                browser = None
            if not browser:
                raise RuntimeError(f"Chromium announced no DevTools port: {' / '.join(said[-3:])[:200]}")
            port = urllib.parse.urlsplit(browser).port
            deadline = time.time() + 10
            while True:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as answer:
                    pages = [t for t in json.load(answer) if t.get("type") == "page" and t.get("webSocketDebuggerUrl")]
                if pages or time.time() > deadline:
                    break
                time.sleep(0.1)
            if not pages:
                raise RuntimeError("Chromium has no page target")
            self.page = DevTools(pages[0]["webSocketDebuggerUrl"])
        except BaseException:
            self.close()
            raise

    def _stderr(self, announced, said):
        """Reads Chromium's stderr to its end (a full pipe would stall it), passing on the DevTools
        address; None when it ends without one."""
        for line in self.process.stderr:
            line = line.decode(errors="replace").strip()
            said.append(line)
            del said[:-20]
            if "DevTools listening on " in line:
                announced.put(line.split("DevTools listening on ", 1)[1].strip())
        announced.put(None)

    def wait_for(self, expression, seconds, every=0.025):
        """Polls `expression` every `every` seconds until it is truthy (its value) or `seconds`
        pass (None). Errors while a page is being replaced count as not yet."""
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            try:
                value = self.page.eval(expression)
            except RuntimeError:
                value = None
            if value:
                return value
            time.sleep(every)
        return None

    def open(self, url):
        """Navigates to `url` and waits for its load (the old page marked, so as not to take it
        for the new one when the same URL is opened again)."""
        self.page.eval("window.__scaleBefore = true")
        navigated = self.page.call("Page.navigate", {"url": url})
        if navigated.get("errorText"):
            raise RuntimeError(f"{url}: {navigated['errorText']}")
        if not self.wait_for("document.readyState === 'complete' && !window.__scaleBefore", 10):
            raise RuntimeError(f"{url} did not load within 10 s")

    def close(self):
        if self.page:
            self.page.close()
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()
        self.profile.cleanup()


# The verdict is drawn in the space kept for it (its state leaves "loading"); the first page is
# drawn when the totals and the first page of clients are.
VERDICT_DRAWN = "['ready', 'blocked'].includes(document.getElementById('verdict').dataset.state)"
PAGE_DRAWN = ("!document.getElementById('migration').hidden && "
              "document.querySelectorAll('#progress tbody tr').length > 0 && !document.getElementById('report').hidden")


def dashboard(results, server, admin):
    """/admin/dashboard in headless Chromium, DASHBOARD_LOADS times, each a new page load: the
    admin token typed and the form submitted as an operator does (sign_in in
    tests/api/views.rs), timed from the submit until the verdict is drawn and until the totals
    and the first page of clients are (polled every 25 ms; the page asks both at once); the
    server's RSS after each, the largest kept. Without Chromium it is not measured, and `--check`
    does not miss it."""
    rows = ("/admin/dashboard in Chromium, log-in to verdict", VERDICT_MS), \
        ("/admin/dashboard in Chromium, log-in to first page", DASHBOARD_MS)
    binary = chromium()
    if not binary:
        for what, _ in rows:
            print(f"  {what}: not measured (no Chromium at /usr/bin/chromium, /usr/bin/chromium-browser or "
                  f"$TANDEM_TEST_CHROMIUM)", flush=True)
        return
    times, rss, browser = ([], []), 0.0, None
    log_in = (f"document.getElementById('token').value = {json.dumps(admin)}; "
              f"document.getElementById('login').requestSubmit(); true")
    error = ("document.getElementById('status').className === 'error' ? "
             "'error: ' + document.getElementById('status').textContent : ''")
    # Drawn, or the page's own error, or not yet.
    polls = (f"({VERDICT_DRAWN}) ? 'drawn' : {error}", f"({PAGE_DRAWN}) ? 'drawn' : {error}")

    def failed(index, elapsed, note):
        what, bound = rows[index]
        results.add(what, elapsed, elapsed, "ms", bound, note=note, failed=True)

    try:
        browser = Chromium(binary)
        for _ in range(DASHBOARD_LOADS):
            browser.open(f"{BASE}/admin/dashboard")
            started = time.perf_counter()
            browser.page.eval(log_in)
            # The verdict is polled first: when the first page comes first, it is still found
            # drawn at once, and the first page's time is its own.
            for index, poll in enumerate(polls):
                state = browser.wait_for(poll, DASHBOARD_WAIT_S, every=0.01)
                elapsed = (time.perf_counter() - started) * 1000
                if state != "drawn":
                    failed(index, elapsed, state or f"not drawn within {DASHBOARD_WAIT_S} s")
                    return
                times[index].append(elapsed)
            rss = max(rss, rss_mb(server.pid))
    except (OSError, RuntimeError, ValueError) as error:
        failed(1, 0, f"{type(error).__name__}: {str(error)[:160]}")
        return
    finally:
        if browser:
            browser.close()
    for (what, bound), measured in zip(rows, times):
        note = f"{len(measured)} page loads: {', '.join(f'{t:.0f}' for t in measured)} ms"
        measured = sorted(measured)
        results.add(what, measured[len(measured) // 2], measured[-1], "ms", bound, note=note, rss=rss)


# --- --sigterm: nothing lost, nothing doubled ------------------------------------------------------

def requests_counted():
    """tandem_http_requests_total summed over v1's GET 200 lines (dry runs apart)."""
    with urllib.request.urlopen(f"{BASE}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    total = 0
    for line in text.splitlines():
        if line.startswith("tandem_http_requests_total{"):
            labels, value = line.rsplit(" ", 1)
            if ('version="1"' in labels and 'method="GET"' in labels and 'status="200"' in labels
                    and 'dry_run="true"' not in labels):
                total += int(float(value))
    return total


def stored(db):
    """What the tables hold for tenant `load` (and today's usage_days row, which only the load adds to)."""
    load, today = f"version = 1 AND tenant = '{LOAD_TENANT}'", "(now() AT TIME ZONE 'UTC')::date"
    row = psql(f"""SELECT (SELECT coalesce(sum(requests), 0) FROM client_versions WHERE {load}),
                          (SELECT coalesce(sum(requests), 0) FROM client_routes WHERE {load}),
                          (SELECT coalesce(sum(requests), 0) FROM usage_daily WHERE {load}),
                          (SELECT coalesce(sum(recent[1]), 0) FROM client_usage WHERE {load} AND last_day = {today}),
                          (SELECT coalesce(sum(requests), 0) FROM usage_days WHERE version = 1 AND day = {today})""", db)
    names = ["client_versions", "client_routes", "usage_daily", "client_usage recent[1]", "usage_days today"]
    return dict(zip(names, map(int, row.split("|"))))


def forget_load(db):
    """Removes what a --sigterm load left (tenant `load`; only the load calls v1 as `load`),
    usage_days' share first, so the timed reads see the N clients written and nothing else."""
    psql(f"""BEGIN;
             UPDATE usage_days AS d SET requests = d.requests - l.requests
             FROM (SELECT version, day, sum(requests) AS requests FROM usage_daily
                   WHERE version IN (1, 2) AND tenant = '{LOAD_TENANT}' GROUP BY version, day) AS l
             WHERE (d.version, d.day) = (l.version, l.day);
             DELETE FROM usage_days WHERE requests = 0;
             {" ".join(f"DELETE FROM {t} WHERE version IN (1, 2) AND tenant = '{LOAD_TENANT}';"
                       for t in VERSION_TABLES if t != "usage_days")}
             COMMIT""", db)


def sigterm(n, server):
    """DRAFT. LOAD_CLIENTS distinct clients of tenant `load` call GET /api/v1/users?size=1 round-robin
    for LOAD_SECONDS under wrk; a second after the load the server gets SIGTERM. Every request
    /metrics counted must be in each table once after it exits: reports lost and doubled per table.
    (Crossing midnight UTC during the load would split today's rows: run it away from midnight.)"""
    db = database(n)
    before, counted_before = stored(db), requests_counted()
    with tempfile.TemporaryDirectory() as scratch:
        tokens = Path(scratch) / "tokens"
        tokens.write_text("".join(token(f"load-{i:07d}", LOAD_TENANT) + "\n" for i in range(1, LOAD_CLIENTS + 1)))
        out = subprocess.run(["wrk", "-t2", "-c64", f"-d{LOAD_SECONDS}s", "-s", str(BENCH / "wrk" / "tokens.lua"),
                              f"{BASE}/api/v1/users?size=1"], capture_output=True, text=True,
                             env={**os.environ, "SCALE_TOKENS": str(tokens), "SCALE_THREADS": "2"})
    if out.returncode != 0:
        raise SystemExit(f"wrk failed: {out.stderr.strip()}")
    sent = int(re.search(r"(\d+) requests in", out.stdout).group(1))
    non_2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out.stdout)
    # wrk stops with up to 64 requests in flight; the server finishes them within the second before
    # SIGTERM, so /metrics is read half way through it.
    time.sleep(0.5)
    counted = requests_counted() - counted_before
    time.sleep(0.5)
    stopped = time.time()
    server.send_signal(signal.SIGTERM)
    code = server.wait(timeout=120)
    summary = (f"{LOAD_CLIENTS:,} clients of tenant `{LOAD_TENANT}` for {LOAD_SECONDS} s: wrk saw {sent:,} answers "
               f"({int(non_2xx.group(1)) if non_2xx else 0:,} not 2xx), /metrics counted {counted:,} v1 GET 200; "
               f"the server exited {code} {time.time() - stopped:.1f} s after SIGTERM")
    print("  " + summary)
    after = stored(db)
    rows, failures = [], [f"the server exited {code} after SIGTERM"] if code != 0 else []
    for table in after:
        written = after[table] - before[table]
        rows.append((table, written, max(0, counted - written), max(0, written - counted)))
        print(f"  {table:24} {written:>10,} written   lost {rows[-1][2]:>8,}   doubled {rows[-1][3]:>8,}")
    if not counted:
        failures.append("/metrics counted no v1 GET 200 of the load: nothing was compared")
    failures += [f"{table}: {missing:,} lost, {doubled:,} doubled" for table, _, missing, doubled in rows
                 if missing or doubled]
    forget_load(db)
    return {"rows": rows, "failures": failures, "summary": summary}


# --- Main ----------------------------------------------------------------------------------------

def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=10_000)
    parser.add_argument("--fresh", action="store_true", help="drop and write the database again")
    parser.add_argument("--binary", help="the tandem binary: migrate with it, then time its answers")
    parser.add_argument("--verify", action="store_true", help="check the tables agree with each other")
    parser.add_argument("--check", action="store_true", help="exit 1 when a bound is missed")
    parser.add_argument("--sigterm", action="store_true", help="after the timings: load, SIGTERM, compare counts")
    args = parser.parse_args()
    if not 1 <= args.clients <= 9_999_999:
        raise SystemExit("--clients: 1 to 9,999,999 (subjects have 7 digits)")
    n, db = args.clients, database(args.clients)
    binary = str(Path(args.binary).resolve()) if args.binary else None

    started = time.time()
    seconds = prepare(n, args.fresh, binary)
    forget_load(db)
    counts = row_counts(db)
    for table, count in counts.items():
        print(f"  {table:24} {count:>12,} rows")
    size = psql(f"SELECT pg_size_pretty(pg_database_size('{db}'))")
    print(f"{db}: {size}" + (f", written in {seconds:.1f} s" if seconds else f" (ready in {time.time() - started:.1f} s)"))
    if seconds or args.verify:
        for fact, value in spread(db).items():
            print(f"  {fact:42} {value}")
    tenant, subject = sample_client(db)
    print(f"sample client: tenant {tenant}, subject {subject}", flush=True)
    if args.verify and not verify(db):
        return 1
    if not binary:
        return 0

    results = Results()
    admin = token("scale-admin", roles=["admin"])
    log = open(BENCH / ".scale.log", "w")
    server = serve(binary, n, log)
    try:
        for path in ("/api/migration", "/api/migration/guide"):
            body = timed(results, f"GET {path} (sample client)", path, token(subject, tenant), GUIDE_MS,
                         repeats=2 * REPEATS + 1)
            used = {d["id"] for d in json.loads(body)["deprecations"]} if body else set()
            if used and ELEMENTS[0] not in used:
                results.add(f"  {path} lists {ELEMENTS[0]}", 0, 0, "ms", note=f"lists {sorted(used)}", failed=True)
        admin_reads(results, server, admin, csv_repeats=3 if n <= 100_000 else 1)
        sunset_check(results, binary, n, "--version", "1")
        sunset_check(results, binary, n, "--deprecation", ELEMENTS[0])
        idle_cpu(results, server)
        dashboard(results, server, admin)
        load = sigterm(n, server) if args.sigterm else {"rows": [], "failures": []}
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=60)
        log.close()
    print()
    print(results.markdown(n, seconds, counts))
    if load["rows"]:
        print(f"SIGTERM after a load: {load['summary']}.\n")
        print("| table (tenant `load`) | written | lost | doubled |\n|---|---:|---:|---:|")
        for table, written, missing, doubled in load["rows"]:
            print(f"| {table} | {written:,} | {missing:,} | {doubled:,} |")
    failures = [f"{r['what']}: {Results.verdict(r)}" for r in results.missed()] + load["failures"]
    if args.check and failures:
        print("missed:\n  " + "\n  ".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
