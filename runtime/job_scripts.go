package runtime

import "github.com/redis/go-redis/v9"

// enqueueScript adds a job unless one with its id is pending, running or
// dead (idempotent enqueue), and wakes the schedulers when it is due before
// the current head of the job queue.
//
// KEYS: jobs, jobs:data, jobs:inflight, dead
// ARGV: id, envelope, at_ms (0: use delay), delay_ms, wake_channel
// Returns the due time in ms, or -1 when the id exists.
var enqueueScript = redis.NewScript(luaNow + `
local id = ARGV[1]
if redis.call('HEXISTS', KEYS[2], id) == 1 or redis.call('ZSCORE', KEYS[3], id) or redis.call('ZSCORE', KEYS[4], id) then
  return -1
end
local due = tonumber(ARGV[3])
if due == 0 then due = now + tonumber(ARGV[4]) end
local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
redis.call('HSET', KEYS[2], id, ARGV[2])
redis.call('ZADD', KEYS[1], due, id)
if not head[2] or due < tonumber(head[2]) then
  redis.call('PUBLISH', ARGV[5], 'job')
end
return due
`)

// claimJobsScript pops up to limit due jobs, oldest first, into the
// in-flight set under a lease, and counts the attempt.
//
// KEYS: jobs, jobs:data, jobs:attempt, jobs:inflight, jobs:owner
// ARGV: limit, lease_ms, process
// Returns {next_due_or_-1, id1, due1, attempt1, envelope1, id2, ...}.
var claimJobsScript = redis.NewScript(luaNow + `
local out = {-1}
local due = redis.call('ZRANGE', KEYS[1], '-inf', now, 'BYSCORE', 'LIMIT', 0, tonumber(ARGV[1]), 'WITHSCORES')
for i = 1, #due, 2 do
  local id = due[i]
  redis.call('ZREM', KEYS[1], id)
  local env = redis.call('HGET', KEYS[2], id)
  if env then
    redis.call('ZADD', KEYS[4], now + tonumber(ARGV[2]), id)
    redis.call('HSET', KEYS[5], id, ARGV[3])
    local attempt = redis.call('HINCRBY', KEYS[3], id, 1)
    out[#out + 1] = id
    out[#out + 1] = due[i + 1]
    out[#out + 1] = attempt
    out[#out + 1] = env
  end
end
local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if head[2] then out[1] = head[2] end
return out
`)

// ackJobScript ends a job's delivery, if this process still owns it: done
// (ok, or failed for good: moved to the dead letters), or put back for a
// retry at due_ms. It keeps the type's totals and history.
//
// KEYS: jobs, jobs:data, jobs:attempt, jobs:inflight, jobs:owner, dead,
// dead:data, stats, history
// ARGV: id, process, action (ok|retry|dead|release), due_ms, dead_envelope,
// dead_limit, type, record, history_limit, history_age_ms
// Returns 1, or 0 when the delivery was no longer ours.
var ackJobScript = redis.NewScript(luaNow + luaHistory + `
local id = ARGV[1]
if redis.call('HGET', KEYS[5], id) ~= ARGV[2] then return 0 end
redis.call('ZREM', KEYS[4], id)
redis.call('HDEL', KEYS[5], id)
local action = ARGV[3]
if action == 'release' then
  redis.call('HINCRBY', KEYS[3], id, -1)
  redis.call('ZADD', KEYS[1], ARGV[4], id)
  return 1
end
redis.call('HINCRBY', KEYS[8], ARGV[7] .. ':runs', 1)
if action ~= 'ok' then redis.call('HINCRBY', KEYS[8], ARGV[7] .. ':failures', 1) end
if action == 'retry' then
  redis.call('ZADD', KEYS[1], ARGV[4], id)
else
  redis.call('HDEL', KEYS[2], id)
  redis.call('HDEL', KEYS[3], id)
  if action == 'dead' then
    redis.call('ZADD', KEYS[6], now, id)
    redis.call('HSET', KEYS[7], id, ARGV[5])
    local over = redis.call('ZCARD', KEYS[6]) - tonumber(ARGV[6])
    if over > 0 then
      local old = redis.call('ZRANGE', KEYS[6], 0, over - 1)
      redis.call('ZREMRANGEBYRANK', KEYS[6], 0, over - 1)
      redis.call('HDEL', KEYS[7], unpack(old))
    end
  end
end
push_history(KEYS[9], ARGV[8], tonumber(ARGV[9]), tonumber(ARGV[10]))
return 1
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
