-- psql lower bound of GET /employees: the same rows written as one JSON array.
COPY (
  SELECT json_agg(e ORDER BY "employeeNumber") FROM (
    SELECT emp_no AS "employeeNumber", first_name AS "firstName", last_name AS "lastName" FROM employees
  ) e
) TO STDOUT;
