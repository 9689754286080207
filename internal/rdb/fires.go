package rdb

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// FireCandidate is one due fire a claim tries: the task, the instant read
// from its hash (the compare-and-set value), the instant after it (0: none,
// the task is done) and, when it runs, its run id and lease. Skip claims it
// only to record it skipped (a missed instant with misfire=skip).
//
// MaxRunning > 0 caps the runs in progress at once, cluster-wide, of all
// the fires with the same Type (the fire slots, P fireslots:<Type>): a
// fire over the cap is skipped and recorded (FireCapped). Type names the
// group the cap counts: a task type (the caller passes the type's cap as
// its process's registry has it: the code is the source; processes with
// different caps for one type each enforce their own), or, for a run-time
// task with a cap of its own, "task:" + its key (FireSlotsOfTask).
// MaxRunning 0 is no cap, and costs the claim nothing.
type FireCandidate struct {
	Task       string
	FireMS     int64
	NextMS     int64
	Skip       bool
	RunID      string
	Lease      string
	Type       string
	MaxRunning int
	// Timeout is the lock's TTL when the task hash has no timeout of its
	// own (a run-time task of the type's timeout stores none): the type's
	// timeout as the claiming process's registry has it; 0 is 5 minutes.
	Timeout time.Duration
}

// FireOutcome is what a claim did with one candidate.
type FireOutcome string

// The outcomes of ClaimFires, one per candidate.
const (
	FireWon            FireOutcome = "fire"              // it runs: lock (if not concurrent) and lease taken
	FireWonForeignLock FireOutcome = "fire-foreign-lock" // it runs; a lock without expiry was replaced
	FireTakeover       FireOutcome = "fire-takeover"     // it runs; the lock's holder was recorded abandoned (FireResult.Holder)
	FireDeferred       FireOutcome = "deferred"          // the lock's holder's run lease runs out soon: nothing written; claim again at FireResult.RetryMS
	FireStale          FireOutcome = "stale"             // another process claimed the instant
	FireEarly          FireOutcome = "early"             // not due yet by the server's clock
	FireMissing        FireOutcome = "missing"           // no task hash: the queue entry was removed
	FireDisabled       FireOutcome = "disabled"          // disabled: taken out of the queue
	FirePaused         FireOutcome = "paused"            // paused (or an unknown status): skipped
	FireMisfire        FireOutcome = "misfire"           // a missed instant skipped and recorded
	FireLocked         FireOutcome = "locked"            // the previous run still holds the lock: skipped and recorded
	FireCapped         FireOutcome = "capped"            // its type's max_running runs are in progress: skipped and recorded
	FireBad            FireOutcome = "bad"               // the task key is not a hash: left alone
	FireUntried        FireOutcome = "untried"           // max fires were won before it: not looked at
)

// Won reports whether the fire runs.
func (o FireOutcome) Won() bool { return o == FireWon || o == FireWonForeignLock || o == FireTakeover }

// FireResult is what a claim did with one candidate; Holder is set with
// FireTakeover, RetryMS with FireDeferred. ForeignSlots is the fire slot
// key of the candidate's cap when it held a foreign value (not a ZSET): the
// cap was not enforced for the candidate, and the caller moves the key
// aside (Quarantine), after which it is again.
type FireResult struct {
	RetryMS      int64
	Outcome      FireOutcome
	Holder       Holder
	ForeignSlots string
}

// FireClaim is one call of the claim script, built before it is sent (a
// claim prepared ahead of its instant leaves only the send for the
// instant).
type FireClaim struct {
	Candidates []FireCandidate
	keys       []string
	args       []any
}

// claimArgsBefore is how many script arguments come before the first
// candidate's; claimMaxFiresArg is the index of max fires among them.
const (
	claimArgsBefore  = 7
	claimMaxFiresArg = 5
	claimSlotsArg    = 6
	claimArgsPer     = 8
	// claimKeysBefore is how many keys come before the first
	// candidate's, claimKeysPer how many each candidate has.
	claimKeysBefore = 5
	claimKeysPer    = 3
)

