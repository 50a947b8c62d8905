-- The migration workbench's tables filled for :n clients, for bench/scale.py. Each step (from
-- one `-- step:` line to the next) runs in its own psql session with the variables bench/scale.py
-- passes (-v): the knobs at the top of bench/scale.py, `now` (the run's instant, UTC) and
-- `today` (its UTC date). Every draw is bench_scale.u(key, salt): a hash of the client's number,
-- so the same N writes the same clients, counts and days on every run, dated back from `now`.
--
-- The plan: `clients` holds each client's traits, `days` its requests per active day and
-- operation; every table is summed from those, so the tables agree with each other as the
-- service's own writes make them agree (the book's operators/workbench.md, 0010_scale.sql).

-- step: setup
DROP SCHEMA IF EXISTS bench_scale CASCADE;
CREATE SCHEMA bench_scale;

-- A uniform draw in [0, 1) for `key` and `salt`.
CREATE FUNCTION bench_scale.u(key BIGINT, salt BIGINT) RETURNS FLOAT8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT (hashint8extended(key, salt) & 2147483647)::float8 / 2147483648 $$;

-- v1's operations, most called first (a client's are drawn from the front more often), by k + 1:
-- the method, the route template (usage_daily keeps it without the method), and whether v2 has the
-- operation too. Functions of no argument, so a query reads them as constants.
CREATE FUNCTION bench_scale.methods() RETURNS TEXT[] LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT '{GET,GET,GET,POST,GET,PUT,PATCH,DELETE,POST,GET}'::text[] $$;
CREATE FUNCTION bench_scale.routes() RETURNS TEXT[] LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT '{"/users/{id}","/users","/customers","/users","/customers/branch","/users/{id}","/users/{id}",
               "/users/{id}","/upload","/imports/{id}"}'::text[] $$;
CREATE TABLE bench_scale.ops AS
SELECT k - 1 AS k, (bench_scale.methods())[k] AS method, (bench_scale.routes())[k] AS route,
       k - 1 NOT IN (4, 8, 9) AS in_v2
FROM generate_series(1, 10) AS k;

-- Client i's tenant (consecutive clients share one: tenant-00 the first 22% with the default
-- skew, …) and subject: every table is written in client order, which is (tenant, subject) order.
CREATE FUNCTION bench_scale.tenant(i BIGINT, n BIGINT, tenants INTEGER, skew FLOAT8) RETURNS TEXT
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 'tenant-' || lpad(floor(tenants * ((i - 0.5) / n) ^ skew)::int::text, 2, '0') $$;
CREATE FUNCTION bench_scale.subject(i BIGINT) RETURNS TEXT LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT 'client-' || lpad(i::text, 7, '0') $$;

-- Arrays joined end to end, in the aggregate's order (client_usage's `recent`).
CREATE AGGREGATE bench_scale.cat(ANYCOMPATIBLEARRAY) (SFUNC = array_cat, STYPE = ANYCOMPATIBLEARRAY, INITCOND = '{}');

-- The changes a request to each operation can meet, and what can meet each (src/v1/changes.rs:
-- a parameter with its value when the API defines the values, a body field's pointer, a field
-- missing or null).
CREATE TABLE bench_scale.capable (k INTEGER, nth INTEGER, change TEXT, details TEXT[]);
INSERT INTO bench_scale.capable VALUES
    (2, 0, 'sort-parameter', '{sortBy=name,sortBy=email,sortBy=createdDate,sortBy=customerNumber}'),
    (4, 0, 'branch-filter-in-query', '{branchCode}'),
    (3, 0, 'strict-bodies', '{/role,/id,/createdAt}'),
    (3, 1, 'age-required', '{/age missing}'),
    (5, 0, 'strict-bodies', '{/role,/id}'),
    (5, 1, 'age-required', '{/age missing,/age null}'),
    (6, 0, 'strict-bodies', '{/role,/nick}'),
    (6, 1, 'age-required', '{/age null}');

