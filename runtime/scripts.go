package runtime

import "github.com/redis/go-redis/v9"

// Every script reads Redis server time itself (TIME) where a decision
// depends on "now", and declares every key it touches in KEYS, so it runs
// unchanged on Redis Cluster (all keys of a namespace share one slot).

// luaNow is the prelude that sets `now` to the server time in
// milliseconds. It also defines the variadic helpers, which every script
// that passes a list of its own making to a command uses:
//
// callk(cmd, key, list[, i, j]) is redis.call(cmd, key, list[i..j]...) sent
// in chunks of at most luaChunk values, because Lua's unpack fails past
// about 8,000 values (LUAI_MAXCSTACK), which a script must never reach
// after it has written. Only commands whose effect is the same in chunks
// use it (HSET, HDEL, HMGET, ZADD, ZREM, SADD, SREM, LPUSH, ...). It
// returns the concatenated replies of a command that answers with an array
// (HMGET: one value per field, false for a missing one) and the sum of the
// integer replies of the others.
//
// calln(cmd, list) is the same for a command without a key argument of
// its own (DEL, MGET).
//
// want_type(key, type) fails the script with a WRONGTYPE error when key
// holds a value of another type: a script checks each key it will write
// before its first write.
const luaNow = `
local __t = redis.call('TIME')
local now = tonumber(__t[1]) * 1000 + math.floor(tonumber(__t[2]) / 1000)
local function __callv(cmd, key, list, i, j)
  i, j = i or 1, j or #list
  local out, sum = {}, 0
  while i <= j do
    local e = math.min(i + ` + luaChunk + ` - 1, j)
    local r
    if key then r = redis.call(cmd, key, unpack(list, i, e)) else r = redis.call(cmd, unpack(list, i, e)) end
    if type(r) == 'table' then
      for k = 1, #r do out[#out + 1] = r[k] end
    elseif type(r) == 'number' then
      sum = sum + r
    end
    i = e + 1
  end
  return out, sum
end
local function callk(cmd, key, list, i, j) return __callv(cmd, key, list, i, j) end
local function calln(cmd, list) return __callv(cmd, nil, list) end
local function want_type(key, t)
  local have = redis.call('TYPE', key).ok
  if have ~= t and have ~= 'none' then
    error({err = 'WRONGTYPE ' .. key .. ' holds a ' .. have .. ', not a ' .. t})
  end
end
`

// luaChunk is how many values callk and calln pass to one command: even
// (field/value and score/member pairs stay whole) and well under Lua's
// unpack bound.
const luaChunk = "4000"

// luaHistory is the prelude that defines push_history(key, record, limit,
// age_ms): LPUSH the record, trim to limit, drop records older than age from
// the tail and let the whole list expire after age without writes; it
// returns false, writing nothing, when the key holds another type (a
// foreign value), so the rest of the script still runs. It also
// defines incr(key, field, n), an HINCRBY that resets a counter holding
// garbage to n instead of failing the script: a script that fails half way
// keeps its earlier writes (Redis does not roll back), so one corrupt
// counter must not stop the claims of every other task. Every redis.call
// costs a script about as much as the command itself, so these make as few
// as they can: the LPUSH's error stands for a TYPE check, and its length
// tells whether LTRIM has anything to do.
const luaHistory = `
local function incr(key, field, n)
  local r = redis.pcall('HINCRBY', key, field, n)
  if type(r) == 'table' and r.err then redis.pcall('HSET', key, field, n) end
end
local function push_history(key, record, limit, age)
  local len = redis.pcall('LPUSH', key, record)
  if type(len) ~= 'number' then return false end -- WRONGTYPE: nothing written
  if len > limit then redis.call('LTRIM', key, 0, limit - 1) end
  for _ = 1, 16 do
    local tail = redis.call('LINDEX', key, -1)
    if not tail then break end
    local ok, r = pcall(cjson.decode, tail)
    if ok and type(r) == 'table' and tonumber(r.end_ms or r.fire) and tonumber(r.end_ms or r.fire) >= now - age then break end
    redis.call('RPOP', key)
  end
  redis.call('PEXPIRE', key, age)
  return true
end
`

