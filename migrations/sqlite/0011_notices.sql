-- Notices to clients (README "Notices to clients"): where each client's owners are told, what
-- is to be told (an outbox, written before anything is sent), and the sunsets clients accepted.
-- Times are Unix seconds.

CREATE TABLE notice_endpoints (
    tenant       TEXT    NOT NULL,
    subject      TEXT    NOT NULL,
    url          TEXT    NOT NULL,
    format       TEXT    NOT NULL,
    secret       TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    disabled_at  INTEGER,
    PRIMARY KEY (tenant, subject)
);

CREATE TABLE notices (
    id                   TEXT    PRIMARY KEY,
    event                TEXT    NOT NULL UNIQUE,
    type                 TEXT    NOT NULL,
    version              INTEGER NOT NULL,
    tenant               TEXT    NOT NULL,
    subject              TEXT    NOT NULL,
    endpoint_tenant      TEXT    NOT NULL,
    endpoint_subject     TEXT    NOT NULL,
    endpoint_created_at  INTEGER NOT NULL,
    body                 TEXT    NOT NULL,
    created_at           INTEGER NOT NULL,
    status               TEXT    NOT NULL,
    attempts             INTEGER NOT NULL,
    next_attempt_at      INTEGER,
    last_attempt_at      INTEGER,
    last_status          INTEGER,
    leased_until         INTEGER
);
CREATE INDEX notices_due ON notices (next_attempt_at) WHERE status = 'pending';
CREATE INDEX notices_of_client ON notices (tenant, subject, created_at, id);
CREATE INDEX notices_newest ON notices (created_at, id);

CREATE TABLE sunset_acknowledgements (
    version          INTEGER NOT NULL,
    tenant           TEXT    NOT NULL,
    subject          TEXT    NOT NULL,
    sunset_at        INTEGER NOT NULL,
    acknowledged_at  INTEGER NOT NULL,
    PRIMARY KEY (version, tenant, subject)
);
CREATE INDEX sunset_acknowledgements_by_date ON sunset_acknowledgements (version, sunset_at);