-- step: clients
-- One row per client: its tenant and subject, and the traits every table is drawn from.
CREATE UNLOGGED TABLE bench_scale.clients AS
WITH drawn AS (
    SELECT i,
           bench_scale.u(i, 2) < :every_day AS every_day,
           bench_scale.u(i, 3) < :on_v2 AS on_v2,
           bench_scale.u(i, 4) AS rehearse_u,
           bench_scale.u(i, 5) AS stale_u
    FROM generate_series(1, :n) AS i
), traits AS (
    SELECT d.*,
           rehearse_u < (CASE WHEN on_v2 THEN :rehearsed_v2 ELSE :rehearsed_v1_only END) AS rehearsed,
           NOT every_day AND stale_u < (CASE WHEN on_v2 THEN :stale_v2 ELSE :stale_v1_only END) AS stale
    FROM drawn AS d
), last AS (
    SELECT t.*,
           CASE WHEN every_day THEN 0
                WHEN stale THEN 31 + floor(bench_scale.u(i, 6) * 59)::int
                WHEN bench_scale.u(i, 7) < :last_week THEN floor(bench_scale.u(i, 8) * 7)::int
                ELSE 7 + floor(bench_scale.u(i, 8) * 24)::int
           END AS last_ago
    FROM traits AS t
), spans AS (
    -- Its other active days fall in the `span` days before the last one, one a day at most.
    SELECT l.*, least(89 - last_ago, 7 + floor(bench_scale.u(i, 10) * 83)::int) AS span
    FROM last AS l
)
SELECT i,
       bench_scale.tenant(i, :n, :tenants, :tenant_skew) AS tenant,
       bench_scale.subject(i) AS subject,
       every_day, on_v2, rehearsed, stale,
       -- Its last active day, in days before today; how many days it was active, and over how many.
       last_ago,
       CASE WHEN every_day THEN 90
            ELSE least(span + 1, :days_min + floor(bench_scale.u(i, 9) * (:days_max - :days_min + 1))::int) END AS ndays,
       span,
       CASE WHEN bench_scale.u(i, 11) < :one_route THEN 1
            WHEN bench_scale.u(i, 11) < :one_route + :two_routes THEN 2 ELSE 3 END AS nroutes,
       -- Its operations: r0, r0 + step, r0 + 2 step (mod 10), distinct since step is odd and not 5.
       floor(10 * bench_scale.u(i, 12) ^ 2)::int AS r0,
       (ARRAY[1, 3, 7, 9])[1 + floor(bench_scale.u(i, 13) * 4)::int] AS step,
       -- Requests per operation and active day: heavy-tailed (log-uniform body, a rarer far tail).
       (CASE WHEN bench_scale.u(i, 14) < :tail
             THEN :tail_min * (:tail_max::float8 / :tail_min) ^ bench_scale.u(i, 15)
             ELSE :body_min * (:body_max::float8 / :body_min) ^ bench_scale.u(i, 15) END)
           * (CASE WHEN every_day THEN :every_day_boost ELSE 1 END) AS rate,
       -- Called v1 before the usage window too (requests in client_routes that usage_daily lacks).
       bench_scale.u(i, 16) < :older AS older,
       1 + floor(bench_scale.u(i, 17) * 400)::int AS older_days,
       CASE WHEN bench_scale.u(i, 18) < :refused THEN 1 + floor(bench_scale.u(i, 19) * 50)::bigint ELSE 0 END AS refusals,
       CASE WHEN rehearsed THEN 1 + floor(bench_scale.u(i, 20) * 20)::bigint ELSE 0 END AS rehearsals,
       CASE WHEN rehearsed THEN :'now'::timestamptz - bench_scale.u(i, 21) * interval '30 days' END AS last_rehearsal,
       -- v2: first called around the time its v1 traffic last ran, last called in the last 2 days.
       least(:'now'::timestamptz, :'today'::date::timestamptz
             - (last_ago + floor(bench_scale.u(i, 22) * 20)::int) * interval '1 day'
             + bench_scale.u(i, 23) * interval '1 day') AS v2_first,
       bench_scale.u(i, 24) AS v2_last_u,
       bench_scale.u(i, 25) AS v2_requests_u,
       bench_scale.u(i, 26) < :exposed AS exposed,
       1 + (bench_scale.u(i, 27) < :two_exposures)::int AS nexposures,
       bench_scale.u(i, 28) < :dry_run AS dry_run,
       bench_scale.u(i, 29) < :dry_run_v2 AS dry_run_v2
