-- GET /departments
-- Lists the departments ordered by number.
-- @filter *
-- @order *
-- @service Departments of the sample database, their managers and current employees.
SELECT dept_no AS "departmentNumber", dept_name AS "departmentName" FROM departments ORDER BY dept_no;
