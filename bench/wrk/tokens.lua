-- bench/scale.py --sigterm: GET /api/v1/users?size=1, each request with the next token of the
-- file SCALE_TOKENS (one a line), round-robin: of SCALE_THREADS threads, thread t sends tokens
-- t+1, t+1+SCALE_THREADS, ... and starts over, so every client calls in turn.
local threads = 0

function setup(thread)
  thread:set("id", threads)
  threads = threads + 1
end

function init(args)
  tokens = {}
  for line in io.lines(os.getenv("SCALE_TOKENS")) do
    tokens[#tokens + 1] = line
  end
  step = tonumber(os.getenv("SCALE_THREADS") or "1")
  nth = id + 1
end

function request()
  local token = tokens[nth]
  nth = nth + step
  if nth > #tokens then
    nth = id + 1
  end
  return wrk.format("GET", "/api/v1/users?size=1", {["Authorization"] = "Bearer " .. token})
end