FROM spans;
ANALYZE bench_scale.clients;

-- step: days
-- Each client's active days, oldest first (the order of usage_daily's index by client): its last
-- day, and the others one in each equal slice of the `span` days before it (so no day twice). The
-- j-th day calls operation a, its (j mod nroutes)-th, so every operation is called, and on some
-- days operation b, the next one, too; `merged` when both are one route (GET and PUT
-- /users/{id}), which usage_daily counts in one row. Written in one stream, in client order.
SET max_parallel_workers_per_gather = 0;
CREATE UNLOGGED TABLE bench_scale.days AS
WITH called AS (
    SELECT c.i, c.tenant, c.subject, c.rate, j, d.ago,
           (c.r0 + (j % c.nroutes) * c.step) % 10 AS a,
           CASE WHEN c.nroutes > 1 AND bench_scale.u(c.i * 1000 + j, 31) < :second_route
                THEN (c.r0 + ((j + 1) % c.nroutes) * c.step) % 10 END AS b,
           c.i * 1000 + j * 2 AS key,
           -- The milliseconds of the day that have passed (all of them before today).
           CASE WHEN d.ago = 0 THEN extract(epoch FROM :'now'::timestamptz - :'today'::date::timestamptz) * 1000
                ELSE 86399999 END AS open
    FROM bench_scale.clients AS c
    CROSS JOIN LATERAL generate_series(c.ndays - 1, 0, -1) AS j
    -- Day j >= 1 lies in the j-th slice of the span, [ceil((j - 1) w), ceil(j w)) with w = span / (ndays - 1) >= 1.
    CROSS JOIN LATERAL (SELECT ((j - 1) * c.span + c.ndays - 2) / (c.ndays - 1) AS lo,
                               (j * c.span + c.ndays - 2) / (c.ndays - 1) AS hi) AS slice
    CROSS JOIN LATERAL (SELECT CASE WHEN c.every_day THEN j
                                    WHEN j = 0 THEN c.last_ago
                                    ELSE c.last_ago + 1 + slice.lo
                                         + floor(bench_scale.u(c.i * 1000 + j, 30) * (slice.hi - slice.lo))::int
                               END AS ago) AS d
), counted AS (
    SELECT i, tenant, subject, ago, a, b, key, open,
           greatest(1, floor(rate * (0.3 + 1.4 * bench_scale.u(key, 32))))::bigint AS ra,
           CASE WHEN b IS NOT NULL THEN greatest(1, floor(rate * (0.3 + 1.4 * bench_scale.u(key + 1, 32))))::bigint END AS rb
    FROM called
), timed AS (
    SELECT i, tenant, subject, ago, a, b, ra, rb,
           floor(bench_scale.u(key, 33) * open) AS a1, floor(bench_scale.u(key, 34) * open) AS a2,
           floor(bench_scale.u(key + 1, 33) * open) AS b1, floor(bench_scale.u(key + 1, 34) * open) AS b2,
           :'today'::date::timestamptz - ago * interval '1 day' AS midnight
    FROM counted
)
SELECT i, tenant, subject, ago, a, b, coalesce((bench_scale.routes())[a + 1] = (bench_scale.routes())[b + 1], false) AS merged, ra, rb,
       midnight + least(a1, a2) * interval '1 millisecond' AS fa,
       midnight + (CASE WHEN ra = 1 THEN least(a1, a2) ELSE greatest(a1, a2) END) * interval '1 millisecond' AS la,
       CASE WHEN b IS NOT NULL THEN midnight + least(b1, b2) * interval '1 millisecond' END AS fb,
       CASE WHEN b IS NOT NULL
            THEN midnight + (CASE WHEN rb = 1 THEN least(b1, b2) ELSE greatest(b1, b2) END) * interval '1 millisecond' END AS lb
