-- psql lower bound of GET /employees?details=salaries: json_agg + LATERAL.
COPY (
  SELECT json_agg(json_build_object(
           'employeeNumber', e.emp_no, 'firstName', e.first_name, 'lastName', e.last_name,
           'salaries', s.salaries) ORDER BY e.emp_no)
  FROM employees e
  CROSS JOIN LATERAL (
    SELECT coalesce(json_agg(json_build_object('salary', salary, 'fromDate', from_date, 'toDate', to_date)
                             ORDER BY from_date), '[]') AS salaries
    FROM salaries WHERE salaries.emp_no = e.emp_no
  ) s
) TO STDOUT;