// NewFireClaim builds the claim of candidates by process; skipped fires
// are recorded in the history within bound, and the runs it wins get run
// leases of leases.TTL.
func (r *RDB) NewFireClaim(process string, bound HistoryBound, leases RunLeases, candidates []FireCandidate) *FireClaim {
	c := &FireClaim{Candidates: candidates, keys: make([]string, 0, claimKeysBefore+1+claimKeysPer*len(candidates)),
		args: make([]any, 0, claimArgsBefore+claimArgsPer*len(candidates))}
	c.keys = append(c.keys, r.k.Queue(), r.k.Runs(), r.k.Alive(), r.k.Pulse(), r.k.Running())
	c.args = append(c.args, process, bound.Records, bound.Age.Milliseconds(), leases.TTL.Milliseconds(), leases.Gap.Milliseconds(),
		0, // max fires: set by ClaimFires
		0) // how many fire slot keys: set below
	var slots []string      // capped types, in order of first use
	var caps []any          // their caps
	var slot map[string]int // type -> 1-based index in slots
	for _, f := range candidates {
		mode, runID := "run", f.RunID
		if f.Skip {
			mode, runID = "skip", SkipRunID(f.Task)
		}
		idx := 0
		if f.MaxRunning > 0 && !f.Skip {
			if slot == nil {
				slot = map[string]int{}
			}
			if idx = slot[f.Type]; idx == 0 {
				slots, caps = append(slots, f.Type), append(caps, f.MaxRunning)
				idx = len(slots)
				slot[f.Type] = idx
			}
		}
		c.keys = append(c.keys, r.k.Task(f.Task), r.k.Lock(f.Task), r.k.History(f.Task))
		c.args = append(c.args, f.Task, f.FireMS, f.NextMS, mode, runID, f.Lease, idx, f.Timeout.Milliseconds())
	}
	for _, t := range slots {
		c.keys = append(c.keys, r.k.FireSlots(t))
	}
	c.keys = append(c.keys, r.k.Unqueued())
	c.args[claimSlotsArg] = len(slots)
	c.args = append(c.args, caps...)
	return c
}