FROM timed;
ANALYZE bench_scale.days;

-- step: drop indexes
-- The tables are filled without their indexes, which are then built once from the rows (much
-- faster than keeping them up to date row by row); each is built again from its own definition.
CREATE TABLE bench_scale.rebuild AS
SELECT c.conrelid::regclass::text AS tbl, c.conname::text AS name, 'constraint' AS kind,
       pg_get_constraintdef(c.oid) AS def
FROM pg_constraint AS c
WHERE c.conrelid = ANY (ARRAY['client_versions', 'client_routes', 'client_exposures', 'client_exposure_details',
                              'client_dry_runs', 'usage_daily', 'client_usage', 'usage_days',
                              'element_usage', 'element_clients', 'element_days', 'element_windows']::regclass[])
  AND c.contype IN ('p', 'u')
UNION ALL
SELECT i.indrelid::regclass::text, ic.relname::text, 'index', pg_get_indexdef(i.indexrelid)
FROM pg_index AS i JOIN pg_class AS ic ON ic.oid = i.indexrelid
WHERE i.indrelid = ANY (ARRAY['client_versions', 'client_routes', 'client_exposures', 'client_exposure_details',
                              'client_dry_runs', 'usage_daily', 'client_usage', 'usage_days',
                              'element_usage', 'element_clients', 'element_days', 'element_windows']::regclass[])
  AND NOT EXISTS (SELECT 1 FROM pg_constraint AS c WHERE c.conindid = i.indexrelid AND c.contype IN ('p', 'u'));

DO $$
DECLARE r RECORD;
BEGIN
    FOR r IN SELECT * FROM bench_scale.rebuild LOOP
        IF r.kind = 'constraint' THEN
            EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', r.tbl, r.name);
        ELSE
            EXECUTE format('DROP INDEX %I', r.name);
        END IF;
    END LOOP;
END $$;

-- step: usage_daily
-- Answered v1 requests per client, route (without its method: GET and PUT /users/{id} share a
-- row) and day, written in the order of the index by client.
SET max_parallel_workers_per_gather = 0;
INSERT INTO usage_daily (version, tenant, subject, route, day, requests, first_seen, last_seen)
SELECT 1, d.tenant, d.subject, v.route,
       :'today'::date - d.ago, v.requests, v.first_seen, v.last_seen
FROM bench_scale.days AS d
CROSS JOIN LATERAL (VALUES
    (0, (bench_scale.routes())[d.a + 1], d.ra + (CASE WHEN d.merged THEN d.rb ELSE 0 END),
     CASE WHEN d.merged THEN least(d.fa, d.fb) ELSE d.fa END, CASE WHEN d.merged THEN greatest(d.la, d.lb) ELSE d.la END),
    (1, (bench_scale.routes())[d.b + 1], d.rb, d.fb, d.lb)) AS v (slot, route, requests, first_seen, last_seen)
WHERE v.slot = 0 OR (d.b IS NOT NULL AND NOT d.merged);

