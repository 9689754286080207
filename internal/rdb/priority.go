package rdb

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Priorities. In a namespace where some job type has a priority (the
// directive key priority, TaskConfig.Priority), each pending job is also in
// the index of its type's priority, P "jobs:prio:<priority>" (Keys.Level):
// a ZSET of job id -> due ms, the same score as in P "jobs". The queue
// stays the truth for what is pending and when; an index entry is a hint,
// which a claim checks against the queue: one whose job has left the queue
// is dropped, one whose job is due later (debounced, retried) is moved to
// its due. The enqueue writes it (NewJob.Level), and so does an ack that
// puts a job back (JobAck.Level); a job put back without it (by Redeliver,
// RetryDead or a producer of the raw protocol that does not write it) is
// indexed by the first claim that finds it among the oldest due jobs
// (levelHealScan).
//
// A claim with levels (ClaimFlow.Levels) takes its jobs from the indexes
// of its levels, oldest first within each, and between levels by smooth
// weighted round robin: a level's weight is its priority minus the lowest
// priority that has due jobs, plus one, so of every W jobs claimed while
// levels have due jobs (W the sum of their weights), each level gets its
// weight: priorities 0 and 2 take 1 and 3 jobs of every 4. That bounds the
// wait of a lower priority: its oldest due job is claimed within W claimed
// jobs of its turn, however many higher ones are due. The round robin's
// state (each level's current weight) is the caller's, passed in and
// returned, so it carries across claims of one process.

// levelHealScan is how many of the oldest due jobs a claim with levels
// checks for one that no index of its levels has.
const levelHealScan = 64

// JobSlotsAhead is how many jobs of a capped type a process may hold per
// running slot it holds: one running, the others claimed ahead, waiting in
// the process for one of its slots (they hold none), so that a job's end
// starts the next at once, without a claim's round trip. The process
// claims again once its hand is down to half (runtime/jobslots.go), so
// each claim takes about JobSlotsAhead/2 jobs per slot: with handlers that
// return at once, the claims' round trips and their fixed cost in Redis
// bound the drain, and 2 per slot (claims of one job per slot) drained at
// 0.4-0.6x of the same burst without limits. A type that also has a rate
// holds one per slot: its claim counts as its start in the rate window,
// so it must not wait for a slot after it.
const JobSlotsAhead = 8

// MaxLevels bounds the priority levels of one claim.
const MaxLevels = 64

// claimJobsFlowScript claims due jobs for a process with flow control:
// limits (JobLimit: caps and rates), priority levels, or both; and, with
// only = 1, only jobs of its types. It is claimJobsScript's contract
// otherwise: owner values, jobs:first, the lease, the reply.
//
// Candidates come, without levels, from the queue itself, oldest first;
// with levels, from each level's index (see "Priorities" above), oldest
// first, the level chosen for each job by smooth weighted round robin.
// Each candidate is taken unless its type is not this process's, or its
// type is over a limit (a cap: the slots key of the type holds cap live
// members; a rate: the window of the type or of its rate key holds rate_n
// starts in the last rate_per ms): those stay in the queue, untouched and
// in order. "The limits of a claim" (limits.go) describes the slot and
// window keys.
//
// It looks at no more than scan candidates. With levels, it first checks
// the levelHealScan oldest due jobs against the indexes of its levels and
// indexes (at its type's level, 0 for a type it does not know) and takes
// part in the pick any that none has; a level whose candidates were all
// passed over (levelPassLimit in a row) is left for this call.
//
// KEYS: jobs, jobs:data, jobs:attempt, jobs:lease, jobs:owner, jobs:first,
// then the slots key of each limit, then the index key of each level
// ARGV: limit, lease_ms, claim_id, scan, retry_ms, only, prefix, n_limits,
// n_levels, n_typelevels, then n_limits groups of type, max_running,
// rate_n, rate_per_ms, inflight (JobLimit.InFlight); then n_levels groups of priority, current weight;
// then n_typelevels groups of type, priority (the process's types whose
// priority is not 0); then, with only = 1, the type names it runs
// Bounds: limit at most MaxJobClaim, scan at most MaxJobScan, n_levels at
// most MaxLevels (one ZMSCORE of levelHealScan ids per level); a slots
// key has a field per live process holding slots of the type (read
// whole).
// Failure: a key of the wrong type fails before anything is written,
// except a rate window: one that holds a foreign value (an operator's SET;
// the per-key windows' names come with the jobs, so no check at start can
// know them) is not failed on: its jobs wait, as in a full window, nothing
// is written to it, and the reply names it, for the caller to move aside.
// Returns {next, weights, then claimJobsScript's five values per job, then
// an array of each capped type and the slots the claimer holds of it now
// (FlowClaim.Held), an array of the capped types of which it passed over
// jobs while the claimer holds slots of the type (FlowClaim.OwnFull), then
// the foreign
// window keys and their count}: next as FlowClaim.NextMS;
// weights the levels' current weights after the
// pick, in ARGV's order, comma-separated ("" without levels).
var claimJobsFlowScript = redis.NewScript(luaNow + `
local limit, lease, scan, retry = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[4]), tonumber(ARGV[5])
local only, prefix = ARGV[6] == '1', ARGV[7]
local nl, nlv, ntl = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
want_type(KEYS[1], 'zset')
want_type(KEYS[2], 'hash')
want_type(KEYS[4], 'zset') -- so that the writes below cannot fail
want_type(KEYS[5], 'hash')
local lim, ncap = {}, 0
for j = 0, nl - 1 do
  local o = 10 + 5 * j
  lim[ARGV[o + 1]] = {slot = KEYS[7 + j], cap = tonumber(ARGV[o + 2]), rn = tonumber(ARGV[o + 3]), per = tonumber(ARGV[o + 4]),
    inflight = tonumber(ARGV[o + 5]), type = ARGV[o + 1]}
  if lim[ARGV[o + 1]].cap > 0 then ncap = ncap + 1 end
end
local src, bylevel = {}, {}
local o = 10 + 5 * nl
for j = 0, nlv - 1 do
  local key = KEYS[7 + nl + j]
  want_type(key, 'zset')
  local s = {p = tonumber(ARGV[o + 2 * j + 1]), cur = tonumber(ARGV[o + 2 * j + 2]), key = key, off = 0, buf = {}, at = 1,
    passes = 0, stale = {}, fix = {}, heal = {}, took = {}}
  src[#src + 1] = s
  bylevel[s.p] = s
end
o = o + 2 * nlv
local tlevel = {}
for j = 0, ntl - 1 do tlevel[ARGV[o + 2 * j + 1]] = tonumber(ARGV[o + 2 * j + 2]) end
o = o + 2 * ntl
local run, nrun, nfull = {}, 0, 0
for i = o + 1, #ARGV do
  run[ARGV[i]] = true
  nrun = nrun + 1
end
local levels = nlv > 0
if not levels then src[1] = {p = 0, cur = 0, off = 0, buf = {}, at = 1, passes = 0} end
local hasatt = redis.call('EXISTS', KEYS[3]) == 1
local hasfirst = redis.call('EXISTS', KEYS[6]) == 1
local drop = {}
-- taken: the ids claimed in this call, from any source (a job in two
-- levels' indexes, after its type's priority changed, is claimed once).
local taken = {}
local function type_of(env)
  local t = string.match(env, '^{"task":"([^"\\]*)"')
  if not t then
    local ok, d = pcall(cjson.decode, env)
    if ok and type(d) == 'table' and type(d.task) == 'string' and d.task ~= '' then t = d.task end
  end
  return t
end
-- candidates(ids, dues) reads the data of due jobs: a list of
-- {id, due, env, att, first}; a job whose envelope is gone is dropped from
-- the queue (and, from a level, its index).
local function candidates(ids, dues, s)
  local out = {}
  if #ids == 0 then return out end
  local envs = callk('HMGET', KEYS[2], ids)
  local atts, firsts = {}, {}
  if hasatt then atts = callk('HMGET', KEYS[3], ids) end
  if hasfirst then firsts = callk('HMGET', KEYS[6], ids) end
  for k, id in ipairs(ids) do
    if envs[k] then
      out[#out + 1] = {id = id, due = dues[k], env = envs[k], att = atts[k], first = firsts[k]}
    else
      drop[#drop + 1] = id
      if s then s.stale[#s.stale + 1] = id end
    end
  end
  return out
end
-- fill(s) reads the next page of source s's due candidates; false when it
-- has none left.
local function fill(s)
  while s.at > #s.buf do
    if s.done then return false end
    s.buf, s.at = {}, 1
    local page = math.max(1, math.min(limit, scan))
    local ids, dues = {}, {}
    if not levels then
      local due = redis.call('ZRANGE', KEYS[1], '-inf', now, 'BYSCORE', 'LIMIT', s.off, page, 'WITHSCORES')
      for i = 1, #due, 2 do
        ids[#ids + 1] = due[i]
        dues[#dues + 1] = due[i + 1]
      end
      s.off = s.off + #ids
      if #ids < page then s.done = true end
    else
      local due = redis.call('ZRANGE', s.key, '-inf', now, 'BYSCORE', 'LIMIT', s.off, page)
      s.off = s.off + #due
      if #due < page then s.done = true end
      local scores = {}
      if #due > 0 then scores = callk('ZMSCORE', KEYS[1], due) end
      for i, id in ipairs(due) do
        local d = scores[i]
        if not d then
          s.stale[#s.stale + 1] = id -- its job left the queue
        elseif tonumber(d) > now then
          s.fix[#s.fix + 1] = d -- its job is due later now
          s.fix[#s.fix + 1] = id
        elseif s.took[id] == nil and not taken[id] then
          ids[#ids + 1] = id
          dues[#dues + 1] = d
        end
      end
    end
    s.buf = candidates(ids, dues, levels and s or nil)
  end
  return true
end
-- Jobs among the oldest due that no index of ours has: indexed now, at
-- their type's level, and candidates of it at once.
if levels then
  local head = redis.call('ZRANGE', KEYS[1], '-inf', now, 'BYSCORE', 'LIMIT', 0, ` + strconv.Itoa(levelHealScan) + `, 'WITHSCORES')
  local hids = {}
  for i = 1, #head, 2 do hids[#hids + 1] = head[i] end
  local found = {}
  if #hids > 0 then
    for _, s in ipairs(src) do
      for i, sc in ipairs(redis.call('ZMSCORE', s.key, unpack(hids))) do
        if sc then found[i] = true end
      end
    end
  end
  local ids, dues = {}, {}
  for i, id in ipairs(hids) do
    if not found[i] then
      ids[#ids + 1] = id
      dues[#dues + 1] = head[2 * i]
    end
  end
  for _, c in ipairs(candidates(ids, dues, nil)) do
    local t = type_of(c.env)
    local s = bylevel[(t and tlevel[t]) or 0]
    if s and (t == nil or not only or run[t]) then
      s.heal[#s.heal + 1] = c.due
      s.heal[#s.heal + 1] = c.id
      s.took[c.id] = false
      table.insert(s.buf, c)
    end
  end
end
local active, pmin = {}, nil
for _, s in ipairs(src) do
  if fill(s) then
    active[#active + 1] = s
    if not pmin or s.p < pmin then pmin = s.p end
  end
end
local total = 0
for _, s in ipairs(active) do
  s.w = s.p - pmin + 1
  total = total + s.w
end
table.sort(active, function(a, b) return a.p > b.p end)
local function pick()
  local best
  for _, s in ipairs(active) do
    s.cur = s.cur + s.w
    if not best or s.cur > best.cur then best = s end
  end
  if best then best.cur = best.cur - total end
  return best
end
local function retire(s)
  for i, a in ipairs(active) do
    if a == s then
      table.remove(active, i)
      total = total - s.w
      return
    end
  end
end
local me = string.match(ARGV[3], '^(.*)#') or ARGV[3]
local slots, rates, own = {}, {}, {}
local function load_slots(l)
  local s = slots[l.slot]
  if s then return s end
  want_type(l.slot, 'hash')
  local f = redis.call('HGETALL', l.slot)
  local others, mine, del = 0, 0, {}
  for i = 1, #f, 2 do
    local n, d = string.match(f[i + 1], '^(%d+)|(%d+)$')
    if not n or tonumber(d) <= now then del[#del + 1] = f[i]
    elseif f[i] == me then mine = tonumber(n)
    else others = others + tonumber(n) end
  end
  local grant = math.max(0, math.min(l.inflight + limit - mine, l.cap - others - mine))
  s = {del = del, inflight = l.inflight, slots = mine + grant, taken = 0, type = l.type}
  -- A rated type's claim is its start in the window: none ahead of a slot.
  s.room = (l.rn > 0 and 1 or ` + strconv.Itoa(JobSlotsAhead) + `) * s.slots - l.inflight
  if s.room <= 0 then nfull = nfull + 1 end
  slots[l.slot] = s
  return s
end
local foreign = {} -- window keys of the wrong type, for the reply
local function load_rate(key, per)
  local w = rates[key]
  if w then return w end
  local have = redis.call('TYPE', key).ok
  if have ~= 'zset' and have ~= 'none' then
    w = {foreign = true}
    foreign[#foreign + 1] = key
  else
    local cut = '(' .. (now - per)
    local first = redis.call('ZRANGE', key, cut, '+inf', 'BYSCORE', 'LIMIT', 0, 1, 'WITHSCORES')
    w = {n = redis.call('ZCOUNT', key, cut, '+inf'), oldest = tonumber(first[2]), per = per, add = {}}
  end
  rates[key] = w
  return w
end
local out = {-1, ''}
local owners = {}
local claim = ARGV[3] .. '|'
local capped, ratenext, cut = false, false, false
local examined, claimed, seq = 0, 0, 0
-- take(c) claims candidate c unless it is not ours or over a limit.
local function take(c)
  local t = type_of(c.env)
  if t ~= nil and only and not run[t] then return false end
  local l = t and lim[t]
  if l then
    local s, w
    if l.cap > 0 then
      s = load_slots(l)
      if s.taken >= s.room then
        capped = true
        if s.inflight + s.taken > 0 then own[t] = true end
        return false
      end
    end
    if l.rn > 0 then
      local key = prefix .. 'rate:' .. t
      if string.find(c.env, '"rate_key":', 1, true) then
        local ok, d = pcall(cjson.decode, c.env)
        if ok and type(d) == 'table' and type(d.rate_key) == 'string' and d.rate_key ~= '' then
          key = prefix .. 'ratekey:' .. #t .. ':' .. t .. ':' .. d.rate_key
        end
      end
      w = load_rate(key, l.per)
      if w.foreign then
        -- Not counted: the job waits until the key is moved aside.
        if not ratenext or now + retry < ratenext then ratenext = now + retry end
        return false
      elseif w.n >= l.rn then
        local at = (w.oldest or now) + l.per
        if not ratenext or at < ratenext then ratenext = at end
        return false
      end
    end
    if s then
      s.taken = s.taken + 1
      if s.taken == s.room then nfull = nfull + 1 end
    end
    if w then
      seq = seq + 1
      w.n = w.n + 1
      if not w.oldest then w.oldest = now end
      w.add[#w.add + 1] = now
      w.add[#w.add + 1] = ARGV[3] .. ':' .. seq
    end
  end
  drop[#drop + 1] = c.id
  taken[c.id] = true
  owners[#owners + 1] = c.id
  owners[#owners + 1] = claim .. c.due
  out[#out + 1] = c.id
  out[#out + 1] = c.due
  out[#out + 1] = (tonumber(c.att) or 0) + 1
  out[#out + 1] = c.env
  out[#out + 1] = c.first or false
  claimed = claimed + 1
  return true
end
while claimed < limit do
  if examined >= scan then cut = true break end
  local s = pick()
  if not s then break end
  local c = s.buf[s.at]
  s.at = s.at + 1
  examined = examined + 1
  if taken[c.id] then
    -- Claimed from another level's index in this call: nothing to do.
  elseif take(c) then
    s.passes = 0
    if levels then s.took[c.id] = true end
  else
    s.passes = s.passes + 1
  end
  -- Every type this process runs is capped and full: nothing further
  -- can be claimed.
  if only and nrun > 0 and nfull >= nrun then cut = true break end
  -- Without levels, reading another page has nothing left to do.
  if claimed >= limit and not levels then break end
  if not fill(s) then
    retire(s)
  elseif ncap > 0 and nfull >= ncap and s.passes >= ` + strconv.Itoa(levelPassLimit) + ` then
    -- Every capped type is full and a page of this source was passed
    -- over: what follows is most likely more of the same; look again
    -- within retry_ms rather than read the rest of scan now.
    retire(s)
    cut = true
  end
end
if #active > 0 then cut = true end
-- Every capped type's field, seen in the pick or not (read before the
-- first write: a foreign key fails the call whole): slots beyond the jobs
-- this process holds go back now.
for _, l in pairs(lim) do
  if l.cap > 0 then load_slots(l) end
end
if #drop > 0 then callk('ZREM', KEYS[1], drop) end
if #owners > 0 then
  callk('HSET', KEYS[5], owners)
  redis.call('ZADD', KEYS[4], now + lease, ARGV[3])
end
if levels then
  local cur = {}
  for _, s in ipairs(src) do
    local gone = {}
    for id, took in pairs(s.took) do
      if took then gone[#gone + 1] = id end
    end
    for _, id in ipairs(s.stale) do gone[#gone + 1] = id end
    if #s.heal > 0 then callk('ZADD', s.key, s.heal) end
    if #s.fix > 0 then callk('ZADD', s.key, s.fix) end
    if #gone > 0 then callk('ZREM', s.key, gone) end
    -- A level keeps its round robin state while it has due jobs.
    local live = s.w and (s.at <= #s.buf or not s.done)
    if live then cur[#cur + 1] = s.cur else cur[#cur + 1] = 0 end
  end
  out[2] = table.concat(cur, ',')
end
local held = {}
for key, s in pairs(slots) do
  if #s.del > 0 then callk('HDEL', key, s.del) end
  local n = math.min(s.slots, s.inflight + s.taken)
  if n > 0 then redis.call('HSET', key, me, string.format('%d|%d', n, now + lease))
  else redis.call('HDEL', key, me) end
  held[#held + 1] = s.type
  held[#held + 1] = n
end
for key, w in pairs(rates) do
  if not w.foreign then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now - w.per)
    if #w.add > 0 then callk('ZADD', key, w.add) end
    if redis.call('EXISTS', key) == 1 then redis.call('PEXPIRE', key, w.per) end
  end
end
local next = false
if claimed < limit and cut then next = now + retry
else
  local head = redis.call('ZRANGE', KEYS[1], '(' .. now, '+inf', 'BYSCORE', 'LIMIT', 0, 1, 'WITHSCORES')
  if head[2] then next = tonumber(head[2]) end
end
if capped and (not next or now + retry < next) then next = now + retry end
if ratenext then
  -- Jobs enqueued later behind the waiting ones publish no wake (the head
  -- did not move earlier): look again within retry_ms at the latest.
  ratenext = math.min(ratenext, now + retry)
  if not next or ratenext < next then next = math.max(ratenext, now + 1) end
end
if next then out[1] = next end
local ownl = {}
for t in pairs(own) do ownl[#ownl + 1] = t end
out[#out + 1] = held
out[#out + 1] = ownl
for _, key in ipairs(foreign) do out[#out + 1] = key end
out[#out + 1] = #foreign
return out
`)

// levelPassLimit is how many candidates in a row of one source a claim
// passes over, while every capped type is full, before it leaves that
// source for the call.
const levelPassLimit = 256

// Level is one priority level of a claim: its priority and the current
// weight of the smooth weighted round robin between levels (0 at first;
// ClaimJobsFlow returns the next).
type Level struct {
	Priority int
	Weight   int64
}

// ClaimFlow is a claim with flow control (ClaimJobsFlow).
type ClaimFlow struct {
	ClaimID string
	Limit   int
	Lease   time.Duration
	// Types are the job types the process runs; nil: every type.
	Types []string
	// Limits are the caps and rates of its types (may be empty).
	Limits []JobLimit
	// Levels are the priorities of its types, each once, with their round
	// robin state: nil claims from the queue in due order.
	Levels []Level
	// TypeLevels are its types whose priority is not 0.
	TypeLevels map[string]int
	Scan       int
	Retry      time.Duration
}

// FlowClaim is what ClaimJobsFlow claimed: the jobs; the next due time
// (unix ms, always after now, or -1 for an empty queue): the head after
// now, now + retry while a capped type is full, or when a full window has
// room again, or now + retry if that is earlier; the levels with their
// round robin state after the claim (nil without levels); and the rate
// window keys found holding a foreign value, whose jobs were left waiting
// until the caller moves them aside (Quarantine). Held is, per capped
// type, the running slots the claiming process holds after the claim (the
// n of its field): it starts no more of the type's jobs at once. OwnFull
// are the capped
// types of which it left jobs while the claiming process holds slots of
// the type: the end of one of its jobs of such a type frees a slot that a
// claim could use at once.
type FlowClaim struct {
	Jobs    []ClaimedJob
	NextMS  int64
	Levels  []Level
	Held    map[string]int
	OwnFull []string
	Foreign []string
}

// ClaimJobsFlow claims due jobs for a process with flow control: the caps
// and rates of f.Limits (jobs of a full type wait in the queue), and the
// priority levels of f.Levels (see "Priorities").
func (r *RDB) ClaimJobsFlow(ctx context.Context, f ClaimFlow) (c FlowClaim, err error) {
	switch {
	case f.Limit <= 0 || f.Limit > MaxJobClaim:
		return c, errors.New("claim jobs: limit " + strconv.Itoa(f.Limit) + " is outside [1, " + strconv.Itoa(MaxJobClaim) + "]")
	case f.Scan < f.Limit || f.Scan > MaxJobScan:
		return c, errors.New("claim jobs: scan " + strconv.Itoa(f.Scan) + " is outside [limit, " + strconv.Itoa(MaxJobScan) + "]")
	case f.Types != nil && len(f.Types) == 0:
		return c, errors.New("claim jobs: no job types")
	case len(f.Levels) > MaxLevels:
		return c, errors.New("claim jobs: " + strconv.Itoa(len(f.Levels)) + " levels, over " + strconv.Itoa(MaxLevels))
	}
	keys := make([]string, 0, 6+len(f.Limits)+len(f.Levels))
	keys = append(keys, r.k.Jobs(), r.k.JobData(), r.k.Attempts(), r.k.Leases(), r.k.Owners(), r.k.FirstDue())
	only := 0
	if f.Types != nil {
		only = 1
	}
	args := make([]any, 0, 10+5*len(f.Limits)+2*len(f.Levels)+2*len(f.TypeLevels)+len(f.Types))
	args = append(args, f.Limit, f.Lease.Milliseconds(), f.ClaimID, f.Scan, f.Retry.Milliseconds(), only, r.k.Prefix(),
		len(f.Limits), len(f.Levels), len(f.TypeLevels))
	for _, l := range f.Limits {
		if l.MaxRunning < 0 || l.RateN < 0 || (l.RateN > 0 && l.RatePer < time.Millisecond) || l.InFlight < 0 {
			return c, errors.New("claim jobs: limit of " + strconv.Quote(l.Type) + " out of range")
		}
		keys = append(keys, r.k.Slots(l.Type))
		args = append(args, l.Type, l.MaxRunning, l.RateN, l.RatePer.Milliseconds(), l.InFlight)
	}
	seen := make(map[int]bool, len(f.Levels))
	for _, l := range f.Levels {
		if seen[l.Priority] {
			return c, errors.New("claim jobs: level " + strconv.Itoa(l.Priority) + " given twice")
		}
		seen[l.Priority] = true
		keys = append(keys, r.k.Level(l.Priority))
		args = append(args, l.Priority, l.Weight)
	}
	for t, p := range f.TypeLevels {
		if f.Levels != nil && !seen[p] {
			return c, errors.New("claim jobs: type " + strconv.Quote(t) + " has level " + strconv.Itoa(p) + ", not among the levels")
		}
		args = append(args, t, p)
	}
	for _, t := range f.Types {
		args = append(args, t)
	}
	res, err := claimJobsFlowScript.Run(ctx, r.c, keys, args...).Slice()
	if err != nil {
		return c, err
	}
	// The reply ends with the foreign window keys and their count.
	if n, ok := res[len(res)-1].(int64); ok && n >= 0 && int(n) < len(res) {
		for _, k := range res[len(res)-1-int(n) : len(res)-1] {
			if s, ok := k.(string); ok {
				c.Foreign = append(c.Foreign, s)
			}
		}
		res = res[:len(res)-1-int(n)]
	}
	// Before them, the capped types left for want of the claimer's slots.
	if len(res) > 0 {
		if own, ok := res[len(res)-1].([]any); ok {
			for _, t := range own {
				if s, ok := t.(string); ok {
					c.OwnFull = append(c.OwnFull, s)
				}
			}
			res = res[:len(res)-1]
		}
	}
	// Before them, the slots held of each capped type.
	if len(res) > 0 {
		if held, ok := res[len(res)-1].([]any); ok {
			c.Held = make(map[string]int, len(held)/2)
			for i := 0; i+1 < len(held); i += 2 {
				t, _ := held[i].(string)
				n, _ := held[i+1].(int64)
				c.Held[t] = int(n)
			}
			res = res[:len(res)-1]
		}
	}
	if len(res) < 2 {
		return c, errors.New("claim jobs: reply too short")
	}
	if f.Levels != nil {
		ws, _ := res[1].(string)
		parts := strings.Split(ws, ",")
		if len(parts) != len(f.Levels) {
			return c, errors.New("claim jobs: reply has " + strconv.Itoa(len(parts)) + " level weights, want " + strconv.Itoa(len(f.Levels)))
		}
		c.Levels = make([]Level, len(f.Levels))
		for i, l := range f.Levels {
			w, err := strconv.ParseInt(parts[i], 10, 64)
			if err != nil {
				return c, errors.New("claim jobs: level weight " + strconv.Quote(parts[i]) + ": not an integer")
			}
			c.Levels[i] = Level{Priority: l.Priority, Weight: w}
		}
	}
	c.Jobs, c.NextMS = parseJobClaim(append(res[:1:1], res[2:]...))
	return c, nil
}

// LevelDue reads, in one pipeline, how many entries of each level's index
// are due at nowMS (unix ms), for display: an entry whose job has left the
// queue counts until a claim drops it. It writes nothing.
func (r *RDB) LevelDue(ctx context.Context, levels []int, nowMS int64) ([]int64, error) {
	ranges := make([]zrange, len(levels))
	for i, l := range levels {
		ranges[i] = zrange{r.k.Level(l), "-inf", strconv.FormatInt(nowMS, 10)}
	}
	return r.zcounts(ctx, ranges)
}
