-- The last guard against a duplicate: a user created under an Idempotency-Key records its
-- scope (tenant, subject and key, hashed) and the request's fingerprint, and the scope is
-- unique. Even with the Redis record lost, a retry finds this row instead of creating another.
ALTER TABLE users ADD COLUMN idempotency_scope TEXT;
ALTER TABLE users ADD COLUMN idempotency_fingerprint TEXT;
ALTER TABLE users ADD CONSTRAINT users_tenant_idempotency_key UNIQUE (tenant, idempotency_scope);