// registerScript writes one declared task: created if absent; expression or
// zone changes reschedule it; the status, an operator's, is kept.
//
// KEYS: task, queue, tasks, meta, declared
// ARGV: member, now, next, status, expression, tz, interval, class, type,
// timeout_ms, concurrent, misfire, retries, source
var registerScript = redis.NewScript(`
local member = ARGV[1]
redis.call('HSETNX', KEYS[4], 'created_at', ARGV[2])
redis.call('ZADD', KEYS[5], ARGV[2], member)
redis.call('SADD', KEYS[3], member)
local changed = 0
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'name', member, 'class', ARGV[8], 'type', ARGV[9],
    'expression', ARGV[5], 'tz', ARGV[6], 'interval', ARGV[7], 'status', ARGV[4],
    'next_run', ARGV[3], 'last_run', 0, 'created_at', ARGV[2], 'timeout', ARGV[10],
    'concurrent', ARGV[11], 'misfire', ARGV[12], 'retries', ARGV[13], 'source', ARGV[14],
    'runs', 0, 'failures', 0, 'skips', 0)
  changed = 1
else
  redis.call('HSET', KEYS[1], 'name', member, 'class', ARGV[8], 'type', ARGV[9], 'timeout', ARGV[10],
    'concurrent', ARGV[11], 'misfire', ARGV[12], 'retries', ARGV[13], 'source', ARGV[14])
  local cur = redis.call('HMGET', KEYS[1], 'expression', 'tz', 'next_run')
  if cur[1] ~= ARGV[5] or cur[2] ~= ARGV[6] or not tonumber(cur[3]) then
    redis.call('HSET', KEYS[1], 'expression', ARGV[5], 'tz', ARGV[6], 'interval', ARGV[7], 'next_run', ARGV[3])
    changed = 1
  end
end
local st = redis.call('HGET', KEYS[1], 'status')
local nr = tonumber(redis.call('HGET', KEYS[1], 'next_run'))
if st == 'disabled' or nr == 0 then
  redis.call('ZREM', KEYS[2], member)
elseif changed == 1 or not redis.call('ZSCORE', KEYS[2], member) then
  redis.call('ZADD', KEYS[2], nr, member)
end
return changed
`)

// advanceScript claims due fires atomically, oldest first: for each
// candidate whose next_run still equals the fire the caller read (the
// compare-and-set that makes every instant fire once), it moves next_run on,
// then either records a skip or takes the lock and the run lease.
//
// KEYS: queue, running, then per candidate: task, lock, run, history
// ARGV: process, history_limit, history_age_ms, max_fires, then per
// candidate: member, fire, next, mode ("run" or "skip"), run_id, lease_json
// Returns one status string per candidate: fire, fire-foreign-lock (it
// replaced a lock without expiry), stale, early, missing, disabled, paused,
// misfire, locked, bad (the task key is not a hash), untried (max_fires
// fires were won before it: it was not looked at).
//
// The queue entries moved on and the running entries added are written at
// the end, with one variadic ZADD and SADD (a call from a script costs about
// as much as the command). ZCARD and SCARD first fail the script on a queue
// or running set of the wrong type before anything is written, as the first
// ZADD or SADD did when they were written per candidate.
var advanceScript = redis.NewScript(luaNow + luaHistory + `
redis.call('ZCARD', KEYS[1])
redis.call('SCARD', KEYS[2])
local out = {}
local queued, running = {}, {} -- ZADD score/member pairs; SADD run ids
local n = (#KEYS - 2) / 4
local won, maxf = 0, tonumber(ARGV[4])
for i = 0, n - 1 do
  if won >= maxf then
    out[#out + 1] = 'untried'
  else
    local task, lock, run, hist = KEYS[3 + 4*i], KEYS[4 + 4*i], KEYS[5 + 4*i], KEYS[6 + 4*i]
    local member, fire, nxt, mode, runid, lease = ARGV[5 + 6*i], ARGV[6 + 6*i], ARGV[7 + 6*i], ARGV[8 + 6*i], ARGV[9 + 6*i], ARGV[10 + 6*i]
    local h = redis.pcall('HMGET', task, 'next_run', 'status', 'concurrent', 'timeout')
    local res
    if h.err then
      res = 'bad' -- not a hash: left alone (the caller skips it when it reads the task)
    elseif not h[1] then
      redis.call('ZREM', KEYS[1], member)
      res = 'missing'
    elseif h[1] ~= fire then
      res = 'stale'
    elseif tonumber(fire) > now then
      redis.call('ZADD', KEYS[1], fire, member)
      res = 'early'
    elseif h[2] == 'disabled' then
      redis.call('ZREM', KEYS[1], member)
      res = 'disabled'
    else
      if nxt == '0' then
        redis.call('ZREM', KEYS[1], member)
      else
        queued[#queued + 1] = nxt
        queued[#queued + 1] = member
      end
      local fired = false -- next_run is written below, with last_run when it fires
      local function skip(reason)
        incr(task, 'skips', 1)
        push_history(hist, cjson.encode({task = member, fire = tonumber(fire), start_ms = now, end_ms = now,
          outcome = 'skipped', error = reason, process = ARGV[1], attempt = 0}), tonumber(ARGV[2]), tonumber(ARGV[3]))
      end
      if h[2] ~= 'active' then
        incr(task, 'skips', 1)
        res = 'paused'
      elseif mode == 'skip' then
        skip('misfire: missed while no scheduler ran')
        res = 'misfire'
      else
        local timeout = tonumber(h[4]) or 300000
        local got, foreign = true, false
        if h[3] ~= '1' then
          got = redis.call('SET', lock, ARGV[1] .. '|' .. fire, 'NX', 'PX', timeout)
          if not got and redis.call('PTTL', lock) == -1 then
            -- A lock without expiry (or not a string) is nobody's: every
            -- scheduler's lock expires. Replace it rather than skip forever.
            redis.call('SET', lock, ARGV[1] .. '|' .. fire, 'PX', timeout)
            got, foreign = true, true
          end
        end
        if not got then
          skip('previous run still running')
          res = 'locked'
        else
          fired = true
          running[#running + 1] = runid
          redis.call('SET', run, lease, 'PX', timeout)
          res = foreign and 'fire-foreign-lock' or 'fire'
        end
      end
      if fired then
        redis.call('HSET', task, 'next_run', nxt, 'last_run', fire)
      else
        redis.call('HSET', task, 'next_run', nxt)
      end
    end
    if res == 'fire' or res == 'fire-foreign-lock' then won = won + 1 end
    out[#out + 1] = res
  end
end
if #queued > 0 then callk('ZADD', KEYS[1], queued) end
if #running > 0 then callk('SADD', KEYS[2], running) end
return out
`)

