-- The read-only role the employees service connects as: it can read every
-- table of the public schema (also tables created later, through default
-- privileges) and modify none. Re-runnable.
--
--   psql -d employees -f sql/roles.sql
--   psql -d employees -v reader_password=secret -f sql/roles.sql   # for TCP logins

SET client_min_messages = warning;

SELECT NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'employees_reader') AS create_reader \gset
\if :create_reader
CREATE ROLE employees_reader LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION;
\endif
\if :{?reader_password}
ALTER ROLE employees_reader PASSWORD :'reader_password';
\endif

SELECT format('GRANT CONNECT ON DATABASE %I TO employees_reader', current_database()) \gexec
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
REVOKE ALL ON SCHEMA public FROM employees_reader;
GRANT USAGE ON SCHEMA public TO employees_reader;
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM employees_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO employees_reader;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO employees_reader;
