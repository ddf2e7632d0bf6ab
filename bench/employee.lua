-- wrk script: GET /employees/{n} with a random employee number per request.
--
--   wrk -t2 -c64 -d10s -s bench/employee.lua http://127.0.0.1:8080 [-- '?details=titles&details=salaries' ['Authorization: Bearer …']]
--
-- The optional first argument after `--` is appended to every path (a
-- query string); the optional second is a header field sent with every request.

local counter = 0

function setup(thread)
   counter = counter + 1
   thread:set("thread_number", counter)
end

function init(args)
   local suffix = args[1] or ""
   local field = args[2] and (args[2] .. "\r\n") or ""
   -- Each thread draws its own sequence.
   math.randomseed(os.time() * 100 + (thread_number or 0))
   -- Everything after the number, built once: wrk.format builds a table
   -- and formats each header for every request, which cost wrk about a
   -- quarter of its CPU per request (BENCHMARKS.md, finding 14).
   tail = suffix .. " HTTP/1.1\r\nHost: " .. wrk.headers["Host"] .. "\r\n" .. field .. "\r\n"
end

function request()
   return "GET /employees/" .. math.random(10001, 310024) .. tail
end