// finishRunsScript records a batch of completed runs, each as the former
// one-run finish script did: it releases the run's lock (only if still
// ours: the value names this process and the fire), its lease and its
// running entry, sets the task's last_result, last_error and last_duration,
// counts runs and failures, removes a once task whose next_run is 0, and
// appends the history record (trimmed by count and age). The running entries,
// leases and locks of the batch are removed with one variadic command each,
// and the records of one task with one LPUSH. A key of the wrong type for one
// run (task, lock or history) skips that write for that run only, so it
// cannot fail the batch.
//
// KEYS: running, queue, tasks, then per run: task, lock, run, history
// ARGV: history_limit, history_age_ms, then per run: run_id, lock_value,
// outcome, error, duration_ms, record_json ("" when the history would trim
// it anyway), once, member
// Returns one code per run: 1, or 2 when the history key holds a foreign
// value (the run's record was not written).
var finishRunsScript = redis.NewScript(luaNow + luaHistory + `
-- plus_one(v) is HINCRBY v 1 done in Lua, for a field read with HMGET: nil
-- when HINCRBY would refuse v (not a canonical integer) or when v is too
-- large for a Lua number to count exactly; then incr() writes it.
local function plus_one(v)
  if not v then return 1 end
  if #v <= 15 and (v == '0' or string.match(v, '^-?[1-9]%d*$')) then return tonumber(v) + 1 end
  return nil
end
local n = (#KEYS - 3) / 4
local limit, age = tonumber(ARGV[1]), tonumber(ARGV[2])
local ids, runs, locks = {}, {}, {}
for i = 0, n - 1 do
  ids[i + 1] = ARGV[3 + 8 * i]
  locks[i + 1] = KEYS[5 + 4 * i]
  runs[i + 1] = KEYS[6 + 4 * i]
end
callk('SREM', KEYS[1], ids)
calln('DEL', runs)
local held = calln('MGET', locks) -- false for a key of another type
local mine = {}
for i = 0, n - 1 do
  if held[i + 1] == ARGV[4 + 8 * i] then mine[#mine + 1] = locks[i + 1] end
end
if #mine > 0 then calln('DEL', mine) end
local recs, order = {}, {}
for i = 0, n - 1 do
  local task, hist = KEYS[4 + 4 * i], KEYS[7 + 4 * i]
  local o = 2 + 8 * i
  local outcome, err, dur, rec, once, member = ARGV[o + 3], ARGV[o + 4], ARGV[o + 5], ARGV[o + 6], ARGV[o + 7], ARGV[o + 8]
  local h = redis.pcall('HMGET', task, 'runs', 'failures', 'next_run')
  -- Not a hash: left alone. None of the fields: the hash may not exist.
  if not h.err and (h[1] or h[2] or h[3] or redis.call('EXISTS', task) == 1) then
    local failed = outcome ~= 'ok'
    local nruns, nfails = plus_one(h[1]), failed and plus_one(h[2])
    if nruns and (nfails or not failed) then
      if failed then
        redis.call('HSET', task, 'last_result', outcome, 'last_error', err, 'last_duration', dur, 'runs', nruns, 'failures', nfails)
      else
        redis.call('HSET', task, 'last_result', outcome, 'last_error', err, 'last_duration', dur, 'runs', nruns)
      end
    else -- a counter HINCRBY would refuse, or too large for a Lua number
      redis.call('HSET', task, 'last_result', outcome, 'last_error', err, 'last_duration', dur)
      incr(task, 'runs', 1)
      if failed then incr(task, 'failures', 1) end
    end
    if once == '1' and tonumber(h[3]) == 0 then
      redis.call('DEL', task)
      redis.call('ZREM', KEYS[2], member)
      redis.call('SREM', KEYS[3], member)
    end
  end
  if not recs[hist] then
    recs[hist] = {}
    order[#order + 1] = hist
  end
  if rec ~= '' then table.insert(recs[hist], rec) end
end
local foreign = {}
for _, hist in ipairs(order) do
  local r, ok = recs[hist], true
  if #r > 1 then
    -- Oldest first, so that the newest record ends at the head.
    ok = type(redis.pcall('LPUSH', hist, unpack(r, 1, #r - 1))) == 'number'
  end
  if ok and #r > 0 then ok = push_history(hist, r[#r], limit, age) end
  if not ok then foreign[hist] = true end
end
local out = {}
for i = 0, n - 1 do
  out[i + 1] = foreign[KEYS[7 + 4 * i]] and 2 or 1
end
return out
`)

