-- GET /employees
-- Every employee, as `sql-rest init` writes a table's list: every column, ordered by the
-- primary key, paged, filtered and ordered as the caller asks (scenario 11 of scripts/bench).
-- @paged
-- @filter *
-- @order *
SELECT emp_no AS "empNo", birth_date AS "birthDate", first_name AS "firstName", last_name AS "lastName",
       gender, hire_date AS "hireDate"
FROM employees
ORDER BY emp_no;
