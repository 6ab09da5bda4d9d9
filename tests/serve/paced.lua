-- wrk script: each connection waits 1 ms between requests, so the offered rate is
-- about (connections × 1000) requests/s: a fixed load below the peak, for latency.
function delay()
  return 1
end
