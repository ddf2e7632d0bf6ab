-- GET /employees
-- Lists employees ordered by number, streamed. With `name`, only those whose first or last
-- name matches the pattern (case-insensitive; `*` matches any run of characters, other
-- characters match themselves). Filters, `order` and `select` as PostgREST takes them:
-- `lastName=eq.Facello`, `order=lastName.desc`, `select=employeeNumber,lastName`.
-- @service Employees of the sample database: search, details, title and salary histories.
-- @param name A name pattern such as `bal*` or `*son`.
-- @returns list EmployeeSummary
-- @paged
-- @filter *
-- @order *
-- @example name bal*
SELECT e.emp_no AS "employeeNumber", e.first_name AS "firstName", e.last_name AS "lastName"
FROM employees e
-- The LIKE pattern: lower-cased, `%`, `_` and `\` escaped so that they match themselves, `*` for any run.
CROSS JOIN (SELECT replace(replace(replace(replace(lower(:name), '\', '\\'), '%', '\%'), '_', '\_'), '*', '%')) AS p(pattern)
WHERE p.pattern IS NULL OR lower(e.first_name) LIKE p.pattern OR lower(e.last_name) LIKE p.pattern
ORDER BY e.emp_no;

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
