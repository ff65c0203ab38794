/**
 * Lua scripts of the Redis hot tier. Every key a script touches belongs to one shard and so
 * shares the shard's hash tag: KEYS[1] is the shard's key prefix `s4:{ns:shard}:`, from which
 * the script derives the rest, which is safe on Redis Cluster and MemoryDB because all of them
 * hash to the same slot.
 *
 * Keys of a shard (P = prefix):
 *   P..'windows'                 ZSET  window start -> window start (windows holding hot data)
 *   P..'w:'..W..':meta'          HASH  series id -> series key as JSON
 *   P..'w:'..W..':m:'..metric    SET   series ids of that metric in window W
 *   P..'w:'..W..':log:'..id      STRING append log of one series in window W
 *   P..'gen'                     INT   catalog generation
 *   P..'fence'                   INT   last fencing token handed out
 *   P..'lease'                   STRING 'owner|fence', with a TTL
 *   P..'released'                STRING 'owner|fence' of the lease last given up
 */

/**
 * ARGV: n, then n times (window, id, metric, keyJson, data). One command per append when the log exists:
 * a log is only ever present with its meta entry, its metric set membership and its window listed
 * (RELEASE removes them together, a window once its meta is empty), so those are written only when
 * APPEND made the log, that is when the log's length after it is the appended length. Logs written
 * by earlier versions of this script keep the same layout.
 */
export const APPEND = `
local p = KEYS[1]
local n = tonumber(ARGV[1])
local lastW, wp
for i = 0, n - 1 do
  local b = 2 + i * 5
  local w, id, data = ARGV[b], ARGV[b + 1], ARGV[b + 4]
  if w ~= lastW then
    lastW, wp = w, p .. 'w:' .. w .. ':'
  end
  if redis.call('APPEND', wp .. 'log:' .. id, data) == #data then
    redis.call('ZADD', p .. 'windows', w, w)
    redis.call('HSETNX', wp .. 'meta', id, ARGV[b + 3])
    redis.call('SADD', wp .. 'm:' .. ARGV[b + 2], id)
  end
end
return n
`;

/**
 * Whether the lease ARGV[1] ('owner|fence') is still its holder's: held, or expired with nobody
 * taking the shard since (the fence has not moved) and not given up. A TTL only lets others in.
 */
const OWNED = `
local held = redis.call('GET', p .. 'lease')
local owned = held == ARGV[1]
if not held then
  owned = redis.call('GET', p .. 'fence') == string.match(ARGV[1], '|(%d+)$') and redis.call('GET', p .. 'released') ~= ARGV[1]
end
`;

const LEASE_CHECK = `${OWNED}
if not owned then return redis.error_reply('S4LEASE lease lost') end
`;

/** ARGV: 'owner|fence', window, n, then n times (id, length). */
export const RELEASE = `
local p = KEYS[1]
${LEASE_CHECK}
local w = ARGV[2]
local wp = p .. 'w:' .. w .. ':'
local n = tonumber(ARGV[3])
for i = 0, n - 1 do
  local id, len = ARGV[4 + i * 2], tonumber(ARGV[5 + i * 2])
  local logKey = wp .. 'log:' .. id
  local size = redis.call('STRLEN', logKey)
  if size <= len then
    redis.call('DEL', logKey)
    local key = redis.call('HGET', wp .. 'meta', id)
    if key then
      local metric = cjson.decode(key)['metric']
      redis.call('SREM', wp .. 'm:' .. metric, id)
      redis.call('HDEL', wp .. 'meta', id)
    end
  else
    local rest = redis.call('GETRANGE', logKey, len, -1)
    redis.call('SET', logKey, rest)
  end
end
if redis.call('HLEN', wp .. 'meta') == 0 then
  redis.call('ZREM', p .. 'windows', w)
end
return n
`;

/** ARGV: metric, fromWindow, lastWindow. Returns { gen, w1, id1, key1, log1, w2, ... }. */
export const SCAN = `
local p = KEYS[1]
local out = { tonumber(redis.call('GET', p .. 'gen') or '0') }
local windows = redis.call('ZRANGEBYSCORE', p .. 'windows', ARGV[2], ARGV[3])
for _, w in ipairs(windows) do
  local wp = p .. 'w:' .. w .. ':'
  for _, id in ipairs(redis.call('SMEMBERS', wp .. 'm:' .. ARGV[1])) do
    out[#out + 1] = w
    out[#out + 1] = id
    out[#out + 1] = redis.call('HGET', wp .. 'meta', id)
    out[#out + 1] = redis.call('GET', wp .. 'log:' .. id)
  end
end
return out
`;

