-- Users: an integer id for v1, a UUID for v2, always scoped by tenant.
CREATE TABLE users (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    uuid        UUID        NOT NULL,
    tenant      TEXT        NOT NULL,
    -- "C": byte order, the same order SQLite gives, whatever the server's locale.
    name        TEXT COLLATE "C" NOT NULL,
    email       TEXT COLLATE "C" NOT NULL,
    -- The e-mail as uniqueness and sorting compare it (lower case), computed by the service.
    email_key   TEXT COLLATE "C" NOT NULL,
    age         INTEGER,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL,
    version     BIGINT      NOT NULL DEFAULT 1,
    CONSTRAINT users_uuid_key UNIQUE (uuid),
    CONSTRAINT users_tenant_email_key UNIQUE (tenant, email_key)
);

-- One index per sort field, each ending with the id tie-break, so any order and any cursor
-- depth is an index range scan.
CREATE INDEX users_tenant_id_idx ON users (tenant, id);
CREATE INDEX users_tenant_name_idx ON users (tenant, name, id);
CREATE INDEX users_tenant_age_idx ON users (tenant, age, id);
CREATE INDEX users_tenant_created_idx ON users (tenant, created_at, id);
CREATE INDEX users_tenant_updated_idx ON users (tenant, updated_at, id);