// advanceScript (ClaimFires) claims due fires atomically, oldest first: for each
// candidate whose next_run still equals the fire the caller read (the
// compare-and-set that makes every instant fire once), it moves next_run on,
// then either records a skip or takes the lock, writes the run's lease in
// the runs hash, and gives the run a run lease in alive (see runlease.go).
//
// A lock held by a run whose run lease expired while the pulse was steady
// for a whole lease_ttl is taken over: that run's process is gone (killed,
// or stopped or cut off from Redis for longer than the lease allows). The
// run is recorded abandoned, as the master's reap would record it (its
// field out of runs and its member out of alive, the task's last_result,
// runs and failures, a history record), once: only when the HDEL removed
// its field (or, for an older release's run, the SREM its running entry;
// that run's run:<id> key, which the claim cannot declare as it learns the
// run from the lock, is left to expire with its TTL: nothing reads it for
// a run out of running), and the fire runs with the lock.
// A lock without a run lease (the
// holder runs an older version, or Redis lost its data) is never taken
// over here; the master's reap frees it when its process stops
// heart-beating.
//
// Fire slots (max_running): a candidate with a slot index counts the runs
// in progress of its type in that fire slot key (run id -> run lease
// deadline), read once per key before the loop: while the pulse is steady
// (see luaTakeover) the members whose deadline passed are dead runs and do
// not count (they are pruned at the end); otherwise every member counts,
// so a Redis stall, which makes every deadline pass at once, frees no
// slot. Fires won in the call count against later candidates of the same
// type. At the cap the fire is skipped and recorded, as for a held lock
// (capped), except that a non-concurrent task whose lock is held goes the
// lock's way first (locked, deferred or a takeover; a lock it then holds
// while over the cap is released again, and the fire is capped). A fire
// slot key of the wrong type turns the cap of its type off for the call
// (nothing is written to it; no fire is skipped for it) and is named in
// the reply, for the caller to move it aside: the slot keys of run-time
// tasks with a cap of their own come with the tasks, and no check at start
// knows them. Candidates without a slot pay nothing.
//
// KEYS: queue, runs, alive, pulse, running (an older release's, read only
// by a takeover), then per candidate: task, lock, history; then the fire
// slot keys; last, unqueued (a disabled task taken out of the queue, and
// one with no instant left, is added to it; of the wrong type, it is not)
// ARGV: process, history_limit, history_age_ms, lease_ttl_ms, gap_ms,
// max_fires, number of fire slot keys, then per candidate: member, fire,
// next, mode ("run" or "skip"), run_id, lease_json, slot (1-based index of
// its fire slot key, 0: none), timeout_ms (the lock's TTL when the hash has
// no timeout field; 0: 300000); then per fire slot key its cap
// Returns one status string per candidate: fire, fire-foreign-lock (it
// replaced a lock without expiry), fire-takeover|<lock value of the run it
// recorded abandoned>, stale, early, missing, disabled, paused, misfire,
// locked, capped, bad (the task key is not a hash), untried (max_fires
// fires were won before it: it was not looked at); then "foreign|<j>" for
// each fire slot key j (1-based) of the wrong type.
//
// The queue entries moved on, the runs' leases and run leases added are
// written at the end, with one variadic ZADD, HSET and ZADD (a call from a
// script costs about as much as the command, and a field of one hash much
// less than a key of its own). ZCARD and HLEN first fail the script on a
// queue or runs hash of the wrong type before anything is written; alive
// and pulse of the wrong type only turn run leases and takeovers off, and
// running of the wrong type only a takeover's SREM of an older release's
// run.
var advanceScript = redis.NewScript(luaNow + luaHistory + `
redis.call('ZCARD', KEYS[1])
redis.call('HLEN', KEYS[2])
local ttl, gap = tonumber(ARGV[4]), tonumber(ARGV[5])
` + luaTakeover + `
local out = {}
local queued, running, leases = {}, {}, {} -- ZADD score/member pairs; HSET run id/lease pairs; ZADD deadline/run id pairs
local nslots = tonumber(ARGV[7])
local n = (#KEYS - 6 - nslots) / 3
local unqueued = KEYS[#KEYS]
local won, maxf = 0, tonumber(ARGV[6])
local slot_key, slot_cap, slot_used, slot_add = {}, {}, {}, {} -- per fire slot key; slot_used nil: the key is foreign
for j = 1, nslots do
  slot_key[j], slot_cap[j], slot_add[j] = KEYS[5 + 3*n + j], tonumber(ARGV[7 + 8*n + j]), {}
  local c = redis.pcall('ZCARD', slot_key[j])
  if type(c) == 'number' then
    if c > 0 and steady() then c = redis.call('ZCOUNT', slot_key[j], now, '+inf') end -- expired: dead runs
    slot_used[j] = c
  end
end
for i = 0, n - 1 do
  if won >= maxf then
    out[#out + 1] = 'untried'
  else
    local task, lock, hist = KEYS[6 + 3*i], KEYS[7 + 3*i], KEYS[8 + 3*i]
    local member, fire, nxt, mode, runid, lease = ARGV[8 + 8*i], ARGV[9 + 8*i], ARGV[10 + 8*i], ARGV[11 + 8*i], ARGV[12 + 8*i], ARGV[13 + 8*i]
    local slot, deftimeout = tonumber(ARGV[14 + 8*i]), tonumber(ARGV[15 + 8*i])
    local full = slot > 0 and slot_used[slot] ~= nil and slot_used[slot] >= slot_cap[slot]
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
      redis.pcall('SADD', unqueued, member) -- a foreign set: left to the singleton check
      res = 'disabled'
    else
      if nxt == '0' then
        redis.call('ZREM', KEYS[1], member)
        redis.pcall('SADD', unqueued, member) -- no instant left: listed there until its finish deletes it
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
      if h[2] and h[2] ~= 'active' then -- no status: active
        incr(task, 'skips', 1)
        res = 'paused'
      elseif mode == 'skip' then
        skip('misfire: missed while no scheduler ran')
        res = 'misfire'
      elseif full and (h[3] == '1' or redis.call('EXISTS', lock) == 0) then
        skip('max_running: ' .. slot_cap[slot] .. ' runs of its type in progress')
        res = 'capped'
      else
        local timeout = tonumber(h[4]) or (deftimeout > 0 and deftimeout) or 300000
        local got, foreign, holder, deferto = true, false, nil, nil
        if h[3] ~= '1' then
          got = redis.call('SET', lock, ARGV[1] .. '|' .. fire, 'NX', 'PX', timeout)
          if not got and redis.call('PTTL', lock) == -1 then
            -- A lock without expiry (or not a string) is nobody's: every
            -- scheduler's lock expires. Replace it rather than skip forever.
            redis.call('SET', lock, ARGV[1] .. '|' .. fire, 'PX', timeout)
            got, foreign = true, true
          end
          if not got then
            -- The holder's run, named by its lock value, and its run
            -- lease's deadline (nil: none, an older version's lock).
            local held = redis.pcall('GET', lock)
            local hp, hf
            if type(held) == 'string' then hp, hf = string.match(held, '^(.*)|(%d+)$') end
            local hid = hp and (member .. '@' .. hf)
            local dl = hid and alive_ok and tonumber(redis.call('ZSCORE', KEYS[3], hid))
            if dl and dl < now and steady() then
              -- The holder's process is gone: record its run abandoned
              -- (once: only while it is still in runs, or an older
              -- release's run in running) and take the lock.
              if redis.call('HDEL', KEYS[2], hid) == 1 or redis.pcall('SREM', KEYS[5], hid) == 1 then
                redis.call('HSET', task, 'last_result', 'abandoned', 'last_error', 'process ' .. hp .. ' stopped renewing its run lease',
                  'abandoned_run', hid)
                incr(task, 'runs', 1)
                incr(task, 'failures', 1)
                push_history(hist, cjson.encode({task = member, fire = tonumber(hf), start_ms = tonumber(hf), end_ms = now,
                  outcome = 'abandoned', error = 'process ' .. hp .. ' stopped renewing its run lease during the run',
                  process = hp, attempt = 1}), tonumber(ARGV[2]), tonumber(ARGV[3]))
                holder = held
              end
              redis.call('ZREM', KEYS[3], hid)
              redis.call('SET', lock, ARGV[1] .. '|' .. fire, 'PX', timeout)
              got = true
            elseif dl and dl >= now and dl <= tonumber(fire) + ttl and nxt ~= '0' then
              -- The holder's run lease runs out within a lease of this
              -- instant: wait for it (nothing written), so that a dead
              -- holder's lock is taken over then, not at an instant later.
              -- A live holder renews past fire + ttl, and the retry skips.
              deferto = dl
            end
          end
        end
        if deferto then
          table.remove(queued) -- the queue entry stays at fire (nxt is not '0' here)
          table.remove(queued)
          res = 'deferred|' .. deferto
        elseif not got then
          skip('previous run still running')
          res = 'locked'
        elseif full then
          -- The lock was free, foreign or a dead run's, but the type is at
          -- its cap: give the lock back and skip.
          redis.call('DEL', lock)
          skip('max_running: ' .. slot_cap[slot] .. ' runs of its type in progress')
          res = 'capped'
        else
          fired = true
          if slot > 0 and slot_used[slot] then
            slot_used[slot] = slot_used[slot] + 1
            table.insert(slot_add[slot], now + ttl)
            table.insert(slot_add[slot], runid)
          end
          running[#running + 1] = runid
          running[#running + 1] = lease
          if alive_ok then
            leases[#leases + 1] = now + ttl
            leases[#leases + 1] = runid
          end
          if holder then res = 'fire-takeover|' .. holder
          elseif foreign then res = 'fire-foreign-lock'
          else res = 'fire' end
        end
      end
      if fired then
        redis.call('HSET', task, 'next_run', nxt, 'last_run', fire)
      elseif string.sub(res, 1, 8) ~= 'deferred' then
        redis.call('HSET', task, 'next_run', nxt)
      end
    end
    if string.sub(res, 1, 4) == 'fire' then won = won + 1 end -- fire, fire-foreign-lock, fire-takeover|...
    out[#out + 1] = res
  end
end
if #queued > 0 then callk('ZADD', KEYS[1], queued) end
if #running > 0 then callk('HSET', KEYS[2], running) end
if #leases > 0 then callk('ZADD', KEYS[3], leases) end
for j = 1, nslots do
  if slot_used[j] then
    if steady() then redis.call('ZREMRANGEBYSCORE', slot_key[j], '-inf', '(' .. now) end
    if #slot_add[j] > 0 then callk('ZADD', slot_key[j], slot_add[j]) end
  else
    out[#out + 1] = 'foreign|' .. j
  end
end
return out
`)