/**
 * The series of one metric in the windows of a range, without their logs: what a scan of some
 * series reads first (the caller picks the series by their tags) and what seriesIn lists.
 * ARGV: metric, fromWindow, lastWindow, then the tag = value pairs the selector requires, if any,
 * each as the JSON text it is in a series key (`"k":"v"`). Returns { gen, w1, id1, key1, w2, ... }:
 * the series whose keys hold every pair, that is the text followed by `,` or `}` (inside a JSON
 * string every `"` is escaped, so the text can only stand at a member of the key; `"metric":"…"`
 * can pass for a tag named metric, which the caller's test of the whole selector then drops).
 * O(series of the metric) in Redis, but only the series that can match are sent: sending every
 * key for the engine to parse and test cost more than the rest of a one-series query (at 1 M
 * series about 3,000 keys a shard, 16 shards, to pick one series). The generation is read with
 * the list: when the caller picks none of the series, no log of its selection is hot at that
 * generation, and that is a complete scan.
 */
export const SERIES = `
local p = KEYS[1]
local out = { tonumber(redis.call('GET', p .. 'gen') or '0') }
local windows = redis.call('ZRANGEBYSCORE', p .. 'windows', ARGV[2], ARGV[3])
local comma, brace = {}, {}
for j = 4, #ARGV do
  comma[#comma + 1] = ARGV[j] .. ','
  brace[#brace + 1] = ARGV[j] .. '}'
end
for _, w in ipairs(windows) do
  local wp = p .. 'w:' .. w .. ':'
  local ids = redis.call('SMEMBERS', wp .. 'm:' .. ARGV[1])
  -- HMGET by slices: unpack of more than a few thousand values overflows Lua's stack.
  for at = 1, #ids, 1000 do
    local last = math.min(at + 999, #ids)
    local keys = redis.call('HMGET', wp .. 'meta', unpack(ids, at, last))
    for i = at, last do
      local key = keys[i - at + 1]
      if key then
        local held = true
        for j = 1, #comma do
          if not (string.find(key, comma[j], 1, true) or string.find(key, brace[j], 1, true)) then
            held = false
            break
          end
        end
        if held then
          out[#out + 1] = w
          out[#out + 1] = ids[i]
          out[#out + 1] = key
        end
      end
    end
  end
end
return out
`;

/**
 * The logs of chosen series, with the generation, atomically (the HotScan contract).
 * ARGV: fromWindow, lastWindow, then series ids. Returns { gen, w1, id1, log1, w2, ... }, only
 * logs that exist: a series chosen from SERIES may have been released meanwhile (its bytes are
 * then in the catalog of this generation) or have no log in some windows.
 */
export const SCAN_SERIES = `
local p = KEYS[1]
local out = { tonumber(redis.call('GET', p .. 'gen') or '0') }
local windows = redis.call('ZRANGEBYSCORE', p .. 'windows', ARGV[1], ARGV[2])
for _, w in ipairs(windows) do
  local wp = p .. 'w:' .. w .. ':'
  for i = 3, #ARGV do
    local log = redis.call('GET', wp .. 'log:' .. ARGV[i])
    if log then
      out[#out + 1] = w
      out[#out + 1] = ARGV[i]
      out[#out + 1] = log
    end
  end
end
return out
`;

/** ARGV: owner, ttlMs. Returns the fence, or nil when another owner holds the lease. */
export const ACQUIRE = `
local p = KEYS[1]
local held = redis.call('GET', p .. 'lease')
if held then
  local owner, fence = string.match(held, '^(.*)|(%d+)$')
  if owner == ARGV[1] then
    redis.call('PEXPIRE', p .. 'lease', ARGV[2])
    return tonumber(fence)
  end
  return false
end
local fence = redis.call('INCR', p .. 'fence')
redis.call('SET', p .. 'lease', ARGV[1] .. '|' .. fence, 'PX', ARGV[2])
return fence
`;

/** ARGV: 'owner|fence', ttlMs. */
export const RENEW = `
local p = KEYS[1]
${OWNED}
if not owned then return 0 end
redis.call('SET', p .. 'lease', ARGV[1], 'PX', ARGV[2])
return 1
`;

/** ARGV: 'owner|fence'. */
export const UNLOCK = `
local p = KEYS[1]
if redis.call('GET', p .. 'lease') == ARGV[1] then redis.call('DEL', p .. 'lease') end
redis.call('SET', p .. 'released', ARGV[1])
return 1
`;

/** ARGV: 'owner|fence'. */
export const BUMP = `
local p = KEYS[1]
${LEASE_CHECK}
return redis.call('INCR', p .. 'gen')
`;

/** Unflushed bytes and series logs of the shard: `{ bytes, logs }`. One call, O(logs of the shard). */
export const SHARD_STATS = `
local p = KEYS[1]
local bytes, logs = 0, 0
for _, w in ipairs(redis.call('ZRANGE', p .. 'windows', 0, -1)) do
  local wp = p .. 'w:' .. w .. ':'
  for _, id in ipairs(redis.call('HKEYS', wp .. 'meta')) do
    bytes = bytes + redis.call('STRLEN', wp .. 'log:' .. id)
    logs = logs + 1
  end
end
return { bytes, logs }
`;
