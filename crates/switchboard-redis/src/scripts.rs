//! The Lua scripts: each store operation is one script, so one round trip and atomic in Redis.
//!
//! Stream numbers are compared as decimal strings (length, then text): they can exceed the
//! 2^53 that Lua's numbers hold exactly.

/// Creates or replaces a session record, unless the session bound is reached.
/// KEYS: record hash, sessions index. ARGV: hashed id, now (ms), ttl (ms), max sessions,
/// snapshot, owner, node (empty: none). Returns 1, or 0 when full.
pub(crate) const CREATE: &str = r"
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[2])
if redis.call('EXISTS', KEYS[1]) == 0 and redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then
  return 0
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'v', '1')
if ARGV[5] ~= '' then redis.call('HSET', KEYS[1], 'snapshot', ARGV[5]) end
if ARGV[6] ~= '' then redis.call('HSET', KEYS[1], 'owner', ARGV[6]) end
if ARGV[7] ~= '' then redis.call('HSET', KEYS[1], 'node', ARGV[7]) end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[2], tonumber(ARGV[2]) + tonumber(ARGV[3]), ARGV[1])
return 1
";

/// Removes a record, only if it names the given node (empty: any).
/// KEYS: record hash, sessions index. ARGV: hashed id, node. Returns 1 when removed.
pub(crate) const REMOVE: &str = r"
if ARGV[2] ~= '' then
  local n = redis.call('HGET', KEYS[1], 'node')
  if n and n ~= ARGV[2] then return 0 end
end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
";

