-- The dashboard's other orders of a version's clients (README "The dashboard"): most requests
-- first, and most recently seen first (`order_last`: minus the last request's whole Unix
-- seconds, as SQLite keeps it; a client never answered last), each then by tenant and subject.
ALTER TABLE client_versions ADD COLUMN order_last BIGINT GENERATED ALWAYS AS (
    COALESCE(-floor(EXTRACT(EPOCH FROM (last_request AT TIME ZONE 'UTC')))::bigint, 9223372036854775807)
) STORED;

CREATE INDEX client_versions_by_requests ON client_versions (version, order_requests, tenant, subject);
CREATE INDEX client_versions_by_last_seen ON client_versions (version, order_last, tenant, subject);
