#!/usr/bin/env bash
# First start of the db service (postgres image, /docker-entrypoint-initdb.d):
# the same steps as scripts/load-sample-db, on the sql/ folder mounted at /sql.
set -euo pipefail

run() { psql -X -q -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" "$@"; }

run -f /sql/schema.sql
run -f /sql/generate.sql
run -f /sql/keys.sql
run -f /sql/foreign-keys.sql
run -v reader_password="$EMPLOYEES_READER_PASSWORD" -f /sql/roles.sql
run -c ANALYZE
