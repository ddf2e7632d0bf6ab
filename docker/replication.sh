#!/usr/bin/env bash
# First start of the db service: a role that may stream the WAL to the
# replica of the compose file's scale profile (docker/replica.sh), with a
# password, from any host of the compose network.
set -euo pipefail

psql -X -q -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v password="$REPLICATOR_PASSWORD" <<'SQL'
CREATE ROLE replicator WITH REPLICATION LOGIN PASSWORD :'password';
SQL
echo "host replication replicator all scram-sha-256" >>"$PGDATA/pg_hba.conf"
