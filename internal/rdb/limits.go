package rdb

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// JobLimit is the flow control of one job type as the claiming process's
// registry has it (TaskConfig.MaxRunning and Rate): at most MaxRunning
// jobs of the type running at once across the cluster (0: no cap), and at
// most RateN starts in any window of RatePer (a sliding window on Redis
// time; RateN 0: no rate). A job enqueued with a rate key (Envelope.RateKey)
// counts against the window of its type and key instead of its type's.
//
// InFlight is, for a capped type, the claiming process's jobs of the type
// in flight when it claims: claimed and not yet ended (running, or waiting
// for a worker). It holds a running slot for each of them (see
// claimJobsLimitedScript).
type JobLimit struct {
	Type       string
	MaxRunning int
	RateN      int
	RatePer    time.Duration
	InFlight   int
}

// claimJobsLimitedScript is claimJobsOfScript for a process of which some
// job types have limits (JobLimit): it claims, oldest first, the due jobs
// of its types (only = 1: the types named; only = 0: every type, as
// claimJobsScript does), and leaves in the queue, untouched and in order,
// those of a limited type that is full:
//
//   - running: the slots key of a capped type (P slots:<type>, one per
//     limit, in KEYS) is a hash of the processes holding slots: field the
//     process id (the claim id's part before its last '#', as
//     ClaimProcess), value "n|deadline_ms": it holds n slots until the
//     deadline (Redis time), which RenewJobSlots moves on with its job
//     leases. A field whose deadline has passed (a dead or stalled
//     process's) or that does not parse is deleted and not counted. With
//     others the n of the other live fields and mine the claimer's own
//     (0: none), the claimer gets slots = mine + grant, grant =
//     clamp(inflight + limit - mine, 0, cap - others - mine), and takes at
//     most slots - inflight jobs of the type (inflight: JobLimit.InFlight);
//     having taken c, it writes its field min(slots, inflight + c) (HDEL
//     at 0), for every capped limit, whether or not a job of the type was
//     seen: so a process keeps slots only for the jobs it holds, gives the
//     rest back at its next claim, and the live fields never sum to more
//     than cap. The ack does not touch them.
//   - rate: the window key (P rate:<type>, or P ratekey:<len>:<type>:<key>
//     for a job with a rate key, built here from the prefix: one hash tag)
//     holds a member per start in the window, scored with its server time;
//     a start is allowed while fewer than N members are newer than now -
//     per. Older members are removed and the key expires after per, so an
//     idle window vanishes.
//
// The type is read from the envelope's head, or decoded with cjson; the
// rate key is decoded (cjson) only for a rated type's envelope that has
// "rate_key". It looks at no more than scan due jobs; with only = 1 it
// stops as soon as every type it runs is capped and full, and in any case
// after a page it could take nothing of while every capped type is full
// (then the next due is now + retry_ms).
//
// KEYS: jobs, jobs:data, jobs:attempt, jobs:lease, jobs:owner, jobs:first,
// then the slots key of each limit
// ARGV: limit, lease_ms, claim_id, scan, retry_ms, only, prefix, n_limits,
// then n_limits groups of type, max_running, rate_n, rate_per_ms,
// inflight; then, with only = 1, the type names it runs
// Bounds: limit at most MaxJobClaim, scan at most MaxJobScan; a slots key
// has a field per live process holding slots of the type (read whole).
// Failure: a key of the wrong type fails before anything is written (the
// slot and window keys are type-checked when first read).
// Returns claimJobsScript's reply, whose next due time is never now or
// earlier: the first of the head after now, now + retry_ms when a capped
// type was full or scan due jobs were passed over, and when the oldest
// start leaves a full window (or now + retry_ms, if earlier: jobs enqueued
// behind waiting ones wake no claim); then one more element: the capped
// types of which it passed over jobs while the claimer holds slots of the
// type (inflight + c > 0: the end of one of its jobs frees a slot it can
// use at once), as an array.
var claimJobsLimitedScript = redis.NewScript(luaNow + `
local limit, lease, scan, retry = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[4]), tonumber(ARGV[5])
local only, prefix, nl = ARGV[6] == '1', ARGV[7], tonumber(ARGV[8])
want_type(KEYS[4], 'zset') -- so that the writes below cannot fail
want_type(KEYS[5], 'hash')
local lim, ncap = {}, 0
for j = 0, nl - 1 do
  local o = 8 + 5 * j
  lim[ARGV[o + 1]] = {slot = KEYS[7 + j], cap = tonumber(ARGV[o + 2]), rn = tonumber(ARGV[o + 3]), per = tonumber(ARGV[o + 4]), inflight = tonumber(ARGV[o + 5])}
  if lim[ARGV[o + 1]].cap > 0 then ncap = ncap + 1 end
end
local run, nrun, nfull = {}, 0, 0
for i = 9 + 5 * nl, #ARGV do
  run[ARGV[i]] = true
  nrun = nrun + 1
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
  s = {del = del, inflight = l.inflight, slots = mine + grant, taken = 0}
  s.room = s.slots - l.inflight
  if s.room <= 0 then nfull = nfull + 1 end
  slots[l.slot] = s
  return s
end
local function load_rate(key, per)
  local w = rates[key]
  if w then return w end
  want_type(key, 'zset')
  local cut = '(' .. (now - per)
  local first = redis.call('ZRANGE', key, cut, '+inf', 'BYSCORE', 'LIMIT', 0, 1, 'WITHSCORES')
  w = {n = redis.call('ZCOUNT', key, cut, '+inf'), oldest = tonumber(first[2]), per = per, add = {}}
  rates[key] = w
  return w
end
local out = {-1}
local owners, drop = {}, {}
local hasatt = redis.call('EXISTS', KEYS[3]) == 1
local hasfirst = redis.call('EXISTS', KEYS[6]) == 1
local claim = ARGV[3] .. '|'
local capped, ratenext = false, false
local offset, claimed, done, seq = 0, 0, false, 0
while claimed < limit and offset < scan do
  local page = math.min(limit, scan - offset)
  local due = redis.call('ZRANGE', KEYS[1], '-inf', now, 'BYSCORE', 'LIMIT', offset, page, 'WITHSCORES')
  local n = #due / 2
  if n == 0 then done = true break end
  local ids = {}
  for i = 1, #due, 2 do ids[#ids + 1] = due[i] end
  local envs = callk('HMGET', KEYS[2], ids)
  local atts, firsts = {}, {}
  if hasatt then atts = callk('HMGET', KEYS[3], ids) end
  if hasfirst then firsts = callk('HMGET', KEYS[6], ids) end
  local passed = 0
  for k, id in ipairs(ids) do
    local env = envs[k]
    if not env then
      drop[#drop + 1] = id
    else
      local t = string.match(env, '^{"task":"([^"\\]*)"')
      if not t then
        local ok, d = pcall(cjson.decode, env)
        if ok and type(d) == 'table' and type(d.task) == 'string' and d.task ~= '' then t = d.task end
      end
      local take = t == nil or not only or run[t]
      local l = t and lim[t]
      if take and l then
        local s, w
        if l.cap > 0 then
          s = load_slots(l)
          if s.taken >= s.room then
            take = false
            capped = true
            if s.inflight + s.taken > 0 then own[t] = true end
          end
        end
        if take and l.rn > 0 then
          local key = prefix .. 'rate:' .. t
          if string.find(env, '"rate_key":', 1, true) then
            local ok, d = pcall(cjson.decode, env)
            if ok and type(d) == 'table' and type(d.rate_key) == 'string' and d.rate_key ~= '' then
              key = prefix .. 'ratekey:' .. #t .. ':' .. t .. ':' .. d.rate_key
            end
          end
          w = load_rate(key, l.per)
          if w.n >= l.rn then
            take = false
            local at = (w.oldest or now) + l.per
            if not ratenext or at < ratenext then ratenext = at end
          end
        end
        if take then
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
      end
      if take then
        drop[#drop + 1] = id
        owners[#owners + 1] = id
        owners[#owners + 1] = claim .. due[2 * k]
        out[#out + 1] = id
        out[#out + 1] = due[2 * k]
        out[#out + 1] = (tonumber(atts[k]) or 0) + 1
        out[#out + 1] = env
        out[#out + 1] = firsts[k] or false
        claimed = claimed + 1
        if claimed == limit then break end
      else
        passed = passed + 1
      end
    end
  end
  offset = offset + n
  if n < page then done = true end
  -- Every type this process runs is capped and full: nothing further
  -- can be claimed.
  if only and nfull >= nrun and nrun > 0 then break end
  -- Every capped type is full and a whole page was theirs (or over a
  -- rate): what follows is most likely more of the same; look again
  -- within retry_ms rather than read the rest of scan now.
  if ncap > 0 and nfull >= ncap and passed == n then break end
end
-- Every capped type's field, seen in the scan or not (read before the
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
for key, s in pairs(slots) do
  if #s.del > 0 then callk('HDEL', key, s.del) end
  local n = math.min(s.slots, s.inflight + s.taken)
  if n > 0 then redis.call('HSET', key, me, string.format('%d|%d', n, now + lease))
  else redis.call('HDEL', key, me) end
end
for key, w in pairs(rates) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - w.per)
  if #w.add > 0 then callk('ZADD', key, w.add) end
  if redis.call('EXISTS', key) == 1 then redis.call('PEXPIRE', key, w.per) end
end
local next = false
if claimed < limit and not done then next = now + retry
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
out[#out + 1] = ownl
return out
`)

