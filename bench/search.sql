-- pgbench: the query of GET /employees?name=<pattern> (EmployeesService.list);
-- run with -D pattern=krohm% (the LIKE form of the name pattern).
SELECT emp_no AS "employeeNumber", first_name AS "firstName", last_name AS "lastName" FROM employees
WHERE lower(first_name) LIKE :pattern OR lower(last_name) LIKE :pattern ORDER BY emp_no LIMIT NULL OFFSET 0;
