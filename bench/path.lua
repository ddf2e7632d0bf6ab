-- wrk script: GET the path given as the first argument after `--`, on every request.
--
--   wrk -t2 -c64 -d10s -s bench/path.lua http://127.0.0.1:8080 -- '/employees?lastName=eq.Facello&order=hireDate.desc'

function init(args)
   wrk.path = args[1]
end