// ClaimFires sends the claim c; the script stops looking once maxFires
// fires were won. It returns one result per candidate, in order.
//
// Bounds: any number of candidates (the variadic writes are chunked); a
// claim of n candidates holds Redis for about 10 µs per fire won.
// Failure: a queue or runs hash of the wrong type fails the script
// before it writes; every per-task key of the wrong type is handled
// (FireBad, or the write skipped), and alive or pulse of the wrong type
// only turns run leases off, so it cannot fail after a write.
func (r *RDB) ClaimFires(ctx context.Context, c *FireClaim, maxFires int) ([]FireResult, error) {
	c.args[claimMaxFiresArg] = maxFires
	res, err := advanceScript.Run(ctx, r.c, c.keys, c.args...).StringSlice()
	if err != nil {
		return nil, err
	}
	n := len(c.Candidates)
	if len(res) < n {
		return nil, errors.New("claim fires: reply of the wrong length")
	}
	var foreign map[int]bool // fire slot key index -> held a foreign value
	for _, s := range res[n:] {
		if j, ok := strings.CutPrefix(s, "foreign|"); ok {
			if idx, err := strconv.Atoi(j); err == nil {
				if foreign == nil {
					foreign = map[int]bool{}
				}
				foreign[idx] = true
			}
		}
	}
	out := make([]FireResult, n)
	for i, s := range res[:n] {
		if at, ok := strings.CutPrefix(s, string(FireDeferred)+"|"); ok {
			ms, _ := strconv.ParseFloat(at, 64)
			out[i] = FireResult{Outcome: FireDeferred, RetryMS: int64(ms)}
			continue
		}
		if held, ok := strings.CutPrefix(s, string(FireTakeover)+"|"); ok {
			p, f, _ := ParseLockValue(held)
			out[i] = FireResult{Outcome: FireTakeover, Holder: Holder{Process: p, FireMS: f}}
			continue
		}
		out[i] = FireResult{Outcome: FireOutcome(s)}
	}
	for i := range out {
		if foreign == nil {
			break
		}
		// The candidate's slot index, as NewFireClaim wrote it.
		if idx, _ := c.args[claimArgsBefore+claimArgsPer*i+6].(int); foreign[idx] {
			out[i].ForeignSlots = c.keys[claimKeysBefore+claimKeysPer*n+idx-1]
		}
	}
	return out, nil
}

