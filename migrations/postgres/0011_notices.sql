-- Notices to clients (README "Notices to clients"): where each client's owners are told, what
-- is to be told (an outbox, written before anything is sent), and the sunsets clients accepted.

-- An endpoint: a client's own (`subject` its token's subject), or a whole tenant's (`subject`
-- empty). A new one for the same owner replaces it, with a new secret.
CREATE TABLE notice_endpoints (
    tenant       TEXT        COLLATE "C" NOT NULL,
    subject      TEXT        COLLATE "C" NOT NULL,
    url          TEXT        NOT NULL,
    format       TEXT        NOT NULL,
    secret       TEXT        NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    -- Set when the receiver answered 410: nothing more is sent to it.
    disabled_at  TIMESTAMPTZ,
    PRIMARY KEY (tenant, subject)
);

-- Each notice once: `event` names what it tells, to whom and through which endpoint (its
-- owner and creation), so a notice is written once however many instances see its event.
CREATE TABLE notices (
    id                   UUID        PRIMARY KEY,
    event                TEXT        NOT NULL UNIQUE,
    type                 TEXT        NOT NULL,
    version              INTEGER     NOT NULL,
    tenant               TEXT        COLLATE "C" NOT NULL,
    subject              TEXT        COLLATE "C" NOT NULL,
    endpoint_tenant      TEXT        NOT NULL,
    endpoint_subject     TEXT        NOT NULL,
    endpoint_created_at  TIMESTAMPTZ NOT NULL,
    body                 TEXT        NOT NULL,
    created_at           TIMESTAMPTZ NOT NULL,
    status               TEXT        NOT NULL,
    attempts             INTEGER     NOT NULL,
    next_attempt_at      TIMESTAMPTZ,
    last_attempt_at      TIMESTAMPTZ,
    last_status          INTEGER,
    -- Taken by an instance until then (its attempt in flight).
    leased_until         TIMESTAMPTZ
);
CREATE INDEX notices_due ON notices (next_attempt_at) WHERE status = 'pending';
CREATE INDEX notices_of_client ON notices (tenant, subject, created_at, id);
CREATE INDEX notices_newest ON notices (created_at, id);

-- A client's owners accepting a version's sunset date; a moved sunset leaves it for the old
-- date, which no longer counts.
CREATE TABLE sunset_acknowledgements (
    version          INTEGER     NOT NULL,
    tenant           TEXT        COLLATE "C" NOT NULL,
    subject          TEXT        COLLATE "C" NOT NULL,
    sunset_at        TIMESTAMPTZ NOT NULL,
    acknowledged_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (version, tenant, subject)
);
CREATE INDEX sunset_acknowledgements_by_date ON sunset_acknowledgements (version, sunset_at);
