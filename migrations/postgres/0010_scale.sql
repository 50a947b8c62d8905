-- The migration tools at an API's scale (README "At an API's scale"): what each answer needs is
-- kept as the counts are written, so no answer reads every row of every client.

-- Clients are ordered and compared byte by byte, as the service compares them, whatever the
-- database's locale.
ALTER TABLE client_versions
    ALTER COLUMN tenant TYPE TEXT COLLATE "C",
    ALTER COLUMN subject TYPE TEXT COLLATE "C";
ALTER TABLE usage_daily
    ALTER COLUMN tenant TYPE TEXT COLLATE "C",
    ALTER COLUMN subject TYPE TEXT COLLATE "C",
    ALTER COLUMN route TYPE TEXT COLLATE "C";

-- Each client's summary per version: the inputs of its status and of its place in the at-risk
-- order. `last_successor`: its last request to the version that follows (the status reads it
-- beside `last_request`); `changes_met`: the distinct changes of the successor its requests met.
ALTER TABLE client_versions
    ADD COLUMN last_successor TIMESTAMPTZ,
    ADD COLUMN changes_met INTEGER NOT NULL DEFAULT 0;
-- The at-risk order: 0 met a change and never rehearsed, 1 met a change and rehearsed, 2 and 3
-- the same without a change met; then most requests first (`order_requests` ascending), then by
-- tenant and subject. Every column ascending, so a cursor is one row comparison on the index.
ALTER TABLE client_versions
    ADD COLUMN risk SMALLINT GENERATED ALWAYS AS (
        (CASE WHEN changes_met > 0 THEN 0 ELSE 2 END) + (CASE WHEN last_rehearsal IS NULL THEN 0 ELSE 1 END)
    ) STORED,
    ADD COLUMN order_requests BIGINT GENERATED ALWAYS AS (-requests) STORED;

-- Versions are numbered one after the other: the successor of N is N + 1.
UPDATE client_versions AS old SET last_successor = new.last_request
    FROM client_versions AS new
    WHERE new.version = old.version + 1 AND new.tenant = old.tenant AND new.subject = old.subject;
UPDATE client_versions AS c SET changes_met = met.n
    FROM (SELECT version, tenant, subject, count(DISTINCT change) AS n FROM client_exposures
          GROUP BY version, tenant, subject) AS met
    WHERE met.version = c.version AND met.tenant = c.tenant AND met.subject = c.subject;

CREATE INDEX client_versions_at_risk ON client_versions (version, risk, order_requests, tenant, subject);

-- Each client's usage of a version: when it last answered the client, and recent[k], the
-- requests it answered in the k days that end on `last_day` (k = 1 … 90). Readiness ranks every
-- client by its requests in any window of up to 90 days from this one row.
CREATE TABLE client_usage (
    version   INTEGER     NOT NULL,
    tenant    TEXT        COLLATE "C" NOT NULL,
    subject   TEXT        COLLATE "C" NOT NULL,
    last_at   TIMESTAMPTZ NOT NULL,
    last_day  DATE        NOT NULL,
    recent    BIGINT[]    NOT NULL,
    PRIMARY KEY (version, tenant, subject)
);
CREATE INDEX client_usage_by_day ON client_usage (version, last_day);

-- `recent` after `n` more requests on `day`, for a client last answered on `last_day`: shifted by
-- the days between, and `n` added to every window that holds `day`.
CREATE FUNCTION tandem_recent(recent BIGINT[], last_day DATE, day DATE, n BIGINT) RETURNS BIGINT[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT array_agg(
        (CASE WHEN k > shift THEN coalesce(recent[k - shift], 0) ELSE 0 END)
        + (CASE WHEN k > late THEN n ELSE 0 END)
        ORDER BY k)
    FROM (SELECT greatest(day - last_day, 0) AS shift, greatest(last_day - day, 0) AS late) AS gap,
         generate_series(1, 90) AS k
$$;

-- Each client's windows from the usage kept: its requests per day counted back from its last
-- day, summed cumulatively (one pass over the usage, and 90 cells per client).
WITH days AS (
    SELECT version, tenant, subject, day, sum(requests) AS n, max(last_seen) AS last_seen
    FROM usage_daily GROUP BY version, tenant, subject, day
), last AS (
    SELECT version, tenant, subject, max(day) AS last_day, max(last_seen) AS last_at
    FROM days GROUP BY version, tenant, subject
), cells AS (
    SELECT l.version, l.tenant, l.subject, k,
           sum(coalesce(d.n, 0)) OVER (PARTITION BY l.version, l.tenant, l.subject ORDER BY k) AS recent
    FROM last AS l
    CROSS JOIN generate_series(1, 90) AS k
    LEFT JOIN days AS d
        ON d.version = l.version AND d.tenant = l.tenant AND d.subject = l.subject AND d.day = l.last_day - (k - 1)
)
INSERT INTO client_usage (version, tenant, subject, last_at, last_day, recent)
SELECT l.version, l.tenant, l.subject, l.last_at, l.last_day, array_agg(c.recent::BIGINT ORDER BY c.k)
FROM last AS l JOIN cells AS c USING (version, tenant, subject)
GROUP BY l.version, l.tenant, l.subject, l.last_at, l.last_day;

-- Requests a version answered per day, over every client: readiness's and usage's totals.
CREATE TABLE usage_days (
    version   INTEGER NOT NULL,
    day       DATE    NOT NULL,
    requests  BIGINT  NOT NULL,
    PRIMARY KEY (version, day)
);
INSERT INTO usage_days (version, day, requests)
SELECT version, day, sum(requests) FROM usage_daily GROUP BY version, day;

-- One client's usage, and pages of clients, read through an index.
CREATE INDEX usage_daily_by_client ON usage_daily (version, tenant, subject, day);

-- Each batch of counts an instance wrote, by its id: a batch whose commit went unanswered is
-- written again only if it is not here (README "At an API's scale").
CREATE TABLE flushed_batches (
    id          UUID        PRIMARY KEY,
    written_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX flushed_batches_by_age ON flushed_batches (written_at);

-- Requests consult only the brownouts still in force or to come.
CREATE INDEX brownouts_in_force ON brownouts (version, ends_at) WHERE ended_at IS NULL;
