-- GET /titles/{title}/holders
-- The current holders of a title, by number, who hold it since `since` or later,
-- of one gender when `gender` is given.
-- @param title The title, as listed: `Senior Engineer`.
-- @param since = 1985-01-01 The earliest day they took the title.
-- @param gender `M` or `F`; both when absent.
-- @paged
-- @example title Senior Engineer
SELECT e.emp_no AS "employeeNumber", e.first_name AS "name.first", e.last_name AS "name.last",
       e.gender, t.from_date AS "since"
FROM titles t JOIN employees e ON e.emp_no = t.emp_no
WHERE t.title = :title AND t.to_date = DATE '9999-01-01' AND t.from_date >= :since
  AND (CAST(:gender AS char(1)) IS NULL OR e.gender = :gender)
ORDER BY e.emp_no;

-- @detail salaries What they were paid, and when.
SELECT salary, from_date AS "fromDate", to_date AS "toDate"
FROM salaries WHERE emp_no = :employeeNumber ORDER BY from_date;
