-- S6: 80% reads of one user, 15% customer pages, 5% keyed writes.
local users = tonumber(os.getenv("BENCH_USERS") or "1000000")
-- A pace for the soak: each connection waits this long between requests (0: as fast as it can).
local pause = tonumber(os.getenv("BENCH_DELAY_MS") or "0")
if pause > 0 then
  delay = function() return pause end
end
local counter = 0
local prefix = ""
setup = function(thread)
  thread:set("prefix", string.format("mix-%d-%d", os.time(), math.random(1, 1000000000)))
end
init = function(args)
  prefix = wrk.thread:get("prefix") or tostring(math.random(1, 1000000000))
end
request = function()
  local roll = math.random(1, 100)
  if roll <= 80 then
    wrk.headers["Idempotency-Key"] = nil
    return wrk.format("GET", "/api/v2/users/" .. math.random(1, users))
  elseif roll <= 95 then
    wrk.headers["Idempotency-Key"] = nil
    return wrk.format("GET", "/api/v2/customers?size=20&page=" .. math.random(0, 50))
  else
    counter = counter + 1
    local key = prefix .. "-" .. counter
    wrk.headers["Idempotency-Key"] = key
    wrk.headers["Content-Type"] = "application/json"
    return wrk.format("POST", "/users", nil, '{"name":"Mix","email":"' .. key .. '@example.com","age":30}')
  end
end
