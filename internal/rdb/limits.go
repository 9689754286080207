package rdb

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// JobLimit is the flow control of one job type as the claiming process's
// registry has it (TaskConfig.MaxRunning and Rate): at most MaxRunning
// jobs of the type running at once across the cluster (0: no cap), and at
// most RateN starts in any window of RatePer (a sliding window on Redis
// time; RateN 0: no rate). A job enqueued with a rate key (Envelope.RateKey)
// counts against the window of its type and key instead of its type's.
type JobLimit struct {
	Type       string
	MaxRunning int
	RateN      int
	RatePer    time.Duration
}

// claimJobsLimitedScript is claimJobsOfScript for a process of which some
// job types have limits (JobLimit): it claims, oldest first, the due jobs
// of its types (only = 1: the types named; only = 0: every type, as
// claimJobsScript does), and leaves in the queue, untouched and in order,
// those of a limited type that is full:
//
//   - running: the slots key of a capped type (P slots:<type>, one per
//     limit, in KEYS) holds a member per job of the type in flight, scored
//     with its claim's lease deadline at claim time. A member whose score
//     has passed is checked against its owner (jobs:owner) and the owner
//     claim's lease: still leased, its score is brought forward to that
//     lease; else (the job was acked, redelivered, or its process died) it
//     is removed. So a dead process's slots free when its lease expires,
//     with no write per lease renewal. The running count is the members
//     left; the ack removes a member (AckBatch.Slots).
//   - rate: the window key (P rate:<type>, or P ratekey:<len>:<type>:<key>
//     for a job with a rate key, built here from the prefix: one hash tag)
//     holds a member per start in the window, scored with its server time;
//     a start is allowed while fewer than N members are newer than now -
//     per. Older members are removed and the key expires after per, so an
//     idle window vanishes. A window key that holds a foreign value (not a
//     ZSET: an operator's SET, another program's) is not failed on: its
//     jobs wait, as in a full window, nothing is written to it, and the
//     reply names it, for the caller to move it aside (the per-key windows'
//     names come with the jobs: no check at start can know them).
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
// then n_limits groups of type, max_running, rate_n, rate_per_ms; then,
// with only = 1, the type names it runs
// Bounds: limit at most MaxJobClaim, scan at most MaxJobScan; it checks at
// most 1,000 slot members past their score per capped type per call.
// Failure: a key of the wrong type fails before anything is written (the
// slot keys are type-checked when first read), except a window key (see
// rate above).
// Returns claimJobsScript's reply, whose next due time is never now or
// earlier: the first of the head after now, now + retry_ms when a capped
// type was full or scan due jobs were passed over, and when the oldest
// start leaves a full window (or now + retry_ms, if earlier: jobs enqueued
// behind waiting ones wake no claim; also for a foreign window); then the
// names of the foreign window keys and, last, how many there are.
var claimJobsLimitedScript = redis.NewScript(luaNow + luaOwner + `
local limit, lease, scan, retry = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[4]), tonumber(ARGV[5])
local only, prefix, nl = ARGV[6] == '1', ARGV[7], tonumber(ARGV[8])
want_type(KEYS[4], 'zset') -- so that the writes below cannot fail
want_type(KEYS[5], 'hash')
local lim, ncap = {}, 0
for j = 0, nl - 1 do
  local o = 8 + 4 * j
  lim[ARGV[o + 1]] = {slot = KEYS[7 + j], cap = tonumber(ARGV[o + 2]), rn = tonumber(ARGV[o + 3]), per = tonumber(ARGV[o + 4])}
  if lim[ARGV[o + 1]].cap > 0 then ncap = ncap + 1 end
end
local run, nrun, nfull = {}, 0, 0
for i = 9 + 4 * nl, #ARGV do
  run[ARGV[i]] = true
  nrun = nrun + 1
end
local slots, rates = {}, {}
local function load_slots(l)
  local s = slots[l.slot]
  if s then return s end
  want_type(l.slot, 'zset')
  s = {add = {}, fix = {}, del = {}, running = redis.call('ZCARD', l.slot)}
  local stale = redis.call('ZRANGE', l.slot, '-inf', now, 'BYSCORE', 'LIMIT', 0, 1000)
  if #stale > 0 then
    local owners = callk('HMGET', KEYS[5], stale)
    for k, id in ipairs(stale) do
      local d = false
      if owners[k] then d = redis.call('ZSCORE', KEYS[4], (owner_split(owners[k]))) end
      if d and tonumber(d) > now then
        s.fix[#s.fix + 1] = d
        s.fix[#s.fix + 1] = id
      else
        s.del[#s.del + 1] = id
      end
    end
    s.running = s.running - #s.del
  end
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
          if s.running >= l.cap then take = false capped = true end
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
          if w.foreign then
            -- Not counted: the job waits until the key is moved aside.
            take = false
            if not ratenext or now + retry < ratenext then ratenext = now + retry end
          elseif w.n >= l.rn then
            take = false
            local at = (w.oldest or now) + l.per
            if not ratenext or at < ratenext then ratenext = at end
          end
        end
        if take then
          if s then
            s.running = s.running + 1
            s.add[#s.add + 1] = now + lease
            s.add[#s.add + 1] = id
            if s.running == l.cap then nfull = nfull + 1 end
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
if #drop > 0 then callk('ZREM', KEYS[1], drop) end
if #owners > 0 then
  callk('HSET', KEYS[5], owners)
  redis.call('ZADD', KEYS[4], now + lease, ARGV[3])
end
for key, s in pairs(slots) do
  if #s.del > 0 then callk('ZREM', key, s.del) end
  if #s.fix > 0 then callk('ZADD', key, s.fix) end
  if #s.add > 0 then callk('ZADD', key, s.add) end
end
for key, w in pairs(rates) do
  if not w.foreign then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now - w.per)
    if #w.add > 0 then callk('ZADD', key, w.add) end
    if redis.call('EXISTS', key) == 1 then redis.call('PEXPIRE', key, w.per) end
  end
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
for _, key in ipairs(foreign) do out[#out + 1] = key end
out[#out + 1] = #foreign
return out
`)

