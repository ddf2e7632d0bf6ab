-- GET /departments/{departmentNumber}
-- Returns one department. `managers` nests every manager it has had; `employees` streams
-- its current employees, ordered by number.
-- @param departmentNumber The department's number, such as `d005`.
-- @notfound There is no department "{departmentNumber}".
-- @example departmentNumber d005
-- @example details managers
SELECT dept_no AS "departmentNumber", dept_name AS "departmentName"
FROM departments WHERE dept_no = :departmentNumber;

-- @detail managers Every manager it has had.
SELECT e.emp_no AS "employeeNumber", e.first_name AS "firstName", e.last_name AS "lastName",
       m.from_date AS "fromDate", m.to_date AS "toDate"
FROM dept_manager m JOIN employees e ON e.emp_no = m.emp_no
WHERE m.dept_no = :departmentNumber ORDER BY m.from_date, e.emp_no;

-- @stream employees Its current employees, by number: streamed, there can be tens of thousands.
SELECT e.emp_no AS "employeeNumber", e.first_name AS "firstName", e.last_name AS "lastName",
       de.from_date AS "fromDate"
FROM dept_emp de JOIN employees e ON e.emp_no = de.emp_no
WHERE de.dept_no = :departmentNumber AND de.to_date = DATE '9999-01-01'
ORDER BY de.emp_no;