-- step: client_routes
-- Per operation: the requests of the usage window, those from before it (older clients), and the
-- brownout refusals (counted as requests, never as usage), charged to the client's first operation.
CREATE UNLOGGED TABLE bench_scale.routes AS
SELECT a.i, a.k,
       a.requests
           + (CASE WHEN c.older THEN floor(a.requests * (0.5 + 2 * bench_scale.u(a.i * 10 + a.k, 40)))::bigint ELSE 0 END)
           + (CASE WHEN a.k = c.r0 THEN c.refusals ELSE 0 END) AS requests,
       CASE WHEN c.older
            THEN :'today'::date::timestamptz - (89 + c.older_days + floor(bench_scale.u(a.i * 10 + a.k, 41) * 30)::int) * interval '1 day'
                 + bench_scale.u(a.i * 10 + a.k, 42) * interval '1 day'
            ELSE a.first_seen END AS first_seen,
       a.last_seen
FROM (SELECT d.i, v.k, sum(v.requests) AS requests, min(v.first_seen) AS first_seen, max(v.last_seen) AS last_seen
      FROM bench_scale.days AS d
      CROSS JOIN LATERAL (VALUES (d.a, d.ra, d.fa, d.la), (d.b, d.rb, d.fb, d.lb)) AS v (k, requests, first_seen, last_seen)
      WHERE v.k IS NOT NULL
      GROUP BY d.i, v.k) AS a
JOIN bench_scale.clients AS c USING (i);
ANALYZE bench_scale.routes;

INSERT INTO client_routes (version, tenant, subject, method, route, requests, first_seen, last_seen)
SELECT 1, c.tenant, c.subject, o.method, o.route, r.requests, r.first_seen, r.last_seen
FROM bench_scale.routes AS r JOIN bench_scale.clients AS c USING (i) JOIN bench_scale.ops AS o USING (k);

-- step: exposures
-- An exposed client met one or two of the changes its own operations can meet, on a share of
-- that operation's requests, with one or two details each (whose requests add up to the change's).
CREATE UNLOGGED TABLE bench_scale.exposures AS
WITH ranked AS (
    SELECT r.i, r.k, cap.nth, cap.change, cap.details, r.requests AS route_requests, r.first_seen, r.last_seen,
           c.nexposures, r.i * 100 + r.k * 10 + cap.nth AS key,
           row_number() OVER (PARTITION BY r.i ORDER BY bench_scale.u(r.i * 100 + r.k * 10 + cap.nth, 50)) AS rank
    FROM bench_scale.routes AS r
    JOIN bench_scale.clients AS c USING (i)
    JOIN bench_scale.capable AS cap USING (k)
    WHERE c.exposed
), met AS (
    SELECT i, k, change, details, key, first_seen,
           greatest(1, floor(route_requests * (0.05 + 0.95 * bench_scale.u(key, 51))))::bigint AS requests,
           last_seen - (last_seen - first_seen) * (0.5 * bench_scale.u(key, 52) ^ 3) AS last_seen
    FROM ranked WHERE rank <= nexposures
)
SELECT m.*,
       -- The second detail's share (0: one detail only).
       CASE WHEN cardinality(details) > 1 AND bench_scale.u(key, 53) < :two_details
            THEN floor(requests * 0.5 * bench_scale.u(key, 54))::bigint ELSE 0 END AS second
FROM met AS m;

INSERT INTO client_exposures (version, tenant, subject, method, route, change, requests, last_seen)
SELECT 1, c.tenant, c.subject, o.method, o.route, e.change, e.requests, e.last_seen
FROM bench_scale.exposures AS e JOIN bench_scale.clients AS c USING (i) JOIN bench_scale.ops AS o USING (k);

INSERT INTO client_exposure_details (version, tenant, subject, method, route, change, detail, requests, last_seen)
SELECT 1, c.tenant, c.subject, o.method, o.route, e.change,
       e.details[(floor(bench_scale.u(e.key, 55) * cardinality(e.details))::int + d.nth) % cardinality(e.details) + 1],
       CASE WHEN d.nth = 0 THEN e.requests - e.second ELSE e.second END,
       CASE WHEN d.nth = 0 THEN e.last_seen
            ELSE e.last_seen - (e.last_seen - e.first_seen) * (0.5 * bench_scale.u(e.key, 56)) END
