-- Users: an integer id for v1, a UUID for v2, always scoped by tenant.
CREATE TABLE users (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    uuid        UUID        NOT NULL,
    tenant      TEXT        NOT NULL,
    name        TEXT        NOT NULL,
    email       TEXT        NOT NULL,
    -- The e-mail as uniqueness compares it (lower case), computed by the service.
    email_key   TEXT        NOT NULL,
    age         INTEGER,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL,
    version     BIGINT      NOT NULL DEFAULT 1,
    CONSTRAINT users_uuid_key UNIQUE (uuid),
    CONSTRAINT users_tenant_email_key UNIQUE (tenant, email_key)
);

CREATE INDEX users_tenant_id_idx ON users (tenant, id);
