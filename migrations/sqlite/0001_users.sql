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

-- One index per sort field, each ending with the id tie-break.
CREATE INDEX users_tenant_id_idx ON users (tenant, id);
CREATE INDEX users_tenant_name_idx ON users (tenant, name, id);
CREATE INDEX users_tenant_age_idx ON users (tenant, age, id);
CREATE INDEX users_tenant_created_idx ON users (tenant, created_at, id);
CREATE INDEX users_tenant_updated_idx ON users (tenant, updated_at, id);
