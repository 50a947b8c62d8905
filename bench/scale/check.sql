-- Consistency of a generated scale database, for `bench/scale.py --verify`. Each check (from one
-- `-- check:` line to the next) is one query that counts the rows breaking a rule: 0 passes.
-- Variables (-v): `now` and `today`, as the generator had them.

-- check: usage_days holds the sum of usage_daily per version and day
SELECT count(*)
FROM (SELECT version, day, sum(requests) AS requests FROM usage_daily GROUP BY version, day) AS daily
FULL JOIN usage_days AS d USING (version, day)
WHERE daily.requests IS DISTINCT FROM d.requests;

-- check: client_usage is usage_daily recomputed: last_at, last_day, and each step recent[k] - recent[k-1] the day k-1 before the last
WITH last AS (
    SELECT version, tenant, subject, max(day) AS last_day, max(last_seen) AS last_at
    FROM usage_daily GROUP BY version, tenant, subject
), days AS (
    SELECT u.version, u.tenant, u.subject, u.day, sum(u.requests) AS requests
    FROM usage_daily AS u JOIN last AS l USING (version, tenant, subject)
    WHERE u.day > l.last_day - 90
    GROUP BY u.version, u.tenant, u.subject, u.day
), steps AS (
    SELECT c.version, c.tenant, c.subject, c.last_day - (k - 1) AS day,
           c.recent[k] - coalesce(c.recent[k - 1], 0) AS requests
    FROM client_usage AS c CROSS JOIN generate_series(1, 90) AS k
)
SELECT (SELECT count(*) FROM last AS l FULL JOIN client_usage AS c USING (version, tenant, subject)
        WHERE (l.last_day, l.last_at) IS DISTINCT FROM (c.last_day, c.last_at))
     + (SELECT count(*) FROM days AS d FULL JOIN (SELECT * FROM steps WHERE requests <> 0) AS s
            USING (version, tenant, subject, day)
        WHERE d.requests IS DISTINCT FROM s.requests);

-- check: client_usage as migration 0010's own statement computes it (its first 300 subjects)
WITH last AS (
    SELECT version, tenant, subject, max(day) AS last_day, max(last_seen) AS last_at
    FROM usage_daily WHERE subject <= 'client-0000300' GROUP BY version, tenant, subject
), ago AS (
    SELECT u.version, u.tenant, u.subject, l.last_day - u.day AS ago, sum(u.requests) AS n
    FROM usage_daily AS u JOIN last AS l USING (version, tenant, subject)
    WHERE u.day > l.last_day - 90
    GROUP BY u.version, u.tenant, u.subject, l.last_day - u.day
), migrated AS (
    SELECT l.version, l.tenant, l.subject, l.last_at, l.last_day,
           ARRAY(SELECT (SELECT coalesce(sum(a.n), 0) FROM ago AS a
                         WHERE a.version = l.version AND a.tenant = l.tenant AND a.subject = l.subject AND a.ago < k)
                 FROM generate_series(1, 90) AS k ORDER BY k) AS recent
    FROM last AS l
)
SELECT count(*)
FROM migrated AS m LEFT JOIN client_usage AS c USING (version, tenant, subject)
WHERE (m.last_at, m.last_day, m.recent::bigint[]) IS DISTINCT FROM (c.last_at, c.last_day, c.recent);

-- check: client_usage: 90 entries, never falling, recent[90] the client's whole window
SELECT count(*) FROM client_usage
WHERE cardinality(recent) <> 90
   OR EXISTS (SELECT 1 FROM generate_series(2, 90) AS k WHERE recent[k] < recent[k - 1])
   OR recent[1] < 1;

-- check: changes_met counts the distinct changes of the client's exposures
SELECT count(*)
FROM client_versions AS c
FULL JOIN (SELECT version, tenant, subject, count(DISTINCT change) AS n FROM client_exposures
           GROUP BY version, tenant, subject) AS e USING (version, tenant, subject)
WHERE c.changes_met IS DISTINCT FROM coalesce(e.n, 0);

-- check: v1's requests, first and last request are the sums of its operations
SELECT count(*)
FROM client_versions AS c
FULL JOIN (SELECT version, tenant, subject, sum(requests) AS requests, min(first_seen) AS first_seen,
                  max(last_seen) AS last_seen
           FROM client_routes GROUP BY version, tenant, subject) AS r USING (version, tenant, subject)
WHERE coalesce(c.version, r.version) = 1
  AND (c.requests, c.first_request, c.last_request) IS DISTINCT FROM (r.requests, r.first_seen, r.last_seen);

-- check: last_successor is the client's last v2 request (NULL without one); v2 rows have none
SELECT count(*)
FROM client_versions AS old
LEFT JOIN client_versions AS new ON new.version = old.version + 1 AND new.tenant = old.tenant AND new.subject = old.subject
WHERE old.last_successor IS DISTINCT FROM new.last_request;

