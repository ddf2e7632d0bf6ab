-- Primary keys, unique constraints and the indexes the employees service needs.
-- Applied after loading (see schema.sql).
--
--   psql -d employees -f sql/keys.sql
--
-- Queries these serve:
--   employee by number, titles/salaries/departments of one employee or of a
--     range of employees: the primary keys, which lead with emp_no
--     (titles and salaries come out ordered by from_date for free);
--   name search, `*` as wildcard, case-insensitive, on first or last name:
--     lower(first_name) LIKE lower($1) OR lower(last_name) LIKE lower($1)
--     uses the text_pattern_ops indexes for patterns with a fixed prefix
--     (`bal*`) whatever the database collation, and the trigram indexes
--     for the others (`*son`, `*ar*`);
--   a department's employees and managers: the dept_no indexes.

SET client_min_messages = warning;

CREATE EXTENSION IF NOT EXISTS pg_trgm;

ALTER TABLE employees    ADD CONSTRAINT employees_pkey    PRIMARY KEY (emp_no);
ALTER TABLE departments  ADD CONSTRAINT departments_pkey  PRIMARY KEY (dept_no);
ALTER TABLE departments  ADD CONSTRAINT departments_dept_name_key UNIQUE (dept_name);
ALTER TABLE dept_manager ADD CONSTRAINT dept_manager_pkey PRIMARY KEY (emp_no, dept_no);
ALTER TABLE dept_emp     ADD CONSTRAINT dept_emp_pkey     PRIMARY KEY (emp_no, dept_no);
ALTER TABLE titles       ADD CONSTRAINT titles_pkey       PRIMARY KEY (emp_no, title, from_date);
ALTER TABLE salaries     ADD CONSTRAINT salaries_pkey     PRIMARY KEY (emp_no, from_date);

CREATE INDEX employees_first_name_pattern_idx ON employees (lower(first_name) text_pattern_ops);
CREATE INDEX employees_last_name_pattern_idx  ON employees (lower(last_name) text_pattern_ops);
CREATE INDEX employees_first_name_trgm_idx    ON employees USING gin (lower(first_name) gin_trgm_ops);
CREATE INDEX employees_last_name_trgm_idx     ON employees USING gin (lower(last_name) gin_trgm_ops);
CREATE INDEX dept_emp_dept_no_idx             ON dept_emp (dept_no, emp_no);
CREATE INDEX dept_manager_dept_no_idx         ON dept_manager (dept_no, from_date);
