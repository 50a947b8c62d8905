-- Maintenance mode, shared by every instance (each polls it every few seconds).
CREATE TABLE maintenance (
    id            INTEGER PRIMARY KEY CHECK (id = 1),
    enabled       INTEGER NOT NULL,
    retry_after   INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);

-- Requests served by a deprecated version, per client, route and day (days as 'YYYY-MM-DD').
CREATE TABLE usage_daily (
    version     INTEGER NOT NULL,
    tenant      TEXT    NOT NULL,
    subject     TEXT    NOT NULL,
    route       TEXT    NOT NULL,
    day         TEXT    NOT NULL,
    requests    INTEGER NOT NULL,
    first_seen  INTEGER NOT NULL,
    last_seen   INTEGER NOT NULL,
    PRIMARY KEY (version, day, tenant, subject, route)
);