-- check: counts and dates in order (refusals within requests, first before last, nothing after now)
SELECT count(*) FROM client_versions
WHERE refusals > requests OR rehearsals < 0 OR (rehearsals > 0) <> (last_rehearsal IS NOT NULL)
   OR first_request > last_request OR last_request > :'now'::timestamptz OR last_rehearsal > :'now'::timestamptz
   OR last_successor > :'now'::timestamptz OR requests < 1;

-- check: exposures are on operations the client calls, within their requests and dates
SELECT count(*)
FROM client_exposures AS e
LEFT JOIN client_routes AS r USING (version, tenant, subject, method, route)
WHERE r.requests IS NULL OR e.requests > r.requests OR e.requests < 1
   OR e.last_seen NOT BETWEEN r.first_seen AND r.last_seen;

-- check: each exposure has 1 to 20 details whose requests add up to its own, none seen later
SELECT count(*)
FROM client_exposures AS e
FULL JOIN (SELECT version, tenant, subject, method, route, change, sum(requests) AS requests, count(*) AS n,
                  max(last_seen) AS last_seen, min(requests) AS least
           FROM client_exposure_details GROUP BY version, tenant, subject, method, route, change) AS d
    USING (version, tenant, subject, method, route, change)
WHERE d.requests IS DISTINCT FROM e.requests OR d.n > 20 OR d.last_seen > e.last_seen OR d.least < 1;

-- check: usage_daily rows lie on their day, inside the 90 days up to today, never after now
SELECT count(*) FROM usage_daily
WHERE first_seen > last_seen OR requests < 1 OR last_seen > :'now'::timestamptz
   OR (first_seen AT TIME ZONE 'UTC')::date <> day OR (last_seen AT TIME ZONE 'UTC')::date <> day
   OR day > :'today'::date OR day <= :'today'::date - 90;

-- check: usage is v1's answered requests: within requests minus refusals, equal for clients first seen in the window
SELECT count(*)
FROM client_versions AS c
LEFT JOIN (SELECT version, tenant, subject, sum(requests) AS requests FROM usage_daily
           GROUP BY version, tenant, subject) AS u USING (version, tenant, subject)
WHERE c.version = 1
  AND (u.requests IS NULL OR u.requests > c.requests - c.refusals
       OR (c.first_request >= :'today'::date - 89 AND u.requests <> c.requests - c.refusals));

-- check: every route of usage_daily is one a client_routes operation of that client has
SELECT count(*)
FROM (SELECT DISTINCT version, tenant, subject, route FROM usage_daily) AS u
WHERE NOT EXISTS (SELECT 1 FROM client_routes AS r
                  WHERE (r.version, r.tenant, r.subject, r.route) = (u.version, u.tenant, u.subject, u.route));

-- check: dry runs are version 1 or 2, within the last 30 days
SELECT count(*) FROM client_dry_runs
WHERE version NOT IN (1, 2) OR requests < 1 OR first_seen > last_seen OR last_seen > :'now'::timestamptz
   OR last_seen < :'now'::timestamptz - interval '30 days';

-- check: element_clients and element_days hold the sums of element_usage's uses
SELECT (SELECT count(*)
        FROM (SELECT deprecation, tenant, subject, sum(requests) AS requests, min(first_used) AS first_used,
                     max(last_used) AS last_used
              FROM element_usage WHERE kind = 'use' GROUP BY deprecation, tenant, subject) AS u
        FULL JOIN element_clients AS c USING (deprecation, tenant, subject)
        WHERE (u.requests, u.first_used, u.last_used) IS DISTINCT FROM (c.requests, c.first_used, c.last_used))
     + (SELECT count(*)
        FROM (SELECT deprecation, day, sum(requests) AS requests FROM element_usage WHERE kind = 'use'
              GROUP BY deprecation, day) AS u
        FULL JOIN element_days AS d USING (deprecation, day)
        WHERE u.requests IS DISTINCT FROM d.requests);

-- check: element_windows is element_usage's uses recomputed: last_at, last_day, and recent[90] the uses of the 90 days to last_day
WITH days AS (
    SELECT deprecation, tenant, subject, day, sum(requests) AS n, max(last_used) AS last_used
    FROM element_usage WHERE kind = 'use' GROUP BY deprecation, tenant, subject, day
), last AS (
    SELECT deprecation, tenant, subject, max(day) AS last_day, max(last_used) AS last_at FROM days
    GROUP BY deprecation, tenant, subject
), windowed AS (
    SELECT l.deprecation, l.tenant, l.subject, l.last_day, l.last_at, sum(d.n) AS n90
    FROM last AS l JOIN days AS d USING (deprecation, tenant, subject)
    WHERE d.day > l.last_day - 90
    GROUP BY l.deprecation, l.tenant, l.subject, l.last_day, l.last_at
)
SELECT count(*) FROM windowed AS w FULL JOIN element_windows AS e USING (deprecation, tenant, subject)
WHERE (w.last_day, w.last_at, w.n90) IS DISTINCT FROM (e.last_day, e.last_at, e.recent[90]);