// ClaimJobsLimited is ClaimJobsOf for a process of which some job types
// have limits (limits: not empty, each with MaxRunning or a rate): it
// claims the due jobs of the types named in types (nil: of every type, as
// ClaimJobs does), except those of a limited type that is full, which wait
// in the queue in their order. The limits are the caller's (its registry):
// processes of builds that disagree each enforce their own on their own
// claims. Its nextMS is always after now (or -1): the head after now, now +
// retry while a capped type is full (an ack that frees a slot also
// publishes on the wake channel), or when a full window has room again,
// or now + retry if that is earlier. foreign names the rate window keys
// (rate:<type>, ratekey:<len>:<type>:<key>) found holding a foreign value:
// their jobs were left waiting, and the caller moves the keys aside
// (Quarantine), after which they run.
func (r *RDB) ClaimJobsLimited(ctx context.Context, claimID string, limit int, lease time.Duration, types []string, limits []JobLimit, scan int, retry time.Duration) (jobs []ClaimedJob, nextMS int64, foreign []string, err error) {
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
	args := make([]any, 0, 8+4*len(limits)+len(types))
	args = append(args, limit, lease.Milliseconds(), claimID, scan, retry.Milliseconds(), only, r.k.Prefix(), len(limits))
	for _, l := range limits {
		if l.MaxRunning < 0 || l.RateN < 0 || (l.RateN > 0 && l.RatePer < time.Millisecond) {
			return nil, 0, nil, errors.New("claim jobs: limit of " + strconv.Quote(l.Type) + " out of range")
		}
		keys = append(keys, r.k.Slots(l.Type))
		args = append(args, l.Type, l.MaxRunning, l.RateN, l.RatePer.Milliseconds())
	}
	for _, t := range types {
		args = append(args, t)
	}
	res, err := claimJobsLimitedScript.Run(ctx, r.c, keys, args...).Slice()
	if err != nil {
		return nil, 0, nil, err
	}
	// The reply ends with the foreign window keys and their count.
	if n, ok := res[len(res)-1].(int64); ok && n >= 0 && int(n) < len(res) {
		for _, k := range res[len(res)-1-int(n) : len(res)-1] {
			if s, ok := k.(string); ok {
				foreign = append(foreign, s)
			}
		}
		res = res[:len(res)-1-int(n)]
	}
	jobs, nextMS = parseJobClaim(res)
	return jobs, nextMS, foreign, nil
}

