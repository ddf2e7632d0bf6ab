-- The employees sample database (MySQL test_db), ported to PostgreSQL.
--
-- Tables only, with their column types, NOT NULL and CHECK constraints.
-- Primary keys and indexes (keys.sql) and foreign keys (foreign-keys.sql)
-- are added after the data is loaded, as pg_dump does: building an index
-- once over loaded rows is several times faster than maintaining it per row.
--
-- Re-runnable: existing tables are dropped first.
--
--   psql -d employees -f sql/schema.sql

SET client_min_messages = warning;

DROP TABLE IF EXISTS salaries, titles, dept_manager, dept_emp, departments, employees CASCADE;

CREATE TABLE employees (
    emp_no      integer     NOT NULL,
    birth_date  date        NOT NULL,
    first_name  varchar(14) NOT NULL,
    last_name   varchar(16) NOT NULL,
    gender      char(1)     NOT NULL CONSTRAINT employees_gender_check CHECK (gender IN ('M', 'F')),
    hire_date   date        NOT NULL
);

CREATE TABLE departments (
    dept_no     char(4)     NOT NULL,
    dept_name   varchar(40) NOT NULL
);

CREATE TABLE dept_manager (
    emp_no      integer     NOT NULL,
    dept_no     char(4)     NOT NULL,
    from_date   date        NOT NULL,
    to_date     date        NOT NULL,
    CONSTRAINT dept_manager_dates_check CHECK (from_date <= to_date)
);

CREATE TABLE dept_emp (
    emp_no      integer     NOT NULL,
    dept_no     char(4)     NOT NULL,
    from_date   date        NOT NULL,
    to_date     date        NOT NULL,
    CONSTRAINT dept_emp_dates_check CHECK (from_date <= to_date)
);

CREATE TABLE titles (
    emp_no      integer     NOT NULL,
    title       varchar(50) NOT NULL,
    from_date   date        NOT NULL,
    to_date     date,
    CONSTRAINT titles_dates_check CHECK (from_date <= to_date)
);

CREATE TABLE salaries (
    emp_no      integer     NOT NULL,
    salary      integer     NOT NULL CONSTRAINT salaries_salary_check CHECK (salary > 0),
    from_date   date        NOT NULL,
    to_date     date        NOT NULL,
    CONSTRAINT salaries_dates_check CHECK (from_date <= to_date)
);

COMMENT ON TABLE employees IS 'One row per employee, numbered from 10001.';
COMMENT ON TABLE departments IS 'The nine departments, d001 to d009.';
COMMENT ON TABLE dept_manager IS 'Who managed which department when; the current manager''s row ends 9999-01-01.';
COMMENT ON TABLE dept_emp IS 'Which department each employee belonged to when; current rows end 9999-01-01.';
COMMENT ON TABLE titles IS 'Job titles over time; current rows end 9999-01-01.';
COMMENT ON TABLE salaries IS 'Yearly salary history from the hire date; current rows end 9999-01-01.';
