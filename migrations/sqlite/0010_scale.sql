-- The migration tools at an API's scale (README "At an API's scale"): what each answer needs is
-- kept as the counts are written. SQLite compares text byte by byte, as the service does.

-- Each client's summary per version: the inputs of its status and of its place in the at-risk
-- order. `last_successor`: its last request to the version that follows (Unix seconds);
-- `changes_met`: the distinct changes of the successor its requests met.
ALTER TABLE client_versions ADD COLUMN last_successor INTEGER;
ALTER TABLE client_versions ADD COLUMN changes_met INTEGER NOT NULL DEFAULT 0;
-- The at-risk order: 0 met a change and never rehearsed, 1 met a change and rehearsed, 2 and 3
-- the same without a change met; then most requests first (`order_requests` ascending), then by
-- tenant and subject.
ALTER TABLE client_versions ADD COLUMN risk INTEGER GENERATED ALWAYS AS (
    (CASE WHEN changes_met > 0 THEN 0 ELSE 2 END) + (CASE WHEN last_rehearsal IS NULL THEN 0 ELSE 1 END)
) VIRTUAL;
ALTER TABLE client_versions ADD COLUMN order_requests INTEGER GENERATED ALWAYS AS (-requests) VIRTUAL;

-- Versions are numbered one after the other: the successor of N is N + 1.
UPDATE client_versions SET last_successor = (
    SELECT new.last_request FROM client_versions AS new
    WHERE new.version = client_versions.version + 1
      AND new.tenant = client_versions.tenant AND new.subject = client_versions.subject);
UPDATE client_versions SET changes_met = (
    SELECT count(DISTINCT change) FROM client_exposures AS e
    WHERE e.version = client_versions.version
      AND e.tenant = client_versions.tenant AND e.subject = client_versions.subject);

CREATE INDEX client_versions_at_risk ON client_versions (version, risk, order_requests, tenant, subject);

-- Requests a version answered per day, over every client: readiness's and usage's totals.
CREATE TABLE usage_days (
    version   INTEGER NOT NULL,
    day       TEXT    NOT NULL,
    requests  INTEGER NOT NULL,
    PRIMARY KEY (version, day)
);
INSERT INTO usage_days (version, day, requests)
SELECT version, day, sum(requests) FROM usage_daily GROUP BY version, day;

-- One client's usage, and pages of clients, read through an index.
CREATE INDEX usage_daily_by_client ON usage_daily (version, tenant, subject, day);

-- Each batch of counts an instance wrote, by its id: a batch whose commit went unanswered is
-- written again only if it is not here.
CREATE TABLE flushed_batches (
    id          TEXT    PRIMARY KEY,
    written_at  INTEGER NOT NULL
);
CREATE INDEX flushed_batches_by_age ON flushed_batches (written_at);

-- Requests consult only the brownouts still in force or to come.
CREATE INDEX brownouts_in_force ON brownouts (version, ends_at) WHERE ended_at IS NULL;
