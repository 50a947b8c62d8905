-- A v1 request that meets a change of v2: GET /customers?sortBy=name (v2 reads sort=name,asc),
-- on the first ten pages; each request's exposure keeps `sortBy=name`.
request = function()
  local page = math.random(0, 9)
  return wrk.format("GET", "/api/v1/customers?sortBy=name&size=20&page=" .. page)
end
