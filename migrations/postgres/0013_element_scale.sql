-- The CSV of every client (README "Everyone's migration") reads each client's uses of elements
-- with its other rows, in (tenant, subject) order.
CREATE INDEX element_clients_by_client ON element_clients (tenant, subject);

-- Each client's uses of an element as `client_usage` keeps a version's (0010_scale.sql): the
-- last use, and recent[k], its uses in the k days that end on `last_day` (k = 1 … 90). An
-- element's readiness ranks every client by its uses in any window from this one row.
CREATE TABLE element_windows (
    deprecation TEXT        COLLATE "C" NOT NULL,
    tenant      TEXT        COLLATE "C" NOT NULL,
    subject     TEXT        COLLATE "C" NOT NULL,
    last_at     TIMESTAMPTZ NOT NULL,
    last_day    DATE        NOT NULL,
    recent      BIGINT[]    NOT NULL,
    PRIMARY KEY (deprecation, tenant, subject)
);
CREATE INDEX element_windows_by_day ON element_windows (deprecation, last_day);

-- From the uses kept. Each client's active days, newest first, with the running total of their
-- uses: the total up to a day fills the windows from that day to the next older active day, so
-- `recent` is the few runs of each client joined end to end (no cell per client and day to sort).
CREATE AGGREGATE tandem_joined(ANYCOMPATIBLEARRAY) (SFUNC = array_cat, STYPE = ANYCOMPATIBLEARRAY, INITCOND = '{}');
INSERT INTO element_windows (deprecation, tenant, subject, last_at, last_day, recent)
SELECT deprecation, tenant, subject, max(last_at), max(last_day),
       tandem_joined(array_fill(cum, ARRAY[least(coalesce(next_ago, 90), 90) - ago]) ORDER BY ago)
FROM (
    SELECT deprecation, tenant, subject, last_at, last_day, ago, sum(n) OVER w AS cum, lead(ago) OVER w AS next_ago
    FROM (
        SELECT deprecation, tenant, subject, n, last_used AS last_at, last_day, last_day - day AS ago
        FROM (
            SELECT deprecation, tenant, subject, day, CAST(sum(requests) AS BIGINT) AS n, max(last_used) AS last_used,
                   max(day) OVER (PARTITION BY deprecation, tenant, subject) AS last_day
            FROM element_usage WHERE kind = 'use' GROUP BY deprecation, tenant, subject, day
        ) AS days
    ) AS aged
    WHERE ago < 90
    WINDOW w AS (PARTITION BY deprecation, tenant, subject ORDER BY ago)
) AS runs
GROUP BY deprecation, tenant, subject;
DROP AGGREGATE tandem_joined(ANYCOMPATIBLEARRAY);
-- The readiness's plans count on the table's size from the first question on.
ANALYZE element_windows;
