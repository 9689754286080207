package runtime

import "github.com/redis/go-redis/v9"

// enqueueScript adds a batch of jobs, each unless one with its id is
// pending, running or dead (idempotent enqueue; the check is skipped for the
// random ids the client makes, which cannot collide), and wakes the
// schedulers when one is due before the current head of the job queue. It
// writes the batch with one variadic HSET and one ZADD.
//
// KEYS: jobs, jobs:data, jobs:inflight, dead
// ARGV: wake_channel, n, then n groups of id, envelope, at_ms (0: use
// delay), delay_ms, check (1: fail when the id exists)
// Returns the due time in ms of each job, or -1 for one whose id exists.
var enqueueScript = redis.NewScript(luaNow + `
local n = tonumber(ARGV[2])
local out, data, queue, seen = {}, {}, {}, {}
local first
for i = 0, n - 1 do
  local o = 2 + 5 * i
  local id = ARGV[o + 1]
  if seen[id] or (ARGV[o + 5] == '1' and (redis.call('HEXISTS', KEYS[2], id) == 1 or
      redis.call('ZSCORE', KEYS[3], id) or redis.call('ZSCORE', KEYS[4], id))) then
    out[i + 1] = -1
  else
    seen[id] = true
    local due = tonumber(ARGV[o + 3])
    if due == 0 then due = now + tonumber(ARGV[o + 4]) end
    data[#data + 1] = id
    data[#data + 1] = ARGV[o + 2]
    queue[#queue + 1] = due
    queue[#queue + 1] = id
    if not first or due < first then first = due end
    out[i + 1] = due
  end
end
if first then
  local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  redis.call('HSET', KEYS[2], unpack(data))
  redis.call('ZADD', KEYS[1], unpack(queue))
  if not head[2] or first < tonumber(head[2]) then
    redis.call('PUBLISH', ARGV[1], 'job')
  end
end
return out
`)

// claimJobsScript pops up to limit due jobs, oldest first, into the
// in-flight set under a lease, and counts the attempt. It sends Redis a
// fixed number of variadic commands whatever the batch size (limit must stay
// under Lua's unpack bound of about 8000 values: WithBatch caps it).
//
// KEYS: jobs, jobs:data, jobs:attempt, jobs:inflight, jobs:owner
// ARGV: limit, lease_ms, process
// Returns {next_due_or_-1, id1, due1, attempt1, envelope1, id2, ...}.
var claimJobsScript = redis.NewScript(luaNow + `
local out = {-1}
local due = redis.call('ZRANGE', KEYS[1], '-inf', now, 'BYSCORE', 'LIMIT', 0, tonumber(ARGV[1]), 'WITHSCORES')
if #due > 0 then
  local ids = {}
  for i = 1, #due, 2 do ids[#ids + 1] = due[i] end
  redis.call('ZREM', KEYS[1], unpack(ids))
  local envs = redis.call('HMGET', KEYS[2], unpack(ids))
  local atts = redis.call('HMGET', KEYS[3], unpack(ids))
  local lease = now + tonumber(ARGV[2])
  local inflight, owners, attempts = {}, {}, {}
  for k, id in ipairs(ids) do
    local env = envs[k]
    if env then
      local attempt = (tonumber(atts[k]) or 0) + 1
      inflight[#inflight + 1] = lease
      inflight[#inflight + 1] = id
      owners[#owners + 1] = id
      owners[#owners + 1] = ARGV[3]
      attempts[#attempts + 1] = id
      attempts[#attempts + 1] = attempt
      out[#out + 1] = id
      out[#out + 1] = due[2 * k]
      out[#out + 1] = attempt
      out[#out + 1] = env
    end
  end
  if #inflight > 0 then
    redis.call('ZADD', KEYS[4], unpack(inflight))
    redis.call('HSET', KEYS[5], unpack(owners))
    redis.call('HSET', KEYS[3], unpack(attempts))
  end
end
local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if head[2] then out[1] = head[2] end
return out
`)

// luaHistoryMany defines push_history_many(key, records, limit, age_ms):
// push_history of each record in order (oldest first), trimming once.
const luaHistoryMany = `
local function push_history_many(key, records, limit, age)
  local t = redis.call('TYPE', key).ok
  if t ~= 'list' and t ~= 'none' then return false end -- a foreign value: no records
  if #records > 1 then redis.call('LPUSH', key, unpack(records, 1, #records - 1)) end
  push_history(key, records[#records], limit, age)
end
`

