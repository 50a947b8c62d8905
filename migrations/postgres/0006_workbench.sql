-- The migration workbench (CONTRACT §9). What each client (a tenant and a token subject) does
-- on each version: every instance adds its buffered counts in batches.
CREATE TABLE client_versions (
    version         INTEGER     NOT NULL,
    tenant          TEXT        NOT NULL,
    subject         TEXT        NOT NULL,
    -- Requests other than rehearsals, and the last of them.
    requests        BIGINT      NOT NULL,
    last_request    TIMESTAMPTZ,
    rehearsals      BIGINT      NOT NULL,
    last_rehearsal  TIMESTAMPTZ,
    -- Requests refused by a brownout.
    refusals        BIGINT      NOT NULL,
    PRIMARY KEY (version, tenant, subject)
);

-- Each client's requests per operation of a version.
CREATE TABLE client_routes (
    version     INTEGER     NOT NULL,
    tenant      TEXT        NOT NULL,
    subject     TEXT        NOT NULL,
    method      TEXT        NOT NULL,
    route       TEXT        NOT NULL,
    requests    BIGINT      NOT NULL,
    first_seen  TIMESTAMPTZ NOT NULL,
    last_seen   TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (version, tenant, subject, method, route)
);

-- The successor's changes each client's requests met, per operation.
CREATE TABLE client_exposures (
    version     INTEGER     NOT NULL,
    tenant      TEXT        NOT NULL,
    subject     TEXT        NOT NULL,
    method      TEXT        NOT NULL,
    route       TEXT        NOT NULL,
    change      TEXT        NOT NULL,
    requests    BIGINT      NOT NULL,
    last_seen   TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (version, tenant, subject, method, route, change)
);

-- A tenant's default version; NULL: back to TANDEM_DEFAULT_VERSION (the row keeps who did it).
CREATE TABLE tenant_versions (
    tenant      TEXT        PRIMARY KEY,
    version     INTEGER,
    previous    INTEGER,
    changed_at  TIMESTAMPTZ NOT NULL,
    changed_by  TEXT        NOT NULL
);

-- Brownouts aimed at everyone, a tenant, or one subject of a tenant.
CREATE TABLE brownouts (
    id          UUID        PRIMARY KEY,
    version     INTEGER     NOT NULL,
    starts_at   TIMESTAMPTZ NOT NULL,
    ends_at     TIMESTAMPTZ NOT NULL,
    tenant      TEXT,
    subject     TEXT,
    created_at  TIMESTAMPTZ NOT NULL,
    created_by  TEXT        NOT NULL,
    ended_at    TIMESTAMPTZ,
    CHECK (starts_at < ends_at),
    CHECK (subject IS NULL OR tenant IS NOT NULL)
);

-- Every change made through /admin/…, newest read first.
CREATE TABLE audit (
    id      BIGSERIAL   PRIMARY KEY,
    at      TIMESTAMPTZ NOT NULL,
    actor   TEXT        NOT NULL,
    action  TEXT        NOT NULL,
    target  TEXT        NOT NULL,
    before  TEXT,
    after   TEXT
);