// JobFlow is what the flow control of one job type uses now: its jobs
// running by the slots key (members whose lease has not passed) and the
// starts in its rate window (the type's own, not a rate key's).
type JobFlow struct {
	Running int64
	Starts  int64
}

// JobFlow reads the running count and window use of the type typ, whose
// rate window is per (0: none), for display (crontab show), on this
// host's clock; it writes nothing, so the job of a dead claim counts until
// a claim of the type removes it.
func (r *RDB) JobFlow(ctx context.Context, typ string, per time.Duration) (JobFlow, error) {
	var f JobFlow
	pipe := r.c.Pipeline()
	running := pipe.ZCard(ctx, r.k.Slots(typ))
	var starts *redis.IntCmd
	if per > 0 {
		starts = pipe.ZCount(ctx, r.k.Rate(typ), windowMin(time.Now().UnixMilli(), per), "+inf")
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return f, err
	}
	f.Running = running.Val()
	if starts != nil {
		f.Starts = starts.Val()
	}
	return f, nil
}

// RateStart is one start counted in a rate window: the member the job
// claim added for it (unique per start) and the claim's Redis server time,
// unix ms.
type RateStart struct {
	Member string
	AtMS   int64
}

// RateStarts reads the starts in a rate window scored fromMS or later: the
// job type typ's own window for rateKey "", else that rate key's window
// (RateKey), oldest first, and the Redis server time of the read, unix ms, in one MULTI: no
// claim runs between the two, so every start of a claim after the read is
// scored nowMS or later. A start stays in the window for at least the
// rate's Per after its score (the claim removes only members scored now -
// per or earlier, and the key expires per after the latest claim that
// touched it), so reads less than Per apart, each from the previous read's
// nowMS, see every start once or more. For measurement (crontabbench,
// the e2e tests).
func (r *RDB) RateStarts(ctx context.Context, typ, rateKey string, fromMS int64) (starts []RateStart, nowMS int64, err error) {
	key := r.k.Rate(typ)
	if rateKey != "" {
		key = r.k.RateKey(typ, rateKey)
	}
	pipe := r.c.TxPipeline()
	zr := pipe.ZRangeArgsWithScores(ctx, redis.ZRangeArgs{Key: key, ByScore: true,
		Start: strconv.FormatInt(fromMS, 10), Stop: "+inf"})
	tm := pipe.Time(ctx)
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, 0, fmt.Errorf("read rate window %s: %w", key, err)
	}
	starts = make([]RateStart, 0, len(zr.Val()))
	for _, z := range zr.Val() {
		m, _ := z.Member.(string)
		starts = append(starts, RateStart{Member: m, AtMS: int64(z.Score)})
	}
	return starts, tm.Val().UnixMilli(), nil
}

// windowMin is the ZCOUNT minimum of the starts in a window of per that
// ends at nowMS: those newer than nowMS - per, as the claim counts them.
func windowMin(nowMS int64, per time.Duration) string {
	return "(" + strconv.FormatInt(nowMS-per.Milliseconds(), 10)
}

// RateWindow names the window of a rate key: the jobs of type Type
// enqueued with rate key Key (Keys.RateKey, which such a job counts
// against instead of its type's window), over a window of Per.
type RateWindow struct {
	Type, Key string
	Per       time.Duration
}

// RateKeyStarts reads, in one pipeline, the starts in each window of ws
// that ends at nowMS (unix ms), for display; it writes nothing. A missing
// key is 0; a foreign value fails the whole read.
func (r *RDB) RateKeyStarts(ctx context.Context, ws []RateWindow, nowMS int64) ([]int64, error) {
	cmds, err := pipelined(ctx, r.c, nil, func(pipe redis.Pipeliner) []*redis.IntCmd {
		cmds := make([]*redis.IntCmd, len(ws))
		for i, w := range ws {
			cmds[i] = pipe.ZCount(ctx, r.k.RateKey(w.Type, w.Key), windowMin(nowMS, w.Per), "+inf")
		}
		return cmds
	})
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(ws))
	for i, c := range cmds {
		out[i] = c.Val()
	}
	return out, nil
}
