-- serve_soak.lua: wrk script for the soak in bench/bench_serve.sh. Mixed
-- load: one request in five adds a memory (a unique id per thread and
-- sequence number) to the "soak" namespace, the others recall over the
-- fixed "bench" namespace, so the recalled set stays the same size and any
-- growth of the server's memory is a leak, not a bigger cache. Every add
-- answered 2xx appends its id to ACKDIR/acked-THREAD.txt, which the script
-- checks against the store afterwards. Arguments after "--": QUERIES ACKDIR.
local threads = {}
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("tid", counter)
  table.insert(threads, thread)
end

local queries = {}
local seq = 0
local acked_file
-- globals, so that done() can read them from each thread with t:get()
adds_sent, adds_acked, recalls, failures = 0, 0, 0, 0

function init(args)
  for line in io.lines(args[1]) do
    if #line > 0 then queries[#queries + 1] = line end
  end
  acked_file = io.open(args[2] .. "/acked-" .. tid .. ".txt", "w")
  acked_file:setvbuf("line")
  math.randomseed(tid * 7919)
end

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

function request()
  seq = seq + 1
  if seq % 5 == 0 then
    adds_sent = adds_sent + 1
    local id = "soak-" .. tid .. "-" .. seq
    return wrk.format(nil, "/v1/namespaces/soak/memories", nil,
      '{"id":"' .. id .. '","text":"soak observation ' .. seq .. ' of thread ' ..
      tid .. ': ' .. queries[seq % #queries + 1] .. '"}')
  end
  recalls = recalls + 1
  return wrk.format(nil, "/v1/recall", nil,
    '{"namespaces":["bench"],"profile":"stream","text":"' ..
    queries[seq % #queries + 1] .. '","k":10,"touch":false}')
end

function response(status, headers, body)
  if status >= 300 then
    failures = failures + 1
    return
  end
  local id = body:match('^{"id":"(soak%-[^"]+)"')
  if id then
    adds_acked = adds_acked + 1
    acked_file:write(id, "\n")
  end
end

function done(summary, latency, requests)
  local sent, acked, failed = 0, 0, 0
  for _, t in ipairs(threads) do
    sent = sent + t:get("adds_sent")
    acked = acked + t:get("adds_acked")
    failed = failed + t:get("failures")
  end
  io.write(string.format("soak adds_sent=%d adds_acked=%d failures=%d\n",
    sent, acked, failed))
end
