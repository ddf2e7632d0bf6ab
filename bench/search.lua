-- wrk script: GET /employees?name=<pattern>, the same pattern on every request.
--
--   wrk -t2 -c64 -d10s -s bench/search.lua http://127.0.0.1:8080 -- 'krohm*'
--
-- The pattern is the argument after `--` (default `krohm*`, about 900
-- employees: the rarest last name of the sample database).

function init(args)
   local pattern = args[1] or "krohm*"
   -- With no request() function wrk builds this request once and sends it
   -- every time.
   wrk.path = "/employees?name=" .. pattern:gsub("%*", "%%2A")
end