// ClaimJobsLimited is ClaimJobsOf for a process of which some job types
// have limits (limits: not empty, each with MaxRunning or a rate): it
// claims the due jobs of the types named in types (nil: of every type, as
// ClaimJobs does), except those of a limited type that is full, which wait
// in the queue in their order. The limits are the caller's (its registry):
// processes of builds that disagree each enforce their own on their own
// claims. The lease lasts the claimer's slots too (RenewJobSlots renews
// them with its job leases). Its nextMS is always after now (or -1): the
// head after now, now + retry while a capped type is full, or when a full
// window has room again, or now + retry if that is earlier. ownFull are
// the capped types of which it left jobs while the claiming process holds
// slots of the type: the end of one of its jobs of such a type frees a
// slot that a claim could use at once.
func (r *RDB) ClaimJobsLimited(ctx context.Context, claimID string, limit int, lease time.Duration, types []string, limits []JobLimit, scan int, retry time.Duration) (jobs []ClaimedJob, nextMS int64, ownFull []string, err error) {
	switch {
	case limit > MaxJobClaim:
		return nil, 0, nil, errors.New("claim jobs: limit " + strconv.Itoa(limit) + " is over " + strconv.Itoa(MaxJobClaim))
	case scan < limit || scan > MaxJobScan:
		return nil, 0, nil, errors.New("claim jobs: scan " + strconv.Itoa(scan) + " is outside [limit, " + strconv.Itoa(MaxJobScan) + "]")
	case types != nil && len(types) == 0:
		return nil, 0, nil, errors.New("claim jobs: no job types")
	case len(limits) == 0:
		return nil, 0, nil, errors.New("claim jobs: no limits")
	}
	keys := []string{r.k.Jobs(), r.k.JobData(), r.k.Attempts(), r.k.Leases(), r.k.Owners(), r.k.FirstDue()}
	only := 0
	if types != nil {
		only = 1
	}
	args := make([]any, 0, 8+5*len(limits)+len(types))
	args = append(args, limit, lease.Milliseconds(), claimID, scan, retry.Milliseconds(), only, r.k.Prefix(), len(limits))
	for _, l := range limits {
		if l.MaxRunning < 0 || l.RateN < 0 || (l.RateN > 0 && l.RatePer < time.Millisecond) || l.InFlight < 0 {
			return nil, 0, nil, errors.New("claim jobs: limit of " + strconv.Quote(l.Type) + " out of range")
		}
		keys = append(keys, r.k.Slots(l.Type))
		args = append(args, l.Type, l.MaxRunning, l.RateN, l.RatePer.Milliseconds(), l.InFlight)
	}
	for _, t := range types {
		args = append(args, t)
	}
	res, err := claimJobsLimitedScript.Run(ctx, r.c, keys, args...).Slice()
	if err != nil {
		return nil, 0, nil, err
	}
	if len(res) < 2 {
		return nil, 0, nil, errors.New("claim jobs: short reply")
	}
	last, _ := res[len(res)-1].([]any)
	for _, t := range last {
		if s, ok := t.(string); ok {
			ownFull = append(ownFull, s)
		}
	}
	jobs, nextMS = parseJobClaim(res[:len(res)-1])
	return jobs, nextMS, ownFull, nil
}

