-- pgbench: the query of GET /employees/{n} (EmployeesService.find), random n.
\set n random(10001, 310024)
SELECT emp_no AS "employeeNumber", first_name AS "firstName", last_name AS "lastName", birth_date AS "birthDate", gender, hire_date AS "hireDate"
FROM employees WHERE emp_no = CAST(:n AS bigint);