/// Moves a session to a node if its record names the expected node (empty: none) or that
/// node already. KEYS: record hash, sessions index. ARGV: hashed id, expected, node, now (ms),
/// ttl (ms). Returns {status, fields}: 0 gone, 1 won, 2 lost.
pub(crate) const CLAIM: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, {}} end
local n = redis.call('HGET', KEYS[1], 'node') or ''
if n == ARGV[2] or n == ARGV[3] then
  redis.call('HSET', KEYS[1], 'node', ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  redis.call('ZADD', KEYS[2], tonumber(ARGV[4]) + tonumber(ARGV[5]), ARGV[1])
  return {1, redis.call('HGETALL', KEYS[1])}
end
return {2, redis.call('HGETALL', KEYS[1])}
";

/// Renews the records and events of the sessions a node serves.
/// KEYS: sessions index. ARGV: ttl (ms), expiry (ms), key prefix, then hashed ids.
/// Returns how many records were still there.
pub(crate) const KEEP_ALIVE: &str = r"
local alive = 0
for i = 4, #ARGV do
  local h = ARGV[i]
  if redis.call('PEXPIRE', ARGV[3] .. ':s:' .. h, ARGV[1]) == 1 then
    redis.call('ZADD', KEYS[1], ARGV[2], h)
    alive = alive + 1
  end
  local es = ARGV[3] .. ':es:' .. h
  if redis.call('PEXPIRE', es, ARGV[1]) == 1 then
    for _, s in ipairs(redis.call('HKEYS', es)) do
      if s ~= '_total' then redis.call('PEXPIRE', ARGV[3] .. ':e:' .. h .. ':' .. s, ARGV[1]) end
    end
  end
end
return alive
";

/// Appends one event and applies the bounds (oldest events of the stream first, then the
/// session's oldest other streams). KEYS: stream set, session's byte hash. ARGV: seq, data,
/// stream, max events per stream, max bytes per stream, max bytes per session, max streams
/// per session, ttl (ms), the session's stream key prefix, the overhead per event.
/// Returns 1 when kept, 0 when the event alone is over a bound (not kept).
pub(crate) const APPEND: &str = r"
local overhead = tonumber(ARGV[10])
local cost = #ARGV[2] + overhead
if cost > tonumber(ARGV[5]) or cost > tonumber(ARGV[6]) then return 0 end
if redis.call('ZADD', KEYS[1], ARGV[1], ARGV[1] .. ':' .. ARGV[2]) == 1 then
  redis.call('HINCRBY', KEYS[2], ARGV[3], cost)
  redis.call('HINCRBY', KEYS[2], '_total', cost)
end
while true do
  local n = redis.call('ZCOUNT', KEYS[1], '(0', '+inf')
  local b = tonumber(redis.call('HGET', KEYS[2], ARGV[3]) or '0')
  if n <= tonumber(ARGV[4]) and b <= tonumber(ARGV[5]) then break end
  -- The oldest event (score 0 is the stream's requests, which stay while the stream does).
  local first = redis.call('ZRANGEBYSCORE', KEYS[1], '(0', '+inf', 'LIMIT', 0, 1)
  if #first == 0 then break end
  redis.call('ZREM', KEYS[1], first[1])
  local c = #first[1] - string.find(first[1], ':', 1, true) + overhead
  redis.call('HINCRBY', KEYS[2], ARGV[3], -c)
  redis.call('HINCRBY', KEYS[2], '_total', -c)
end
local function older(a, b)
  if #a ~= #b then return #a < #b end
  return a < b
end
while true do
  local total = tonumber(redis.call('HGET', KEYS[2], '_total') or '0')
  local streams = redis.call('HLEN', KEYS[2]) - 1
  if total <= tonumber(ARGV[6]) and streams <= tonumber(ARGV[7]) then break end
  local oldest = nil
  for _, s in ipairs(redis.call('HKEYS', KEYS[2])) do
    if s ~= '_total' and s ~= ARGV[3] and (oldest == nil or older(s, oldest)) then oldest = s end
  end
  if oldest == nil then break end
  local b = tonumber(redis.call('HGET', KEYS[2], oldest) or '0')
  redis.call('DEL', ARGV[9] .. ':' .. oldest)
  redis.call('HDEL', KEYS[2], oldest)
  redis.call('HINCRBY', KEYS[2], '_total', -b)
end
redis.call('PEXPIRE', KEYS[1], ARGV[8])
redis.call('PEXPIRE', KEYS[2], ARGV[8])
return 1
";

/// Keeps the requests that opened a stream, at score 0 of its set (never replayed: a replay
/// starts after a sequence number of at least 0). KEYS: stream set, session's byte hash.
/// ARGV: body, stream, max bytes per stream, ttl (ms), the overhead per event.
/// Returns 1 when kept, 0 when over the stream's bound.
pub(crate) const KEEP_REQUESTS: &str = r"
local cost = #ARGV[1] + tonumber(ARGV[5])
if cost > tonumber(ARGV[3]) then return 0 end
if redis.call('ZADD', KEYS[1], 0, '0:' .. ARGV[1]) == 1 then
  redis.call('HINCRBY', KEYS[2], ARGV[2], cost)
  redis.call('HINCRBY', KEYS[2], '_total', cost)
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1
";

/// The events of a stream after a sequence number. KEYS: stream set. ARGV: after, limit.
/// Returns {known, members}: known is 0 when the stream is not kept.
pub(crate) const REPLAY: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, {}} end
return {1, redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf', 'LIMIT', 0, tonumber(ARGV[2]))}
";

/// Forgets every event of a session. KEYS: the session's byte hash. ARGV: its stream key
/// prefix.
pub(crate) const REMOVE_EVENTS: &str = r"
for _, s in ipairs(redis.call('HKEYS', KEYS[1])) do
  if s ~= '_total' then redis.call('DEL', ARGV[1] .. ':' .. s) end
end
redis.call('DEL', KEYS[1])
return 1
";

/// Where a session is served. KEYS: record hash. ARGV: node key prefix (`P:node`).
/// Returns {} (no session), {''} (no node), {node} (a node not announced), {node, url}.
pub(crate) const LOCATE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
local n = redis.call('HGET', KEYS[1], 'node')
if not n then return {''} end
local url = redis.call('GET', ARGV[1] .. ':' .. n)
if not url then return {n} end
return {n, url}
";
