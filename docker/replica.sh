#!/usr/bin/env bash
# The replica service of the compose file's scale profile: on its first
# start, a base backup of db with -R (standby.signal and primary_conninfo,
# so that it streams from db); then PostgreSQL as a hot standby.
set -euo pipefail

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  export PGPASSWORD="$REPLICATOR_PASSWORD"
  until pg_basebackup --host db --username replicator --pgdata "$PGDATA" -R --wal-method stream --checkpoint fast; do
    echo "replica: base backup failed; again in 2 s" >&2
    rm -rf "${PGDATA:?}"/*
    sleep 2
  done
  chmod 700 "$PGDATA"
fi
exec postgres -c hot_standby=on -c hot_standby_feedback=on