// RunFinish is the end of one run, to be recorded: its run id and task,
// the lock value it holds (released only if still held with it), the
// outcome and error for the task hash, the history record ("" when the
// history would trim it anyway), and whether the task is done (its last
// instant: removed once its next_run is 0). Slots is the task's type when
// the run holds a fire slot (its type has max_running; "" when not): the
// finish frees it.
type RunFinish struct {
	RunID      string
	Task       string
	LockValue  string
	Outcome    string
	Error      string
	DurationMS int64
	Record     string
	Once       bool
	Slots      string
	// LagMS is how late the run started: its start minus its scheduled
	// instant (for the per-minute stats; negative counts 0).
	LagMS int64
}

// finishRunsScript records a batch of completed runs, each as the former
// one-run finish script did: it releases the run's lock (only if still
// ours: the value names this process and the fire), its lease (its field
// of runs) and its run lease (alive), sets the task's last_result, last_error and last_duration,
// counts runs and failures, removes a once task whose next_run is 0, and
// appends the history record (trimmed by count and age). The leases, run
// leases and locks of the batch are removed with one variadic command each,
// and the records of one task with one LPUSH. A key of the wrong type for one
// run (task, lock or history) skips that write for that run only, so it
// cannot fail the batch.
//
// A run with a fire slot (max_running) leaves its fire slot key too (one
// ZREM per key; a key of the wrong type is left alone).
//
// Last, it adds the batch to the current minute of stats:min (fires,
// failed, lag_sum, lag_max; see minute.go).
//
// KEYS: runs, queue, tasks, then per run: task, lock, history; then the
// fire slot keys; then unqueued (of the wrong type: a finished
// once task is not taken out of it); then stats:min; last, alive (of the
// wrong type: no run lease is removed)
// ARGV: history_limit, history_age_ms, then per run: run_id, lock_value,
// outcome, error, duration_ms, record_json ("" when the history would trim
// it anyway), once, member, slot (1-based index of its fire slot key, 0:
// none); then the batch's lag sum and largest lag (ms)
// Returns one code per run: 1, or 2 when the history key holds a foreign
// value (the run's record was not written).
var finishRunsScript = redis.NewScript(luaNow + luaHistory + luaMinute + `
-- runs: its HDEL, the first write, fails on another type by itself.
want_type(KEYS[2], 'zset')
want_type(KEYS[3], 'set')
local alive = KEYS[#KEYS]
-- plus_one(v) is HINCRBY v 1 done in Lua, for a field read with HMGET: nil
-- when HINCRBY would refuse v (not a canonical integer) or when v is too
-- large for a Lua number to count exactly; then incr() writes it.
local function plus_one(v)
  if not v then return 1 end
  if #v <= 15 and (v == '0' or string.match(v, '^-?[1-9]%d*$')) then return tonumber(v) + 1 end
  return nil
end
local n = (#ARGV - 4) / 9
local limit, age = tonumber(ARGV[1]), tonumber(ARGV[2])
local ids, locks, slotted = {}, {}, {}
for i = 0, n - 1 do
  ids[i + 1] = ARGV[3 + 9 * i]
  locks[i + 1] = KEYS[5 + 3 * i]
  local slot = tonumber(ARGV[11 + 9 * i])
  if slot > 0 then
    slotted[slot] = slotted[slot] or {}
    table.insert(slotted[slot], ids[i + 1])
  end
end
callk('HDEL', KEYS[1], ids)
-- alive of another type: the pcall's error, nothing removed.
if type(redis.pcall('ZREM', alive, unpack(ids, 1, math.min(#ids, ` + luaChunk + `)))) == 'number' and #ids > ` + luaChunk + ` then
  callk('ZREM', alive, ids, ` + luaChunk + ` + 1)
end
for j, sids in pairs(slotted) do redis.pcall('ZREM', KEYS[3 + 3 * n + j], unpack(sids)) end -- at most a batch: 512
local held = calln('MGET', locks) -- false for a key of another type
local mine = {}
for i = 0, n - 1 do
  if held[i + 1] == ARGV[4 + 9 * i] then mine[#mine + 1] = locks[i + 1] end
end
if #mine > 0 then calln('DEL', mine) end
local recs, order = {}, {}
for i = 0, n - 1 do
  local task, hist = KEYS[4 + 3 * i], KEYS[6 + 3 * i]
  local o = 2 + 9 * i
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
      redis.pcall('SREM', KEYS[#KEYS - 2], member) -- a foreign set: left to the singleton check
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
  local r = recs[hist]
  if #r > 0 and not push_history_many(hist, r, limit, age) then foreign[hist] = true end
end
local out, nfailed = {}, 0
for i = 0, n - 1 do
  out[i + 1] = foreign[KEYS[6 + 3 * i]] and 2 or 1
  if ARGV[5 + 9 * i] ~= 'ok' then nfailed = nfailed + 1 end
end
minute_add(KEYS[#KEYS - 1], {fires = n, failed = nfailed, lag_sum = tonumber(ARGV[#ARGV - 1])}, tonumber(ARGV[#ARGV]))
return out
`)

