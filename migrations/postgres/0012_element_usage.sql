-- Deprecated elements used per client (README "Deprecating an element"): each element, kind of
-- request, client and UTC day with its requests and its first and last use. `kind` keeps dry
-- runs, rehearsals and refusals apart from uses ('use', 'dry-run', 'rehearsal', 'refusal').
CREATE TABLE element_usage (
    deprecation TEXT        COLLATE "C" NOT NULL,
    kind        TEXT        COLLATE "C" NOT NULL,
    day         DATE        NOT NULL,
    tenant      TEXT        COLLATE "C" NOT NULL,
    subject     TEXT        COLLATE "C" NOT NULL,
    requests    BIGINT      NOT NULL,
    first_used  TIMESTAMPTZ NOT NULL,
    last_used   TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (deprecation, kind, day, tenant, subject)
);
-- A client's own question reads its rows of the last 90 days, whatever the element.
CREATE INDEX element_usage_by_client ON element_usage (tenant, subject, day);

-- Each client's uses of an element, ever, kept as the counts are written: an operator's
-- question counts the clients of the last 30 days on an index, never every day's rows.
CREATE TABLE element_clients (
    deprecation TEXT        COLLATE "C" NOT NULL,
    tenant      TEXT        COLLATE "C" NOT NULL,
    subject     TEXT        COLLATE "C" NOT NULL,
    requests    BIGINT      NOT NULL,
    first_used  TIMESTAMPTZ NOT NULL,
    last_used   TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (deprecation, tenant, subject)
);
CREATE INDEX element_clients_by_last_use ON element_clients (deprecation, last_used);

-- Uses of each element per day, all clients together.
CREATE TABLE element_days (
    deprecation TEXT   COLLATE "C" NOT NULL,
    day         DATE   NOT NULL,
    requests    BIGINT NOT NULL,
    PRIMARY KEY (deprecation, day)
);

-- A client's owners accepting an element's sunset date; a moved sunset leaves it for the old
-- date, which no longer counts.
CREATE TABLE element_acknowledgements (
    deprecation      TEXT        COLLATE "C" NOT NULL,
    tenant           TEXT        COLLATE "C" NOT NULL,
    subject          TEXT        COLLATE "C" NOT NULL,
    sunset_at        TIMESTAMPTZ NOT NULL,
    acknowledged_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (deprecation, tenant, subject)
);
CREATE INDEX element_acknowledgements_by_date ON element_acknowledgements (deprecation, sunset_at);

-- A brownout of one element deprecated inside its version (`version` is the element's).
ALTER TABLE brownouts ADD COLUMN deprecation TEXT;
