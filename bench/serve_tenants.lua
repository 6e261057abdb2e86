-- serve_tenants.lua: wrk script for bench/bench_tenants.sh. POSTs /v1/recall
-- to a random one of N namespaces ("t:00000" .. ) with a random question
-- from the file given after "--", k = 10, touch off. Arguments: the
-- question file, the namespace count.
local qs = {}
local n_ns = 1

function init(args)
  for line in io.lines(args[1]) do
    if #line > 0 then qs[#qs + 1] = line:gsub('\\', ''):gsub('"', '') end
  end
  n_ns = tonumber(args[2])
  math.randomseed(os.time() + (tonumber(tostring({}):match("0x(%x+)"), 16) or 0) % 100000)
end

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

function request()
  local ns = string.format("t:%05d", math.random(n_ns) - 1)
  local q = qs[math.random(#qs)]
  return wrk.format(nil, nil, nil,
    '{"namespaces":["' .. ns .. '"],"text":"' .. q .. '","k":10,"touch":false}')
end
