-- wrk script of the load benchmark (bench/run.ts): rotates through a list of request paths and, when
-- paced, waits a random think time before each request so that the offered rate is below saturation.
--
-- Environment (read in every Lua state wrk creates):
--   HPD_WRK_URLS   file with one path?query per line (required)
--   HPD_WRK_PACE   mean delay in ms before each request on a connection; 0 or unset = no pacing
--   HPD_WRK_OUT    file the summary is written to as one JSON object (required)
--   HPD_WRK_OFFSET index (from 0) of the first path sent; the harness passes the count sent by the
--                  previous run, so that consecutive runs replay one continuous stream (the
--                  realistic search workload, whose cache state carries over from run to run)
-- Works with wrk 4 and with wrk2 (an older wrk: init, request and done are the same; wrk2 does not
-- call delay() with -R, and the harness sets no pace for it).
-- Headers (Authorization) come from wrk's -H options, which wrk.format() adds to every request.

local urls_file = os.getenv("HPD_WRK_URLS")
local pace = tonumber(os.getenv("HPD_WRK_PACE") or "0") or 0
local out_file = os.getenv("HPD_WRK_OUT")
local offset = tonumber(os.getenv("HPD_WRK_OFFSET") or "0") or 0

local requests = {}
local count = 0
local next_index = 0

for line in io.lines(urls_file) do
  if line ~= "" then
    count = count + 1
    requests[count] = line
  end
end

function init(args)
  -- Pre-format every request once; request() then only picks the next one.
  for i = 1, count do
    requests[i] = wrk.format("GET", requests[i])
  end
  math.randomseed(12345)
  next_index = offset % count
end

function request()
  next_index = next_index % count + 1
  return requests[next_index]
end

if pace > 0 then
  -- Uniform on [0, 2 × pace] ms: the mean is the pace, and connections drift apart instead of firing
  -- in lock-step.
  function delay()
    return math.random(0, 2 * pace)
  end
end

-- A number JSON can hold: an empty histogram's mean is NaN (no response within the run).
local function finite(x)
  if x ~= x or x == math.huge or x == -math.huge then return 0 end
  return x
end

function done(summary, latency, requests_stats)
  local e = summary.errors
  local f = assert(io.open(out_file, "w"))
  f:write(string.format(
    '{"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"min":%d,"mean":%.1f,"max":%d,"p50":%d,"p90":%d,"p99":%d,"p999":%d}}',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency.min, finite(latency.mean), latency.max,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9)))
  f:close()
end
