//! The one Lua script the ordered writer (`writer`) runs per pipeline: every event write of the
//! batch (an event appended, the requests kept with a stream) in queue order, in one
//! `EVALSHA`. Redis pays its per-script cost once per batch instead of once per write (the
//! commands inside are most of a write's cost: docs/PERF-NOTES.md, "Fourth round").
//!
//! Each write runs in a Lua `pcall`: one that fails (a command Redis refuses) does not stop the
//! writes after it, and its error comes back in its place. The keys' expiries are renewed once
//! per batch, after every write ran (the same TTL each time: what one `PEXPIRE` per write
//! left).
//!
//! KEYS: every write's keys, in order. ARGV, per write: its operation ([`APPEND`] or
//! [`KEEP_REQUESTS`]), its count of keys, its count of arguments, the arguments. Returns one
//! entry per write: 1 (kept), 0 (over a bound alone, not kept) or the error's text.
//!
//! Stream numbers are compared as decimal strings (length, then text): they can exceed the
//! 2^53 that Lua's numbers hold exactly.

use std::sync::LazyLock;

use redis::Script;

/// Appends one event and applies the bounds (oldest events of the stream first, then the
/// session's oldest other streams). Keys: stream set, session's byte hash, session's stream
/// order. Arguments: seq, data, stream, max events per stream, max bytes per stream, max bytes
/// per session, max streams per session, ttl (ms), the session's stream key prefix, the
/// overhead per event. 0 when the event alone is over a bound (not kept).
///
/// The oldest stream is the first of the order set (stream numbers padded to 20 digits, one
/// score: in number order), so an append past the streams bound costs a few commands, not a
/// scan of every stream of the session; a stream the set lacks (written before it existed) is
/// found by that scan. The counts (events and bytes of the stream, bytes and streams of the
/// session) are read once, from what the append's own commands answer where they can, and
/// kept up to date while the oldest go.
pub(crate) const APPEND: &str = "append";

/// Keeps the requests that opened a stream, at score 0 of its set (never replayed: a replay
/// starts after a sequence number of at least 0). Keys: stream set, session's byte hash,
/// session's stream order. Arguments: body, stream, max bytes per stream, ttl (ms), the
/// overhead per event. 0 when over the stream's bound.
pub(crate) const KEEP_REQUESTS: &str = "keep";

/// The batch script (see the module docs).
pub(crate) static WRITES: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local function padded(s) return string.rep('0', 20 - #s) .. s end
local function older(a, b)
  if #a ~= #b then return #a < #b end
  return a < b
end
local expiring, ttl_of = {}, {}
local function expire(key, ttl)
  if ttl_of[key] == nil then expiring[#expiring + 1] = key end
  ttl_of[key] = ttl
end

local function append(K, A)
  local overhead = tonumber(A[10])
  local cost = #A[2] + overhead
  local stream_max, session_max = tonumber(A[5]), tonumber(A[6])
  if cost > stream_max or cost > session_max then return 0 end
  expire(K[1], A[8]); expire(K[2], A[8]); expire(K[3], A[8])
  local b, total
  if redis.call('ZADD', K[1], A[1], A[1] .. ':' .. A[2]) == 1 then
    b = redis.call('HINCRBY', K[2], A[3], cost)
    total = redis.call('HINCRBY', K[2], '_total', cost)
  else
    b = tonumber(redis.call('HGET', K[2], A[3]) or '0')
  end
  redis.call('ZADD', K[3], 0, padded(A[3]))
  local events_max = tonumber(A[4])
  -- ZCARD counts the stream's requests too (score 0): exact only when it matters.
  local n = redis.call('ZCARD', K[1])
  if n > events_max then n = redis.call('ZCOUNT', K[1], '(0', '+inf') end
  while n > events_max or b > stream_max do
    -- The oldest event (score 0 is the stream's requests, which stay while the stream does).
    local first = redis.call('ZRANGEBYSCORE', K[1], '(0', '+inf', 'LIMIT', 0, 1)
    if #first == 0 then break end
    redis.call('ZREM', K[1], first[1])
    local c = #first[1] - string.find(first[1], ':', 1, true) + overhead
    b = redis.call('HINCRBY', K[2], A[3], -c)
    total = redis.call('HINCRBY', K[2], '_total', -c)
    n = n - 1
  end
  if total == nil then total = tonumber(redis.call('HGET', K[2], '_total') or '0') end
  local streams = redis.call('HLEN', K[2]) - 1
  local streams_max = tonumber(A[7])
  while total > session_max or streams > streams_max do
    local oldest = nil
    for _, p in ipairs(redis.call('ZRANGE', K[3], 0, 1)) do
      local s = string.match(p, '^0*(%d+)$')
      if s ~= A[3] then
        if redis.call('HEXISTS', K[2], s) == 1 then oldest = s else redis.call('ZREM', K[3], p) end
        break
      end
    end
    if oldest == nil then
      for _, s in ipairs(redis.call('HKEYS', K[2])) do
        if s ~= '_total' and s ~= A[3] and (oldest == nil or older(s, oldest)) then oldest = s end
      end
    end
    if oldest == nil then break end
    local ob = tonumber(redis.call('HGET', K[2], oldest) or '0')
    redis.call('DEL', A[9] .. ':' .. oldest)
    streams = streams - redis.call('HDEL', K[2], oldest)
    redis.call('ZREM', K[3], padded(oldest))
    total = redis.call('HINCRBY', K[2], '_total', -ob)
  end
  return 1
end

local function keep(K, A)
  local cost = #A[1] + tonumber(A[5])
  if cost > tonumber(A[3]) then return 0 end
  expire(K[1], A[4]); expire(K[2], A[4]); expire(K[3], A[4])
  if redis.call('ZADD', K[1], 0, '0:' .. A[1]) == 1 then
    redis.call('HINCRBY', K[2], A[2], cost)
    redis.call('HINCRBY', K[2], '_total', cost)
  end
  redis.call('ZADD', K[3], 0, padded(A[2]))
  return 1
end

local ops = {append = append, keep = keep}
local out = {}
local k, a = 1, 1
while a <= #ARGV do
  local op, nk, na = ops[ARGV[a]], tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  local K = {unpack(KEYS, k, k + nk - 1)}
  local A = {unpack(ARGV, a + 3, a + 2 + na)}
  k = k + nk
  a = a + 3 + na
  local ok, r = pcall(op, K, A)
  if ok then
    out[#out + 1] = r
  elseif type(r) == 'table' and r.err then
    out[#out + 1] = tostring(r.err)
  else
    out[#out + 1] = tostring(r)
  end
end
for _, key in ipairs(expiring) do redis.pcall('PEXPIRE', key, ttl_of[key]) end
return out
",
    )
});
