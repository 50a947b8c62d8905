-- Users: an integer id for v1, a UUID for v2, always scoped by tenant.
-- Timestamps are Unix seconds; AUTOINCREMENT so a deleted id is never handed out again.
CREATE TABLE users (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid        TEXT    NOT NULL,
    tenant      TEXT    NOT NULL,
    name        TEXT    NOT NULL,
    email       TEXT    NOT NULL,
    -- The e-mail as uniqueness compares it (lower case), computed by the service.
    email_key   TEXT    NOT NULL,
    age         INTEGER,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    version     INTEGER NOT NULL DEFAULT 1,
    CONSTRAINT users_uuid_key UNIQUE (uuid),
    CONSTRAINT users_tenant_email_key UNIQUE (tenant, email_key)
);

CREATE INDEX users_tenant_id_idx ON users (tenant, id);
