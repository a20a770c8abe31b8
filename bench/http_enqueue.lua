-- wrk script for bench/http_bench.py: each request is one `POST /v1/jobs` of a
-- no-op job, on wrk's kept-alive connections. At the end it prints one
-- JSON line (the only line of wrk's output that starts with "{"): the
-- responses counted, the run's length, every kind of error, and latency
-- percentiles in microseconds.
--
-- wrk counts a response of status 400 or more in errors.status; a
-- response it could not read, or none within --timeout, in errors.read
-- and errors.timeout. bench/http_bench.py fails the run on any of them.
wrk.method = "POST"
wrk.body = '{"task":"noop"}'
wrk.headers["Content-Type"] = "application/json"

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"errors":{"connect":%d,"read":%d,"write":%d,' ..
    '"status":%d,"timeout":%d},"latency_us":{"p50":%d,"p90":%d,"p99":%d,"max":%d}}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
