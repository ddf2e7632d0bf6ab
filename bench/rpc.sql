-- pgbench: what GET /rpc/employees_named?name=Facello asks of the database
-- (scenario 18), written by hand; run with -D name=Facello.
SELECT * FROM bench_rpc.employees_named(:name);