// ackJobsScript ends a batch of deliveries, each only if this process still
// owns it: done (ok, or failed for good: moved to the dead letters), put back
// for a retry at due_ms, or released (put back at due_ms, its attempt not
// counted). It keeps each type's totals and history. A batch costs a fixed
// number of variadic commands plus one per retry, release or dead job.
//
// KEYS: jobs, jobs:data, jobs:attempt, jobs:inflight, jobs:owner, dead,
// dead:data, stats, then the history key of each type in the batch
// ARGV: process, dead_limit, history_limit, history_age_ms, n, then n
// groups of id, action (ok|retry|dead|release), due_ms, type (1-based index
// into the types), record ("" when it would be trimmed anyway),
// dead_envelope; then the name of each type
// Returns the ids of deliveries that were no longer ours.
var ackJobsScript = redis.NewScript(luaNow + luaHistory + luaHistoryMany + `
local n = tonumber(ARGV[5])
local ids = {}
for i = 0, n - 1 do ids[i + 1] = ARGV[6 + 6 * i] end
local owners = redis.call('HMGET', KEYS[5], unpack(ids))
local lost, mine, done = {}, {}, {}
local runs, fails, recs = {}, {}, {}
local dead = false
for i = 0, n - 1 do
  local o = 5 + 6 * i
  local id, action, due, t, rec = ARGV[o + 1], ARGV[o + 2], ARGV[o + 3], tonumber(ARGV[o + 4]), ARGV[o + 5]
  if owners[i + 1] ~= ARGV[1] then
    lost[#lost + 1] = id
  else
    mine[#mine + 1] = id
    if action == 'release' then
      if type(redis.pcall('HINCRBY', KEYS[3], id, -1)) == 'table' then redis.call('HSET', KEYS[3], id, 0) end
      redis.call('ZADD', KEYS[1], due, id)
    else
      runs[t] = (runs[t] or 0) + 1
      if action ~= 'ok' then fails[t] = (fails[t] or 0) + 1 end
      if action == 'retry' then
        redis.call('ZADD', KEYS[1], due, id)
      else
        done[#done + 1] = id
        if action == 'dead' then
          redis.call('ZADD', KEYS[6], now, id)
          redis.call('HSET', KEYS[7], id, ARGV[o + 6])
          dead = true
        end
      end
      if rec ~= '' then
        recs[t] = recs[t] or {}
        recs[t][#recs[t] + 1] = rec
      end
    end
  end
end
if #mine > 0 then
  redis.call('ZREM', KEYS[4], unpack(mine))
  redis.call('HDEL', KEYS[5], unpack(mine))
end
if #done > 0 then
  redis.call('HDEL', KEYS[2], unpack(done))
  redis.call('HDEL', KEYS[3], unpack(done))
end
if dead then
  local over = redis.call('ZCARD', KEYS[6]) - tonumber(ARGV[2])
  if over > 0 then
    local old = redis.call('ZRANGE', KEYS[6], 0, over - 1)
    redis.call('ZREMRANGEBYRANK', KEYS[6], 0, over - 1)
    redis.call('HDEL', KEYS[7], unpack(old))
  end
end
for t = 1, #KEYS - 8 do
  local name = ARGV[5 + 6 * n + t]
  if runs[t] then
    incr(KEYS[8], name .. ':runs', runs[t])
    if fails[t] then incr(KEYS[8], name .. ':failures', fails[t]) end
  end
  if recs[t] then push_history_many(KEYS[8 + t], recs[t], tonumber(ARGV[3]), tonumber(ARGV[4])) end
end
return lost
`)

// renewJobsScript extends the leases of in-flight jobs still owned by this
// process.
//
// KEYS: jobs:inflight, jobs:owner
// ARGV: process, lease_ms, id...
var renewJobsScript = redis.NewScript(luaNow + `
local n = 0
for i = 3, #ARGV do
  if redis.call('HGET', KEYS[2], ARGV[i]) == ARGV[1] then
    redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[i])
    n = n + 1
  end
end
return n
`)

// redeliverScript puts jobs whose lease expired (their process died or
// stalled) back in the queue, due now: at-least-once delivery.
//
// KEYS: jobs, jobs:inflight, jobs:owner
// ARGV: limit, not_after_ms (optional: it does nothing when run later)
// Returns {id, owner, id, owner, ...} of the jobs put back.
var redeliverScript = redis.NewScript(luaNow + `
local out = {}
if ARGV[2] and now > tonumber(ARGV[2]) then return out end -- run late (a stall): leases look expired
local ids = redis.call('ZRANGE', KEYS[2], '-inf', now, 'BYSCORE', 'LIMIT', 0, tonumber(ARGV[1]))
for _, id in ipairs(ids) do
  local owner = redis.call('HGET', KEYS[3], id) or ''
  redis.call('ZREM', KEYS[2], id)
  redis.call('HDEL', KEYS[3], id)
  redis.call('ZADD', KEYS[1], now, id)
  out[#out + 1] = id
  out[#out + 1] = owner
end
return out
`)

// cancelScript removes a pending job.
//
// KEYS: jobs, jobs:data, jobs:attempt, jobs:inflight
// ARGV: id
// Returns 1 when cancelled, 2 when it is running, 0 when there is no such
// pending job.
var cancelScript = redis.NewScript(`
if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then
  redis.call('HDEL', KEYS[2], ARGV[1])
  redis.call('HDEL', KEYS[3], ARGV[1])
  return 1
end
if redis.call('ZSCORE', KEYS[4], ARGV[1]) then return 2 end
return 0
`)

// retryDeadScript moves a dead job back to the queue, due now, with its
// attempts reset.
//
// KEYS: dead, dead:data, jobs, jobs:data, jobs:attempt
// ARGV: id, envelope (the original, without the error)
var retryDeadScript = redis.NewScript(luaNow + `
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[4], ARGV[1], ARGV[2])
redis.call('HDEL', KEYS[5], ARGV[1])
redis.call('ZADD', KEYS[3], now, ARGV[1])
return 1
`)
