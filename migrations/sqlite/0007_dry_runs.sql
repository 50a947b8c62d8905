-- Each client's dry runs (X-API-Dry-Run: true) per operation of any version, kept apart from
-- its requests: a dry run is never usage nor a request of the version.
CREATE TABLE client_dry_runs (
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
