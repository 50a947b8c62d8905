-- Exact user totals without counting the table, kept by triggers in the writing transaction.
-- SQLite has one writer at a time, so one row per tenant is enough (PostgreSQL spreads it).
CREATE TABLE user_counts (
    tenant  TEXT    NOT NULL,
    shard   INTEGER NOT NULL,
    n       INTEGER NOT NULL,
    PRIMARY KEY (tenant, shard)
);

INSERT INTO user_counts (tenant, shard, n) SELECT tenant, 0, count(*) FROM users GROUP BY tenant;

CREATE TRIGGER users_counted_on_insert AFTER INSERT ON users BEGIN
    INSERT OR IGNORE INTO user_counts (tenant, shard, n) VALUES (NEW.tenant, 0, 0);
    UPDATE user_counts SET n = n + 1 WHERE tenant = NEW.tenant AND shard = 0;
END;

CREATE TRIGGER users_counted_on_delete AFTER DELETE ON users BEGIN
    UPDATE user_counts SET n = n - 1 WHERE tenant = OLD.tenant AND shard = 0;
END;
