-- Row count and chained MD5 of every table, computed exactly as test_db's
-- test_employees_md5.sql does: starting from the empty string, for each row
-- in key order, crc = md5(concat_ws('#', crc, col1, col2, ...)), with MySQL's
-- text rendering of the columns (dates as YYYY-MM-DD, NULL skipped).
--
--   psql -d employees -X -q -A -t -F ' ' -f sql/checksums.sql
--   employees 300024 4ec56ab5ba37218d187cf6ab09ce1aa1
--
-- Set the psql variable `tables` to a comma-separated list to check fewer
-- tables (-v tables=departments,dept_manager). Creates only temporary objects.

SET client_min_messages = warning;
SET DateStyle = ISO;

-- PL/pgSQL: as an aggregate's step it runs faster than a SQL function, which
-- cannot be inlined there.
CREATE FUNCTION pg_temp.chained_md5_step(crc text, line text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ BEGIN RETURN md5(crc || '#' || line); END $$;

CREATE AGGREGATE pg_temp.chained_md5(text) (
    SFUNC = pg_temp.chained_md5_step,
    STYPE = text,
    INITCOND = ''
);

\if :{?tables}
\else
\set tables 'employees,departments,dept_manager,dept_emp,titles,salaries'
\endif

WITH queries (position, table_name, query) AS (VALUES
    (1, 'employees', $$SELECT count(*), pg_temp.chained_md5(concat_ws('#', emp_no, birth_date, first_name, last_name, gender, hire_date) ORDER BY emp_no) FROM employees$$),
    (2, 'departments', $$SELECT count(*), pg_temp.chained_md5(concat_ws('#', dept_no, dept_name) ORDER BY dept_no) FROM departments$$),
    (3, 'dept_manager', $$SELECT count(*), pg_temp.chained_md5(concat_ws('#', dept_no, emp_no, from_date, to_date) ORDER BY dept_no, emp_no) FROM dept_manager$$),
    (4, 'dept_emp', $$SELECT count(*), pg_temp.chained_md5(concat_ws('#', dept_no, emp_no, from_date, to_date) ORDER BY dept_no, emp_no) FROM dept_emp$$),
    (5, 'titles', $$SELECT count(*), pg_temp.chained_md5(concat_ws('#', emp_no, title, from_date, to_date) ORDER BY emp_no, title, from_date) FROM titles$$),
    (6, 'salaries', $$SELECT count(*), pg_temp.chained_md5(concat_ws('#', emp_no, salary, from_date, to_date) ORDER BY emp_no, from_date, to_date) FROM salaries$$)
)
SELECT format('SELECT %L AS table_name, count, coalesce(chained_md5, %L) FROM (%s) AS checksum(count, chained_md5)', table_name, '', query)
FROM queries
WHERE table_name = ANY (string_to_array(:'tables', ','))
ORDER BY position
\gexec