FROM bench_scale.exposures AS e
JOIN bench_scale.clients AS c USING (i)
JOIN bench_scale.ops AS o USING (k)
CROSS JOIN (VALUES (0), (1)) AS d (nth)
WHERE d.nth = 0 OR e.second > 0;

-- step: client_versions
-- v1: the sums of its operations; v2 (a share of the clients): its requests and dates, and the
-- last of them as v1's `last_successor`.
CREATE UNLOGGED TABLE bench_scale.v2 AS
SELECT i, tenant, subject, v2_first AS first_request,
       greatest(v2_first, :'now'::timestamptz - v2_last_u * interval '2 days') AS last_request,
       greatest(1, floor(rate * (5 + 50 * v2_requests_u)))::bigint AS requests
FROM bench_scale.clients WHERE on_v2;

INSERT INTO client_versions (version, tenant, subject, requests, last_request, rehearsals, last_rehearsal, refusals,
                             first_request, last_successor, changes_met)
SELECT 1, c.tenant, c.subject, r.requests, r.last_seen, c.rehearsals, c.last_rehearsal, c.refusals, r.first_seen,
       v2.last_request, coalesce(e.changes, 0)
FROM (SELECT i, sum(requests) AS requests, min(first_seen) AS first_seen, max(last_seen) AS last_seen
      FROM bench_scale.routes GROUP BY i) AS r
JOIN bench_scale.clients AS c USING (i)
LEFT JOIN bench_scale.v2 USING (i)
LEFT JOIN (SELECT i, count(DISTINCT change) AS changes FROM bench_scale.exposures GROUP BY i) AS e USING (i);

INSERT INTO client_versions (version, tenant, subject, requests, last_request, rehearsals, last_rehearsal, refusals,
                             first_request, last_successor, changes_met)
SELECT 2, tenant, subject, requests, last_request, 0, NULL, 0, first_request, NULL, 0 FROM bench_scale.v2;

-- step: client_dry_runs
-- A share of the clients tried their first operation dry on v1 and, half of them, on v2 (the
-- same operation where v2 has it, else GET /customers), in the last 30 days.
INSERT INTO client_dry_runs (version, tenant, subject, method, route, requests, first_seen, last_seen)
SELECT d.version, c.tenant, c.subject, o.method, o.route, 1 + floor(bench_scale.u(c.i * 10 + d.version, 60) * 20)::bigint,
       last_seen - bench_scale.u(c.i * 10 + d.version, 61) * interval '10 days', last_seen
FROM bench_scale.clients AS c
CROSS JOIN (VALUES (1), (2)) AS d (version)
CROSS JOIN LATERAL (SELECT :'now'::timestamptz - bench_scale.u(c.i * 10 + d.version, 62) * interval '30 days' AS last_seen) AS t
JOIN bench_scale.ops AS op0 ON op0.k = c.r0
JOIN bench_scale.ops AS o ON o.k = CASE WHEN d.version = 1 OR op0.in_v2 THEN c.r0 ELSE 2 END
WHERE c.dry_run AND (d.version = 1 OR c.dry_run_v2);

-- step: client_usage
-- recent[k]: the requests of the k days that end on the client's last day. Each active day's
-- running total (newest first) fills the entries up to the next older active day, so the array is
-- joined from the few active days' runs, not summed 90 times.
INSERT INTO client_usage (version, tenant, subject, last_at, last_day, recent)
SELECT 1, c.tenant, c.subject, r.last_at, :'today'::date - r.last_ago, r.recent
FROM (
    SELECT i, min(last_ago) AS last_ago, max(last_at) AS last_at,
           bench_scale.cat(array_fill(cum::bigint, ARRAY[least(coalesce(next_ago - last_ago, 90), 90) - (ago - last_ago)])
                           ORDER BY ago) AS recent
    FROM (
        SELECT i, ago, greatest(la, lb) AS last_at, sum(ra + coalesce(rb, 0)) OVER w AS cum,
               first_value(ago) OVER w AS last_ago, lead(ago) OVER w AS next_ago
        FROM bench_scale.days
        WINDOW w AS (PARTITION BY i ORDER BY ago)
    ) AS runs
    WHERE ago - last_ago < 90
    GROUP BY i
) AS r
JOIN bench_scale.clients AS c USING (i);

