-- pgbench: the three queries of GET /employees/{n}?details=titles&details=salaries
-- in one pipeline, as the service sends them (BENCHMARKS.md, finding 8).
\set n random(10001, 310024)
\startpipeline
SELECT emp_no AS "employeeNumber", first_name AS "firstName", last_name AS "lastName", birth_date AS "birthDate", gender, hire_date AS "hireDate"
FROM employees WHERE emp_no = CAST(:n AS bigint);
SELECT title, from_date AS "fromDate", to_date AS "toDate"
FROM titles WHERE emp_no = :n ORDER BY from_date, title;
SELECT salary, from_date AS "fromDate", to_date AS "toDate"
FROM salaries WHERE emp_no = :n ORDER BY from_date;
\endpipeline
