-- GET /titles
-- Lists the job titles, with how many employees hold each today and how many ever did.
-- @returns list TitleSummary
-- @service Job titles of the sample database: who holds them, and what they pay.
SELECT title,
       count(*) FILTER (WHERE to_date = DATE '9999-01-01') AS "currentHolders",
       count(*) AS "everHeld"
FROM titles
GROUP BY title
ORDER BY title;