// FinishRuns records a batch of finished runs in one call. It reports, per
// run, whether its history key held a foreign value (its record was not
// written).
//
// Bounds: any number of runs (chunked); callers send at most a batch
// queue's 512.
// Failure: only a runs hash, queue or tasks set of the wrong type fails
// it, before it writes (HDEL is its first write; the queue and the tasks
// and unqueued sets are written only for a finished once task, after the
// type checks; an unqueued set of the wrong type is left alone).
func (r *RDB) FinishRuns(ctx context.Context, bound HistoryBound, runs []RunFinish) (foreignHistory []bool, err error) {
	keys := make([]string, 0, 6+3*len(runs))
	keys = append(keys, r.k.Runs(), r.k.Queue(), r.k.Tasks())
	args := make([]any, 0, 2+9*len(runs))
	args = append(args, bound.Records, bound.Age.Milliseconds())
	var slots []string
	var slot map[string]int
	for _, f := range runs {
		keys = append(keys, r.k.Task(f.Task), r.k.Lock(f.Task), r.k.History(f.Task))
		idx := 0
		if f.Slots != "" {
			if slot == nil {
				slot = map[string]int{}
			}
			if idx = slot[f.Slots]; idx == 0 {
				slots = append(slots, f.Slots)
				idx = len(slots)
				slot[f.Slots] = idx
			}
		}
		args = append(args, f.RunID, f.LockValue, f.Outcome, f.Error, f.DurationMS, f.Record, boolArg(f.Once), f.Task, idx)
	}
	for _, t := range slots {
		keys = append(keys, r.k.FireSlots(t))
	}
	var lagSum, lagMax int64
	for _, f := range runs {
		lag := max(f.LagMS, 0)
		lagSum += lag
		lagMax = max(lagMax, lag)
	}
	args = append(args, lagSum, lagMax)
	keys = append(keys, r.k.Unqueued(), r.k.StatsMinute(), r.k.Alive())
	codes, err := finishRunsScript.Run(ctx, r.c, keys, args...).Int64Slice()
	if err != nil {
		return nil, err
	}
	foreignHistory = make([]bool, len(runs))
	for i, c := range codes {
		if i < len(runs) {
			foreignHistory[i] = c == 2
		}
	}
	return foreignHistory, nil
}

// RunRenewal is a run in progress whose lock is to be extended to TTL, if
// it is still its own. (Its lease, a field of the runs hash, has no TTL:
// it stays until the run's finish, so it needs no renewal, and a run
// shorter than the time between two renewals cannot lose it while it
// runs, as an older release's lease key with its TTL could.)
type RunRenewal struct {
	Task      string
	LockValue string
	TTL       time.Duration
}

