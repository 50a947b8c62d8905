-- Customers, the import reports that created them, and exact counts kept in the same
-- transaction as every write, so a page's totalElements never counts the table.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE imports (
    id                      UUID        PRIMARY KEY,
    tenant                  TEXT        NOT NULL,
    status                  TEXT        NOT NULL,
    received                BIGINT      NOT NULL,
    created                 BIGINT      NOT NULL,
    skipped                 BIGINT      NOT NULL,
    -- At most 100 row errors, as JSON.
    errors                  TEXT        NOT NULL,
    created_at              TIMESTAMPTZ NOT NULL,
    idempotency_scope       TEXT,
    idempotency_fingerprint TEXT,
    CONSTRAINT imports_tenant_idempotency_key UNIQUE (tenant, idempotency_scope)
);

CREATE TABLE customers (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant          TEXT             NOT NULL,
    customer_number TEXT COLLATE "C" NOT NULL,
    name            TEXT COLLATE "C" NOT NULL,
    email           TEXT COLLATE "C" NOT NULL,
    phone           TEXT COLLATE "C" NOT NULL,
    branch_code     TEXT COLLATE "C" NOT NULL,
    created_date    TIMESTAMPTZ      NOT NULL,
    import_id       UUID REFERENCES imports (id),
    CONSTRAINT customers_tenant_number_key UNIQUE (tenant, customer_number)
);

-- Every sort field, and the branch filter, is an index range ending with the id tie-break.
CREATE INDEX customers_tenant_id_idx ON customers (tenant, id);
CREATE INDEX customers_tenant_number_idx ON customers (tenant, customer_number, id);
CREATE INDEX customers_tenant_name_idx ON customers (tenant, name, id);
CREATE INDEX customers_tenant_email_idx ON customers (tenant, email, id);
CREATE INDEX customers_tenant_phone_idx ON customers (tenant, phone, id);
CREATE INDEX customers_tenant_created_idx ON customers (tenant, created_date, id);
CREATE INDEX customers_tenant_branch_idx ON customers (tenant, branch_code, id);
-- keyword: a case-insensitive substring of name, e-mail or customer number.
CREATE INDEX customers_name_trgm_idx ON customers USING gin (name gin_trgm_ops);
CREATE INDEX customers_email_trgm_idx ON customers USING gin (email gin_trgm_ops);
CREATE INDEX customers_number_trgm_idx ON customers USING gin (customer_number gin_trgm_ops);

-- branch_code '' holds the tenant's total.
CREATE TABLE customer_counts (
    tenant      TEXT   NOT NULL,
    branch_code TEXT   NOT NULL,
    n           BIGINT NOT NULL,
    PRIMARY KEY (tenant, branch_code)
);
