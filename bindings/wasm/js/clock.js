// The host clock for flakeid's wasm build. Reading Date.now() costs ~45 ns in
// Node on our machines, more than the rest of nextId() together, so the
// generator's hot path reads this cache instead. The cache is only a hint (the
// engine takes a fresh reading before it waits or reports a rollback), and it
// expires at the end of the current synchronous task (a microtask) and after
// CACHE_USES reads, so an ID's timestamp lags the true time by at most that.
const CACHE_USES = 64;
const defer = typeof queueMicrotask === "function" ? queueMicrotask : null;
let cached = 0;
let uses = 0;
let scheduled = false;

function expire() {
  uses = 0;
  scheduled = false;
}

export function flakeid_now_precise() {
  cached = Date.now();
  if (defer !== null) {
    uses = CACHE_USES;
    if (!scheduled) {
      scheduled = true;
      defer(expire);
    }
  }
  return cached;
}

export function flakeid_now() {
  if (uses > 0) {
    uses--;
    return cached;
  }
  return flakeid_now_precise();
}
