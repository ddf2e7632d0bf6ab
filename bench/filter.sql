-- pgbench: what GET /employees?lastName=eq.Facello&order=hireDate.desc asks of
-- bench/services/employees/list.sql, written by hand; run with -D name=Facello.
SELECT emp_no AS "empNo", birth_date AS "birthDate", first_name AS "firstName", last_name AS "lastName",
       gender, hire_date AS "hireDate"
FROM employees WHERE last_name = :name ORDER BY hire_date DESC;
