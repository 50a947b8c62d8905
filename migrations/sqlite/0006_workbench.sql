-- The migration workbench (CONTRACT §9). Times are Unix seconds, as in 0004_ops.
CREATE TABLE client_versions (
    version         INTEGER NOT NULL,
    tenant          TEXT    NOT NULL,
    subject         TEXT    NOT NULL,
    requests        INTEGER NOT NULL,
    last_request    INTEGER,
    rehearsals      INTEGER NOT NULL,
    last_rehearsal  INTEGER,
    refusals        INTEGER NOT NULL,
    PRIMARY KEY (version, tenant, subject)
);

CREATE TABLE client_routes (
    version     INTEGER NOT NULL,
    tenant      TEXT    NOT NULL,
    subject     TEXT    NOT NULL,
    method      TEXT    NOT NULL,
    route       TEXT    NOT NULL,
    requests    INTEGER NOT NULL,
    first_seen  INTEGER NOT NULL,
    last_seen   INTEGER NOT NULL,
    PRIMARY KEY (version, tenant, subject, method, route)
);

CREATE TABLE client_exposures (
    version     INTEGER NOT NULL,
    tenant      TEXT    NOT NULL,
    subject     TEXT    NOT NULL,
    method      TEXT    NOT NULL,
    route       TEXT    NOT NULL,
    change      TEXT    NOT NULL,
    requests    INTEGER NOT NULL,
    last_seen   INTEGER NOT NULL,
    PRIMARY KEY (version, tenant, subject, method, route, change)
);

CREATE TABLE tenant_versions (
    tenant      TEXT    PRIMARY KEY,
    version     INTEGER,
    previous    INTEGER,
    changed_at  INTEGER NOT NULL,
    changed_by  TEXT    NOT NULL
);

CREATE TABLE brownouts (
    id          TEXT    PRIMARY KEY,
    version     INTEGER NOT NULL,
    starts_at   INTEGER NOT NULL,
    ends_at     INTEGER NOT NULL,
    tenant      TEXT,
    subject     TEXT,
    created_at  INTEGER NOT NULL,
    created_by  TEXT    NOT NULL,
    ended_at    INTEGER,
    CHECK (starts_at < ends_at),
    CHECK (subject IS NULL OR tenant IS NOT NULL)
);

CREATE TABLE audit (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    at      INTEGER NOT NULL,
    actor   TEXT    NOT NULL,
    action  TEXT    NOT NULL,
    target  TEXT    NOT NULL,
    before  TEXT,
    after   TEXT
);
