"""Bulk import against its ceiling (issue 19): a 1,000,000-row CSV through
`POST /api/v2/customers/imports` against PostgreSQL `COPY` of the same rows into the same table
(with its indexes, beside the suite's 1,000,000 customers) and the same counters, in one run.
Started by bench/import; writes its section of bench/RESULTS.md.

Each side writes its own tenant (`copy-bench`, `import-bench`); both are emptied first. The
import's peak resident memory is the server's VmHWM after the import, less nothing: the target
(under 64 MB) is for the whole process. The same file then goes through again with an
Idempotency-Key (tenant `import-bench-keyed`), the path that spools the upload to fingerprint
it, and the process's peak is read again.
"""

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

from run import BENCH, DB, ENV, PORT, TANDEM, memory_mb, prepare_data, psql, replace_section, sh, wait_ready

SECTION = "## Bulk import"
ROWS = int(os.environ.get("BENCH_IMPORT_ROWS", "1000000"))
WORK = BENCH / ".import"


def row(i):
    """The same shape as the seed's customers: a 10-digit number, a name, an e-mail, a phone, a branch."""
    return (f"{i + 1:010}", f"Customer {i} Ltd", f"customer{i}@import.example",
            f"+41 44 {i % 1000:03} {i % 100:02} {(i // 100) % 100:02}", f"{i % 100 + 1:03}")


def write_files():
    WORK.mkdir(exist_ok=True)
    os.chmod(WORK, 0o755)
    upload, copy = WORK / "customers.csv", WORK / "copy.csv"
    import_id = str(uuid.uuid4())
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with open(upload, "w") as up, open(copy, "w") as cp:
        up.write("customerNumber,name,email,phone,branchCode\n")
        for i in range(ROWS):
            number, name, email, phone, branch = row(i)
            up.write(f"{number},{name},{email},{phone},{branch}\n")
            cp.write(f"copy-bench,{import_id},{number},{name},{email},{phone},{branch},{now}\n")
    os.chmod(upload, 0o644)
    os.chmod(copy, 0o644)
    return upload, copy, import_id


def empty_tenants():
    for tenant in ("copy-bench", "import-bench", "import-bench-keyed"):
        psql(f"DELETE FROM customers WHERE tenant = '{tenant}'", DB)
        psql(f"DELETE FROM customer_counts WHERE tenant = '{tenant}'", DB)
        psql(f"DELETE FROM imports WHERE tenant = '{tenant}'", DB)
    psql("VACUUM ANALYZE customers", DB)
    psql("CHECKPOINT")


def copy_ceiling(copy, import_id):
    """COPY in one transaction with the import's report row and the counters, as the import writes them."""
    script = WORK / "copy.sql"
    script.write_text(
        "BEGIN;\n"
        f"INSERT INTO imports (id, tenant, status, received, created, skipped, errors, created_at) "
        f"VALUES ('{import_id}', 'copy-bench', 'completed', {ROWS}, {ROWS}, 0, '[]', now());\n"
        f"\\copy customers (tenant, import_id, customer_number, name, email, phone, branch_code, created_date) "
        f"FROM '{copy}' WITH (FORMAT csv)\n"
        "INSERT INTO customer_counts (tenant, branch_code, n) "
        "SELECT 'copy-bench', branch_code, count(*) FROM customers WHERE tenant = 'copy-bench' GROUP BY branch_code "
        "UNION ALL SELECT 'copy-bench', '', count(*) FROM customers WHERE tenant = 'copy-bench' "
        "ON CONFLICT (tenant, branch_code) DO UPDATE SET n = customer_counts.n + EXCLUDED.n;\n"
        "COMMIT;\n")
    started = time.perf_counter()
    sh("psql", "-h", "127.0.0.1", "-U", "postgres", "-d", DB, "-v", "ON_ERROR_STOP=1", "-q", "-f", str(script))
    return time.perf_counter() - started


