-- S5: POST /users, each with its own Idempotency-Key and e-mail address.
local counter = 0
local prefix = ""
setup = function(thread)
  thread:set("prefix", string.format("%d-%d", os.time(), math.random(1, 1000000000)))
end
init = function(args)
  prefix = wrk.thread:get("prefix") or tostring(math.random(1, 1000000000))
end
request = function()
  counter = counter + 1
  local key = prefix .. "-" .. counter
  wrk.headers["Idempotency-Key"] = key
  wrk.headers["Content-Type"] = "application/json"
  local body = '{"name":"Bench User","email":"bench-' .. key .. '@example.com","age":30}'
  return wrk.format("POST", "/users", nil, body)
end
