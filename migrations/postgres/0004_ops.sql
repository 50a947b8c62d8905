-- Maintenance mode, shared by every instance (each polls it every few seconds).
CREATE TABLE maintenance (
    id            INTEGER     PRIMARY KEY CHECK (id = 1),
    enabled       BOOLEAN     NOT NULL,
    retry_after   INTEGER     NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL
);

-- Requests served by a deprecated version, per client, route and day: each instance adds its
-- buffered counts in batches.
CREATE TABLE usage_daily (
    version     INTEGER     NOT NULL,
    tenant      TEXT        NOT NULL,
    subject     TEXT        NOT NULL,
    route       TEXT        NOT NULL,
    day         DATE        NOT NULL,
    requests    BIGINT      NOT NULL,
    first_seen  TIMESTAMPTZ NOT NULL,
    last_seen   TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (version, day, tenant, subject, route)
);
