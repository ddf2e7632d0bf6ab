-- pgbench: what GET /rpc/employees_from?first=10001 asks of the database
-- (scenario 18), written by hand; run with -D first=10001.
SELECT * FROM bench_rpc.employees_from(:first);
