-- The dashboard's other orders of a version's clients (README "The dashboard"): most requests
-- first, and most recently seen first (`order_last`: minus the last request's Unix seconds, a
-- client never answered last), each then by tenant and subject.
ALTER TABLE client_versions ADD COLUMN order_last INTEGER GENERATED ALWAYS AS (
    COALESCE(-last_request, 9223372036854775807)
) VIRTUAL;

CREATE INDEX client_versions_by_requests ON client_versions (version, order_requests, tenant, subject);
CREATE INDEX client_versions_by_last_seen ON client_versions (version, order_last, tenant, subject);