// renewScript extends the lock and lease of a run still in progress, if
// they are still this run's.
//
// KEYS: lock, run
// ARGV: lock_value, lease_json, ttl_ms
var renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] and redis.call('PTTL', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
if redis.call('GET', KEYS[2]) == ARGV[2] and redis.call('PTTL', KEYS[2]) < tonumber(ARGV[3]) then
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
return 1
`)

// abandonScript records a run whose process died: the run is still in
// running but its lease expired, or its process stopped heart-beating.
//
// KEYS: running, run, lock, task, history, processes
// ARGV: run_id, lease_json_seen (or ""), lock_value, process, process_ttl_ms,
// record_json, history_limit, history_age_ms, not_after_ms (it does nothing
// when run later than that: a stall would make every beat look old)
var abandonScript = redis.NewScript(luaNow + luaHistory + `
if ARGV[9] and now > tonumber(ARGV[9]) then return 0 end
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 0 then return 0 end
local cur = redis.call('GET', KEYS[2])
if cur then
  if cur ~= ARGV[2] then return 0 end
  local beat = tonumber(redis.call('ZSCORE', KEYS[6], ARGV[4]))
  if beat and beat >= now - tonumber(ARGV[5]) then return 0 end
end
redis.call('SREM', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
if redis.call('GET', KEYS[3]) == ARGV[3] then redis.call('DEL', KEYS[3]) end
if redis.call('EXISTS', KEYS[4]) == 1 then
  redis.call('HSET', KEYS[4], 'last_result', 'abandoned', 'last_error', 'process died during the run')
  incr(KEYS[4], 'runs', 1)
  incr(KEYS[4], 'failures', 1)
end
push_history(KEYS[5], ARGV[6], tonumber(ARGV[7]), tonumber(ARGV[8]))
return 1
`)

// requeueScript puts an active or paused task that is not queued (it was
// disabled, or its entry was lost) back in the queue at next.
//
// KEYS: task, queue
// ARGV: member, next
var requeueScript = redis.NewScript(`
local st = redis.call('HGET', KEYS[1], 'status')
if st ~= 'active' and st ~= 'paused' then return 0 end
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'next_run', ARGV[2])
if ARGV[2] ~= '0' then redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1]) end
return 1
`)

// pruneScript removes a declared (static) task that no live process has
// declared within the grace window.
//
// KEYS: task, queue, tasks, declared
// ARGV: member, grace_ms, not_after_ms (it does nothing when run later)
var pruneScript = redis.NewScript(luaNow + `
if ARGV[3] and now > tonumber(ARGV[3]) then return 0 end
local seen = tonumber(redis.call('ZSCORE', KEYS[4], ARGV[1]))
if seen and seen >= now - tonumber(ARGV[2]) then return 0 end
if redis.call('HGET', KEYS[1], 'source') ~= 'static' then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('SREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
return 1
`)

// masterScript takes or renews the master lock.
//
// KEYS: master
// ARGV: process, ttl_ms
// Returns 1 when this process holds the lock.
var masterScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if not cur or redis.call('PTTL', KEYS[1]) == -1 then -- absent, or foreign (ours expire)
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if cur == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`)

// releaseScript deletes a key if it still holds the given value
// (compare-and-delete).
//
// KEYS: key
// ARGV: value
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)
