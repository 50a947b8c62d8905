-- S1 on v1: GET /users/<id> (the legacy path v1 answers) for random ids among the seeded users.
local users = tonumber(os.getenv("BENCH_USERS") or "1000000")
request = function()
  return wrk.format("GET", "/users/" .. math.random(1, users))
end