def tandem_import(upload):
    env = {**ENV, "TANDEM_MAX_UPLOAD_BYTES": str(upload.stat().st_size * 2), "TANDEM_DB_TIMEOUT_MS": "60000",
           "TANDEM_REQUEST_TIMEOUT_MS": "600000", "TANDEM_DRAIN_SECONDS": "0"}
    env.pop("TANDEM_LOG", None)
    log = open(BENCH / ".import.log", "w")
    server = subprocess.Popen([str(TANDEM), "serve"], env=env, stdout=log, stderr=log)
    token = sh(str(TANDEM), "token", "--sub", "import-bench", "--role", "admin", "--ttl", "2h").strip()

    def post(tenant, *headers):
        started = time.perf_counter()
        out = sh("curl", "-sS", "-o", "/dev/stderr", "-w", "%{http_code}", "-H", f"Authorization: Bearer {token}",
                 "-H", f"X-Tenant-ID: {tenant}", *headers, "-F", f"file=@{upload};type=text/csv",
                 f"http://127.0.0.1:{PORT}/api/v2/customers/imports")
        if out.strip() != "201":
            raise RuntimeError(f"the import answered {out.strip()}: see bench/.import.log")
        return time.perf_counter() - started, memory_mb(server.pid)

    try:
        wait_ready(f"http://127.0.0.1:{PORT}/health/ready")
        before = memory_mb(server.pid)
        seconds, after = post("import-bench")
        keyed_seconds, keyed_after = post("import-bench-keyed", "-H", f"Idempotency-Key: bench-{uuid.uuid4()}")
    finally:
        server.terminate()
        server.wait(timeout=60)
        log.close()
    return seconds, before, after, keyed_seconds, keyed_after


def main():
    print(f"data ready ({prepare_data():.1f} s)")
    upload, copy, import_id = write_files()
    size_mb = upload.stat().st_size / 1e6
    print(f"{ROWS:,} rows, upload {size_mb:.1f} MB")
    empty_tenants()
    copy_seconds = copy_ceiling(copy, import_id)
    print(f"COPY: {copy_seconds:.1f} s")
    psql("CHECKPOINT")
    import_seconds, before, after, keyed_seconds, keyed_after = tandem_import(upload)
    print(f"import: {import_seconds:.1f} s, peak RSS {after['VmHWM']:.1f} MB; "
          f"keyed: {keyed_seconds:.1f} s, peak RSS {keyed_after['VmHWM']:.1f} MB")
    stored = int(psql("SELECT count(*) FROM customers WHERE tenant = 'import-bench'", DB))
    keyed_stored = int(psql("SELECT count(*) FROM customers WHERE tenant = 'import-bench-keyed'", DB))
    empty_tenants()
    write(size_mb, copy_seconds, (import_seconds, before, after, stored), (keyed_seconds, keyed_after, keyed_stored))
    return 0


def write(size_mb, copy_seconds, plain, keyed):
    import_seconds, before, after, stored = plain
    keyed_seconds, keyed_after, keyed_stored = keyed
    copy_rate, import_rate, keyed_rate = ROWS / copy_seconds, ROWS / import_seconds, ROWS / keyed_seconds
    ratio = import_rate / copy_rate
    peak = keyed_after["VmHWM"]
    lines = [
        SECTION,
        "",
        f"`bench/import` on {time.strftime('%Y-%m-%d %H:%M')}: {ROWS:,} rows ({size_mb:.1f} MB of CSV) into "
        "`customers` beside the suite's 1,000,000, with its indexes and the branch counters, each side in one "
        "transaction; release build on PostgreSQL, default log level. The import streams: rows are checked and "
        "written in batches of 2,000 as the upload arrives.",
        "",
        "| | seconds | rows/s | peak RSS MB (whole process, so far) |",
        "|---|---:|---:|---:|",
        f"| PostgreSQL `COPY` (psql `\\copy`, the ceiling) | {copy_seconds:.1f} | {copy_rate:,.0f} | |",
        f"| `POST /api/v2/customers/imports` | {import_seconds:.1f} | {import_rate:,.0f} | {after['VmHWM']:.1f} |",
        f"| the same with an `Idempotency-Key` (the upload spooled to a file) | {keyed_seconds:.1f} | "
        f"{keyed_rate:,.0f} | {peak:.1f} |",
        "",
        f"The import stored {stored:,} rows at {ratio:.2f} × COPY's rows per second (target ≥ 0.5: "
        f"{'met' if ratio >= 0.5 else 'not met'}); the keyed import stored {keyed_stored:,}. The process's peak "
        f"resident memory was {after['VmHWM']:.1f} MB after the import and {peak:.1f} MB after both "
        f"({before['VmHWM']:.1f} MB before; target under 64 MB: {'met' if peak < 64 else 'not met'}).",
        "",
    ]
    replace_section(SECTION, lines)


if __name__ == "__main__":
    sys.exit(main())
