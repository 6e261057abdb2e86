-- serve_recall.lua: wrk script for bench/bench_serve.sh. POSTs /v1/recall
-- round-robin over the query file given after "--" (the same file the
-- in-process baseline reads), k = 10, touch off, so that HTTP and C API run
-- the same recalls. Second argument: the namespace; third: the profile.
local bodies = {}
local next_body = 0

function init(args)
  local ns = args[2] or "bench"
  local profile = args[3] and ('"profile":"' .. args[3] .. '",') or ""
  for line in io.lines(args[1]) do
    if #line > 0 then
      bodies[#bodies + 1] = '{"namespaces":["' .. ns .. '"],' .. profile ..
        '"text":"' .. line .. '","k":10,"touch":false}'
    end
  end
  next_body = math.random(#bodies)
end

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

function request()
  next_body = next_body % #bodies + 1
  return wrk.format(nil, nil, nil, bodies[next_body])
end
