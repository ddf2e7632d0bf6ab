-- Foreign keys, added after loading and after keys.sql (they need the
-- primary keys). Each is checked once over the whole table.
--
--   psql -d employees -f sql/foreign-keys.sql

SET client_min_messages = warning;

ALTER TABLE dept_manager ADD CONSTRAINT dept_manager_emp_no_fkey
    FOREIGN KEY (emp_no) REFERENCES employees (emp_no) ON DELETE CASCADE;
ALTER TABLE dept_manager ADD CONSTRAINT dept_manager_dept_no_fkey
    FOREIGN KEY (dept_no) REFERENCES departments (dept_no) ON DELETE CASCADE;
ALTER TABLE dept_emp ADD CONSTRAINT dept_emp_emp_no_fkey
    FOREIGN KEY (emp_no) REFERENCES employees (emp_no) ON DELETE CASCADE;
ALTER TABLE dept_emp ADD CONSTRAINT dept_emp_dept_no_fkey
    FOREIGN KEY (dept_no) REFERENCES departments (dept_no) ON DELETE CASCADE;
ALTER TABLE titles ADD CONSTRAINT titles_emp_no_fkey
    FOREIGN KEY (emp_no) REFERENCES employees (emp_no) ON DELETE CASCADE;
ALTER TABLE salaries ADD CONSTRAINT salaries_emp_no_fkey
    FOREIGN KEY (emp_no) REFERENCES employees (emp_no) ON DELETE CASCADE;
