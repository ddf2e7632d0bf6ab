-- wrk script for `make soak` (scripts/soak): a mix of the service's
-- endpoints, one after the other on every connection. Counts statuses per
-- thread; `done` prints the totals in a form scripts/soak reads:
--   soak-status <code> <count>
-- 404s come only from /employees/1 and /departments/d999 (expected).

local paths = {
  "/employees/10001",
  "/employees/10001?details=titles,salaries,departments",
  "/employees?name=bal*&limit=50",
  "/employees?name=*son&limit=100",
  "/employees?limit=1000&offset=150000",
  "/employees?details=titles&limit=20&offset=5000",
  "/employees/250000?details=salaries",
  "/departments",
  "/departments/d005",
  "/health/ready",
  "/math/sum?a=1&b=2",
  "/employees/1",           -- 404 expected
  "/departments/d999",      -- 404 expected
  "/employees?limit=10000",
}

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  statuses = {}
  index = math.random(#paths)
end

function request()
  index = index % #paths + 1
  return wrk.format("GET", paths[index])
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
  local totals = {}
  for _, thread in ipairs(threads) do
    local counts = thread:get("statuses")
    for status, count in pairs(counts) do
      totals[status] = (totals[status] or 0) + count
    end
  end
  for status, count in pairs(totals) do
    io.write(string.format("soak-status %d %d\n", status, count))
  end
  io.write(string.format("soak-errors connect=%d read=%d write=%d timeout=%d\n",
    summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.timeout))
end