-- step: usage_days
INSERT INTO usage_days (version, day, requests)
SELECT 1, :'today'::date - ago, sum(ra + coalesce(rb, 0)) FROM bench_scale.days GROUP BY ago;

-- step: elements
-- Two elements of v2 deprecated (bench/scale.py declares them): every client sends `page` to
-- GET /api/v2/users (`offset-paging`) on each of its active days, a share of them the body
-- field `/age` (`age-input`) too, each a share of that day's requests, within the day's hours.
-- element_clients, element_days and element_windows are summed from those days, as a batch keeps them.
SET max_parallel_workers_per_gather = 0;
CREATE UNLOGGED TABLE bench_scale.element_uses AS
SELECT e.deprecation, d.tenant, d.subject, :'today'::date - d.ago AS day,
       greatest(1, floor(d.ra * e.share))::bigint AS requests, d.fa AS first_used, d.la AS last_used
FROM bench_scale.days AS d
CROSS JOIN (VALUES ('age-input', 0.2::float8), ('offset-paging', 0.5::float8)) AS e (deprecation, share)
WHERE e.deprecation = 'offset-paging' OR bench_scale.u(d.i, 70) < :age_input;

INSERT INTO element_usage (deprecation, kind, day, tenant, subject, requests, first_used, last_used)
SELECT deprecation, 'use', day, tenant, subject, requests, first_used, last_used FROM bench_scale.element_uses;

INSERT INTO element_clients (deprecation, tenant, subject, requests, first_used, last_used)
SELECT deprecation, tenant, subject, sum(requests), min(first_used), max(last_used)
FROM bench_scale.element_uses GROUP BY deprecation, tenant, subject;

INSERT INTO element_days (deprecation, day, requests)
SELECT deprecation, day, sum(requests) FROM bench_scale.element_uses GROUP BY deprecation, day;

-- Each client's windows of each element, as the client_usage step fills a version's.
INSERT INTO element_windows (deprecation, tenant, subject, last_at, last_day, recent)
SELECT deprecation, tenant, subject, max(last_at), :'today'::date - min(last_ago),
       bench_scale.cat(array_fill(cum::bigint, ARRAY[least(coalesce(next_ago - last_ago, 90), 90) - (ago - last_ago)])
                       ORDER BY ago)
FROM (
    SELECT deprecation, tenant, subject, ago, last_used AS last_at, sum(requests) OVER w AS cum,
           first_value(ago) OVER w AS last_ago, lead(ago) OVER w AS next_ago
    FROM (SELECT *, :'today'::date - day AS ago FROM bench_scale.element_uses) AS u
    WINDOW w AS (PARTITION BY deprecation, tenant, subject ORDER BY ago)
) AS runs
WHERE ago - last_ago < 90
GROUP BY deprecation, tenant, subject;

-- step: build indexes
DO $$
DECLARE r RECORD; started TIMESTAMPTZ;
BEGIN
    FOR r IN SELECT * FROM bench_scale.rebuild ORDER BY tbl, kind DESC LOOP
        started := clock_timestamp();
        IF r.kind = 'constraint' THEN
            EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I %s', r.tbl, r.name, r.def);
        ELSE
            EXECUTE r.def;
        END IF;
        RAISE NOTICE 'built % in % s', r.name, to_char(extract(epoch FROM clock_timestamp() - started), 'FM9990.0');
    END LOOP;
END $$;

-- step: drop the plan
DROP SCHEMA bench_scale CASCADE;

-- step: vacuum
VACUUM ANALYZE;
