-- GET /titles/{title}
-- One job title, with what its current holders are paid when asked.
-- @param title The title, as listed: `Senior Engineer`.
-- @notfound No one has ever held the title "{title}".
-- @example title Senior Engineer
-- @example details pay
SELECT title, count(*) FILTER (WHERE to_date = DATE '9999-01-01') AS "currentHolders", min(from_date) AS "firstHeld"
FROM titles WHERE title = :title
GROUP BY title;

-- @detail pay The current salaries of its current holders: lowest, highest and average.
SELECT min(s.salary) AS lowest, max(s.salary) AS highest, round(avg(s.salary)) AS average
FROM titles t JOIN salaries s ON s.emp_no = t.emp_no AND s.to_date = DATE '9999-01-01'
WHERE t.title = :title AND t.to_date = DATE '9999-01-01';

-- @detail departments Where its current holders work, busiest first.
SELECT d.dept_no AS "departmentNumber", d.dept_name AS "departmentName", count(*) AS holders
FROM titles t
JOIN dept_emp de ON de.emp_no = t.emp_no AND de.to_date = DATE '9999-01-01'
JOIN departments d ON d.dept_no = de.dept_no
WHERE t.title = :title AND t.to_date = DATE '9999-01-01'
GROUP BY d.dept_no, d.dept_name
ORDER BY holders DESC, d.dept_no;