// parseSlotField parses a slots field's value, "n|deadline_ms" (see
// claimJobsLimitedScript).
func parseSlotField(v string) (n, deadlineMS int64, ok bool) {
	a, b, found := strings.Cut(v, "|")
	if !found {
		return 0, 0, false
	}
	n, err1 := strconv.ParseInt(a, 10, 64)
	deadlineMS, err2 := strconv.ParseInt(b, 10, 64)
	return n, deadlineMS, err1 == nil && err2 == nil && n >= 0
}

// renewJobSlotsScript moves on the deadline of a process's field in each
// slots key that has one, keeping its n (see claimJobsLimitedScript).
//
// KEYS: the slots keys
// ARGV: process id, lease_ms
// Bounds: one HGET and at most one HSET per key.
// Failure: a key of the wrong type fails before anything is written.
// Returns how many fields it renewed.
var renewJobSlotsScript = redis.NewScript(luaNow + `
for _, key in ipairs(KEYS) do want_type(key, 'hash') end
local renewed = 0
for _, key in ipairs(KEYS) do
  local v = redis.call('HGET', key, ARGV[1])
  local n = v and string.match(v, '^(%d+)|')
  if n then
    redis.call('HSET', key, ARGV[1], string.format('%d|%d', tonumber(n), now + tonumber(ARGV[2])))
    renewed = renewed + 1
  end
end
return renewed
`)

