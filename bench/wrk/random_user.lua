-- S1: GET /api/v2/users/<id> for random ids among the seeded users.
local users = tonumber(os.getenv("BENCH_USERS") or "1000000")
request = function()
  return wrk.format("GET", "/api/v2/users/" .. math.random(1, users))
end
