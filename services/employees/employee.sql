-- GET /employees/{employeeNumber}
-- Returns one employee, with the details asked for.
-- @param employeeNumber The employee's number (10001 and up).
-- @notfound There is no employee number {employeeNumber}.
-- @example employeeNumber 10004
-- @example details titles,salaries

-- The number is a bigint, not the integer of emp_no: a number past the integer range finds no row (404)
-- rather than failing to convert (400).
SELECT emp_no AS "employeeNumber", first_name AS "firstName", last_name AS "lastName",
       birth_date AS "birthDate", gender, hire_date AS "hireDate"
FROM employees WHERE emp_no = CAST(:employeeNumber AS bigint);

-- @detail titles The titles held, and when.
SELECT title, from_date AS "fromDate", to_date AS "toDate"
FROM titles WHERE emp_no = :employeeNumber ORDER BY from_date, title;

-- @detail salaries The salaries paid, and when.
SELECT salary, from_date AS "fromDate", to_date AS "toDate"
FROM salaries WHERE emp_no = :employeeNumber ORDER BY from_date;

-- @detail departments The departments belonged to, and when.
SELECT d.dept_no AS "departmentNumber", d.dept_name AS "departmentName",
       de.from_date AS "fromDate", de.to_date AS "toDate"
FROM dept_emp de JOIN departments d ON d.dept_no = de.dept_no
WHERE de.emp_no = :employeeNumber ORDER BY de.from_date, d.dept_no;