// RenewJobSlots extends, to now + lease (Redis time), the running slots
// that process holds of the capped job types types, as RenewJobLeases does
// its job leases (the same lease). A field that is gone (its deadline
// passed and a claim deleted it) is not brought back: the process's next
// claim takes what the cap allows.
func (r *RDB) RenewJobSlots(ctx context.Context, process string, lease time.Duration, types []string) error {
	if len(types) == 0 {
		return nil
	}
	keys := make([]string, len(types))
	for i, t := range types {
		keys[i] = r.k.Slots(t)
	}
	if err := renewJobSlotsScript.Run(ctx, r.c, keys, process, lease.Milliseconds()).Err(); err != nil {
		return fmt.Errorf("renew job slots of %s: %w", process, err)
	}
	return nil
}

// ReleaseJobSlots deletes the running slots that process holds of the
// capped job types types: at a graceful stop, once its jobs have ended.
func (r *RDB) ReleaseJobSlots(ctx context.Context, process string, types []string) error {
	pipe := r.c.Pipeline()
	for _, t := range types {
		pipe.HDel(ctx, r.k.Slots(t), process)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("release job slots of %s: %w", process, err)
	}
	return nil
}

// JobFlow is what the flow control of one job type uses now: Running, the
// running slots held (the n of the slots key's live fields: jobs running
// or about to), and the starts in its rate window (the type's own, not a
// rate key's).
type JobFlow struct {
	Running int64
	Starts  int64
}

// JobFlow reads the running count and window use of the type typ, whose
// rate window is per (0: none), for display (crontab show), on this
// host's clock; it writes nothing.
func (r *RDB) JobFlow(ctx context.Context, typ string, per time.Duration) (JobFlow, error) {
	var f JobFlow
	pipe := r.c.Pipeline()
	running := pipe.HGetAll(ctx, r.k.Slots(typ))
	var starts *redis.IntCmd
	if per > 0 {
		starts = pipe.ZCount(ctx, r.k.Rate(typ), "("+strconv.FormatInt(time.Now().Add(-per).UnixMilli(), 10), "+inf")
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return f, err
	}
	now := time.Now().UnixMilli()
	for _, v := range running.Val() {
		if n, d, ok := parseSlotField(v); ok && d > now {
			f.Running += n
		}
	}
	if starts != nil {
		f.Starts = starts.Val()
	}
	return f, nil
}
