-- What in each client's requests met each change, per operation (README "Your migration
-- guide"): a parameter, a body field's pointer, a missing field; never a value the client
-- chose. At most 20 per client, operation and change (the inserts hold the bound).
CREATE TABLE client_exposure_details (
    version     INTEGER     NOT NULL,
    tenant      TEXT        NOT NULL,
    subject     TEXT        NOT NULL,
    method      TEXT        NOT NULL,
    route       TEXT        NOT NULL,
    change      TEXT        NOT NULL,
    detail      TEXT        NOT NULL,
    requests    INTEGER     NOT NULL,
    last_seen   INTEGER     NOT NULL,
    PRIMARY KEY (version, tenant, subject, method, route, change, detail)
);
