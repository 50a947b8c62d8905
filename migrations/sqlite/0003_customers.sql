-- Customers, the import reports that created them, and exact counts kept in the same
-- transaction as every write, so a page's totalElements never counts the table.
CREATE TABLE imports (
    id                      TEXT    PRIMARY KEY,
    tenant                  TEXT    NOT NULL,
    status                  TEXT    NOT NULL,
    received                INTEGER NOT NULL,
    created                 INTEGER NOT NULL,
    skipped                 INTEGER NOT NULL,
    -- At most 100 row errors, as JSON.
    errors                  TEXT    NOT NULL,
    created_at              INTEGER NOT NULL,
    idempotency_scope       TEXT,
    idempotency_fingerprint TEXT
);
CREATE UNIQUE INDEX imports_tenant_idempotency_key ON imports (tenant, idempotency_scope);

CREATE TABLE customers (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant          TEXT    NOT NULL,
    customer_number TEXT    NOT NULL,
    name            TEXT    NOT NULL,
    email           TEXT    NOT NULL,
    phone           TEXT    NOT NULL,
    branch_code     TEXT    NOT NULL,
    created_date    INTEGER NOT NULL,
    import_id       TEXT REFERENCES imports (id),
    CONSTRAINT customers_tenant_number_key UNIQUE (tenant, customer_number)
);

CREATE INDEX customers_tenant_id_idx ON customers (tenant, id);
CREATE INDEX customers_tenant_number_idx ON customers (tenant, customer_number, id);
CREATE INDEX customers_tenant_name_idx ON customers (tenant, name, id);
CREATE INDEX customers_tenant_email_idx ON customers (tenant, email, id);
CREATE INDEX customers_tenant_phone_idx ON customers (tenant, phone, id);
CREATE INDEX customers_tenant_created_idx ON customers (tenant, created_date, id);
CREATE INDEX customers_tenant_branch_idx ON customers (tenant, branch_code, id);

-- branch_code '' holds the tenant's total.
CREATE TABLE customer_counts (
    tenant      TEXT    NOT NULL,
    branch_code TEXT    NOT NULL,
    n           INTEGER NOT NULL,
    PRIMARY KEY (tenant, branch_code)
);
