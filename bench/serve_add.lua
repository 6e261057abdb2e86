-- serve_add.lua: wrk script for bench/store_compare.sh. POSTs single adds
-- of short synthetic notes to /v1/namespaces/<ns>/memories, each with an id
-- unique across threads and runs (the first argument after "--" is a
-- prefix; the second the namespace).
local counter = 0
local prefix, ns = "w", "bench"
local thread_no = 0
local threads = 0

function setup(thread)
  thread:set("thread_no", threads)
  threads = threads + 1
end

function init(args)
  prefix = args[1] or prefix
  ns = args[2] or ns
end

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

local words = {"deploy", "kettle", "garden", "report", "tuesday", "budget", "river", "meeting"}

function request()
  counter = counter + 1
  local id = prefix .. "-" .. thread_no .. "-" .. counter
  local text = "note " .. counter .. " about the " .. words[counter % 8 + 1] .. " and the " ..
    words[(counter * 7) % 8 + 1]
  return wrk.format(nil, "/v1/namespaces/" .. ns .. "/memories", nil,
    '{"id":"' .. id .. '","text":"' .. text .. '"}')
end
