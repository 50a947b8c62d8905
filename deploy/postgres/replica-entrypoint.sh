#!/bin/sh
# Entrypoint of the streaming replica (runs as the image's postgres user). On first start it clones the
# primary with pg_basebackup (-R writes primary_conninfo and standby.signal, -S uses the slot that
# primary-init.sh made), then runs PostgreSQL as a read-only hot standby that follows the primary.
set -eu

: "${PGDATA:=/var/lib/postgresql/data}"
: "${PRIMARY_HOST:=postgres-primary}"
export PGPASSWORD="$POSTGRES_REPLICATION_PASSWORD"

if [ ! -s "$PGDATA/PG_VERSION" ]; then
    until pg_isready --quiet --host "$PRIMARY_HOST" --port 5432 --username replicator; do
        echo "waiting for $PRIMARY_HOST"
        sleep 1
    done
    # A half-finished earlier attempt leaves files that pg_basebackup refuses to overwrite.
    find "$PGDATA" -mindepth 1 -delete
    pg_basebackup --host "$PRIMARY_HOST" --port 5432 --username replicator \
        --pgdata "$PGDATA" --wal-method stream --slot replica1 --write-recovery-conf \
        --checkpoint fast --no-password
    chmod 0700 "$PGDATA"
fi

exec postgres -c hot_standby=on -c hot_standby_feedback=on