// renewScript extends the lock of a run still in progress, if it is still
// this run's.
//
// KEYS: lock
// ARGV: lock_value, ttl_ms
var renewScript = redis.NewScript(`
local ttl = tonumber(ARGV[2])
if redis.pcall('GET', KEYS[1]) == ARGV[1] and redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1
`)

// RenewRuns extends the locks of runs in progress, one script call each,
// in one pipeline.
// Failure: each call is independent and only extends expiries.
func (r *RDB) RenewRuns(ctx context.Context, runs []RunRenewal) error {
	_, err := pipelined(ctx, r.c, []*redis.Script{renewScript}, func(pipe redis.Pipeliner) struct{} {
		for _, run := range runs {
			renewScript.EvalSha(ctx, pipe, []string{r.k.Lock(run.Task)}, run.LockValue, run.TTL.Milliseconds())
		}
		return struct{}{}
	})
	return err
}

// Abandonment is a run in progress (ReadRuns) whose process is thought
// dead: its run id and task, the lease read (or "" when an older release's
// lease key had expired), the lock value
// the run would hold, the process, and the history record to append.
type Abandonment struct {
	RunID      string
	Task       string
	LeaseSeen  string
	LockValue  string
	Process    string
	ProcessTTL time.Duration
	Record     string
	NotAfterMS int64
}

// abandonScript records a run whose process died: the run is still in
// progress (its field in runs, or an older release's entry in running)
// and its process stopped heart-beating, or (an older release's run only)
// its lease key expired.
//
// A run of this release is its field of runs, which it deletes. An older
// release's run (no field; a member of running) is its running entry and
// lease key (run:<id>), which it deletes both, as that release's script
// did: during a rolling upgrade this release's master reaps the runs of
// older processes.
//
// KEYS: runs, running, run (an older release's lease key), lock, task,
// history, processes, alive
// ARGV: run_id, lease_json_seen (or ""), lock_value, process, process_ttl_ms,
// record_json, history_limit, history_age_ms, not_after_ms (it does nothing
// when run later than that: a stall would make every beat look old)
// It also removes the run's run lease (alive of the wrong type: left alone).
var abandonScript = redis.NewScript(luaNow + luaHistory + `
if ARGV[9] and now > tonumber(ARGV[9]) then return 0 end
local cur = redis.call('HGET', KEYS[1], ARGV[1]) -- runs of another type: fails here, unwritten
local legacy = not cur
if legacy then
  if redis.pcall('SISMEMBER', KEYS[2], ARGV[1]) ~= 1 then return 0 end -- a foreign running set lists nothing
  cur = redis.call('GET', KEYS[3])
end
want_type(KEYS[5], 'hash') -- read everything the writes below need first
local alive_ok = redis.call('TYPE', KEYS[8]).ok == 'zset'
local ours = redis.pcall('GET', KEYS[4]) == ARGV[3] -- a lock of another type is not ours
if cur then
  if cur ~= ARGV[2] then return 0 end
  local beat = tonumber(redis.call('ZSCORE', KEYS[7], ARGV[4]))
  if beat and beat >= now - tonumber(ARGV[5]) then return 0 end
end
if legacy then
  redis.call('SREM', KEYS[2], ARGV[1])
  redis.call('DEL', KEYS[3])
else
  redis.call('HDEL', KEYS[1], ARGV[1])
end
if alive_ok then redis.call('ZREM', KEYS[8], ARGV[1]) end
if ours then redis.call('DEL', KEYS[4]) end
if redis.call('EXISTS', KEYS[5]) == 1 then
  redis.call('HSET', KEYS[5], 'last_result', 'abandoned', 'last_error', 'process died during the run', 'abandoned_run', ARGV[1])
  incr(KEYS[5], 'runs', 1)
  incr(KEYS[5], 'failures', 1)
end
push_history(KEYS[6], ARGV[6], tonumber(ARGV[7]), tonumber(ARGV[8]))
return 1
`)

// Abandon records the run a abandoned if, checked again in the script, it
// is still in progress (in runs, or in an older release's running set)
// with the lease seen and its process has not beaten within its TTL. It
// reports whether it did.
// Failure: the reads come first; its writes (HDEL, or SREM and DEL, HSET
// of the task, history) meet only keys the reads checked or pcall-guarded
// helpers.
func (r *RDB) Abandon(ctx context.Context, a Abandonment, bound HistoryBound) (bool, error) {
	n, err := abandonScript.Run(ctx, r.c,
		[]string{r.k.Runs(), r.k.Running(), r.k.Run(a.RunID), r.k.Lock(a.Task), r.k.Task(a.Task), r.k.History(a.Task),
			r.k.Processes(), r.k.Alive()},
		a.RunID, a.LeaseSeen, a.LockValue, a.Process, a.ProcessTTL.Milliseconds(),
		a.Record, bound.Records, bound.Age.Milliseconds(), a.NotAfterMS).Int()
	return n == 1, err
}

