-- wrk script: GET /employees?limit=10&offset=<n>, with `Prefer: count=exact`
-- when the first argument after `--` is `count`, `Prefer: count=planned` when
-- it is `planned`.
--
--   wrk -t2 -c16 -d10s -s bench/page.lua http://127.0.0.1:8080 -- count

function init(args)
   wrk.path = "/employees?limit=10&offset=1000"
   if args[1] == "count" then
      wrk.headers["Prefer"] = "count=exact"
   elseif args[1] == "planned" then
      wrk.headers["Prefer"] = "count=planned"
   end
end
