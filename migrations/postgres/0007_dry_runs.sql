-- Each client's dry runs (X-API-Dry-Run: true) per operation of any version, kept apart from
-- its requests: a dry run is never usage nor a request of the version.
CREATE TABLE client_dry_runs (
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
