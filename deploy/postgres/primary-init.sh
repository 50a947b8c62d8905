#!/bin/sh
# Runs once, when the primary's data folder is first initialised (the official image runs the files in
# /docker-entrypoint-initdb.d). Adds the role and the physical replication slot that the streaming replica
# (replica-entrypoint.sh) uses, and lets that role connect for replication.
set -eu

psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
    --set=repl_password="$POSTGRES_REPLICATION_PASSWORD" <<'SQL'
CREATE ROLE replicator WITH REPLICATION LOGIN PASSWORD :'repl_password';
SELECT pg_create_physical_replication_slot('replica1');
SQL

echo "host replication replicator all scram-sha-256" >> "$PGDATA/pg_hba.conf"