// restoreRunScript writes again the state of a run in progress that Redis
// lost (it restarted empty, or was flushed): its lock, unless the lock is
// held again or the task is concurrent, its lease (its field of runs,
// unless one is there) and its run lease in alive, so that its process's
// renewals find them, the master's reap sees the run, and a claim takes
// its lock over if the process dies from here on. A fire slot
// (max_running) is not written again: until the run ends its type counts
// one run less.
//
// KEYS: lock, task, runs, alive
// ARGV: lock_value, ttl_ms, run_id, lease, lease_ttl_ms
// Returns 1 when it took the lock. Failure: it checks the types of the
// lock, runs and alive and reads the task before its first write.
var restoreRunScript = redis.NewScript(luaNow + `
want_type(KEYS[1], 'string')
want_type(KEYS[3], 'hash')
want_type(KEYS[4], 'zset')
local took = 0
local concurrent = redis.call('HGET', KEYS[2], 'concurrent') == '1'
if not concurrent and redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  took = 1
end
redis.call('HSETNX', KEYS[3], ARGV[3], ARGV[4])
redis.call('ZADD', KEYS[4], now + tonumber(ARGV[5]), ARGV[3])
return took
`)

// RunRestore is a run in progress whose state RestoreRun writes again.
type RunRestore struct {
	Task, RunID, LockValue string
	Lease                  string        // its lease, its field's value in runs (Lease.Encode)
	TTL                    time.Duration // the run's timeout: its lock's TTL
}

// RestoreRun writes again the lock (unless it is held again or the task is
// concurrent), lease (the field of runs) and run lease of a run in
// progress that Redis lost, with the run lease of leases. It reports
// whether it took the lock.
func (r *RDB) RestoreRun(ctx context.Context, run RunRestore, leases RunLeases) (bool, error) {
	n, err := restoreRunScript.Run(ctx, r.c,
		[]string{r.k.Lock(run.Task), r.k.Task(run.Task), r.k.Runs(), r.k.Alive()},
		run.LockValue, run.TTL.Milliseconds(), run.RunID, run.Lease, leases.TTL.Milliseconds()).Int()
	return n == 1, err
}

// dropRestoredScript takes back what restoreRunScript wrote for a run that
// finished meanwhile: its lock and its field of runs if they still hold
// its values, and its run lease.
//
// KEYS: lock, runs, alive
// ARGV: lock_value, run_id, lease
var dropRestoredScript = redis.NewScript(luaLib + `
want_type(KEYS[2], 'hash')
want_type(KEYS[3], 'zset')
local lock = redis.pcall('GET', KEYS[1])
if lock == ARGV[1] then redis.call('DEL', KEYS[1]) end
if redis.call('HGET', KEYS[2], ARGV[2]) == ARGV[3] then redis.call('HDEL', KEYS[2], ARGV[2]) end
redis.call('ZREM', KEYS[3], ARGV[2])
return 1
`)

// DropRestored takes back what RestoreRun wrote for a run whose finish
// may have been written before it.
func (r *RDB) DropRestored(ctx context.Context, run RunRestore) error {
	return dropRestoredScript.Run(ctx, r.c, []string{r.k.Lock(run.Task), r.k.Runs(), r.k.Alive()},
		run.LockValue, run.RunID, run.Lease).Err()
}

// releaseScript deletes a key if it still holds the given value
// (compare-and-delete).
//
// KEYS: key
// ARGV: value
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)

// ReleaseMaster deletes lock:master if process holds it.
func (r *RDB) ReleaseMaster(ctx context.Context, process string) error {
	return releaseScript.Run(ctx, r.c, []string{r.k.Master()}, process).Err()
}

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

// TakeMaster takes or renews lock:master for process, for ttl, and reports
// whether process holds it.
func (r *RDB) TakeMaster(ctx context.Context, process string, ttl time.Duration) (bool, error) {
	n, err := masterScript.Run(ctx, r.c, []string{r.k.Master()}, process, ttl.Milliseconds()).Int()
	return n == 1, err
}

// ClaimFiresHash is the SHA1 of the claim script, as MONITOR shows its
// EVALSHA calls (for tests that trace claims).
func ClaimFiresHash() string { return advanceScript.Hash() }
