-- The last guard against a duplicate: a user created under an Idempotency-Key records its
-- scope (tenant, subject and key, hashed) and the request's fingerprint, and the scope is
-- unique. Even with the idempotency record lost, a retry finds this row instead of creating
-- another. (NULL scopes, users created without a key, never collide.)
ALTER TABLE users ADD COLUMN idempotency_scope TEXT;
ALTER TABLE users ADD COLUMN idempotency_fingerprint TEXT;
CREATE UNIQUE INDEX users_tenant_idempotency_key ON users (tenant, idempotency_scope);
