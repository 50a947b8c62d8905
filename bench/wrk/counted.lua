-- Wraps a scenario (BENCH_SCRIPT, or a plain GET of the URL) so that wrk stops after exactly
-- BENCH_REQUESTS answers on its one thread, and says so by creating the file BENCH_DONE:
-- bench/ab.py then interrupts wrk, whose own clock would run on for its whole duration.
local scenario = os.getenv("BENCH_SCRIPT")
if scenario and scenario ~= "" then
  dofile(scenario)
end
local limit = tonumber(os.getenv("BENCH_REQUESTS"))
local done = os.getenv("BENCH_DONE")
local answered = 0
local inner = response
response = function(status, headers, body)
  if inner then
    inner(status, headers, body)
  end
  answered = answered + 1
  if answered == limit then
    io.open(done, "w"):close()
    wrk.thread:stop()
  end
end
