package rdb

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// NewJob is a job to enqueue: its id, its envelope as stored, when it is
// due (AtMS, server time; 0 means Delay from the server's now), and whether
// an existing job with its id makes it a duplicate (ids a caller chose).
// Unique is its unique identity, for EnqueueUnique only (Enqueue ignores
// it).
type NewJob struct {
	ID       string
	Envelope string
	AtMS     int64
	Delay    time.Duration
	Check    bool
	Unique   UniqueJob
	// Level is the job's priority level when Indexed: in a namespace with
	// priorities, the job is also added to its level's index (see
	// "Priorities").
	Level   int
	Indexed bool
}

// levelArg is the level argument of the enqueue scripts: "" for a job
// without one.
func (j NewJob) levelArg() string {
	if !j.Indexed {
		return ""
	}
	return strconv.Itoa(j.Level)
}

// EnqueueBatch is how many jobs one enqueue script call takes: large
// enough to amortise the call, small enough to keep each call well under a
// millisecond of Redis time.
const EnqueueBatch = 500

// enqueueScript adds a batch of jobs, each unless one with its id is
// pending, running or dead (idempotent enqueue; the check is skipped for the
// random ids the client makes, which cannot collide), and wakes the
// schedulers when one is due before the current head of the job queue. It
// writes the batch with one variadic HSET and one ZADD.
//
// A job with a level (NewJob.Level) is also added to its level's index,
// P "jobs:prio:<level>" (see "Priorities"), built here from the prefix:
// one hash tag.
//
// KEYS: jobs, jobs:data, jobs:owner, dead
// ARGV: wake_channel, n, prefix, then n groups of id, envelope, at_ms (0:
// use delay), delay_ms, check (1: fail when the id exists), level ("" for
// none)
// Returns the due time in ms of each job, or -1 for one whose id exists.
var enqueueScript = redis.NewScript(luaNow + `
want_type(KEYS[1], 'zset')
want_type(KEYS[2], 'hash')
local n, prefix = tonumber(ARGV[2]), ARGV[3]
local out, data, queue, seen, idx = {}, {}, {}, {}, {}
local first
for i = 0, n - 1 do
  local lv = ARGV[3 + 6 * i + 6]
  if lv ~= '' and not idx[lv] then
    idx[lv] = {}
    want_type(prefix .. 'jobs:prio:' .. lv, 'zset')
  end
end
for i = 0, n - 1 do
  local o = 3 + 6 * i
  local id = ARGV[o + 1]
  if seen[id] or (ARGV[o + 5] == '1' and (redis.call('HEXISTS', KEYS[2], id) == 1 or
      redis.call('HEXISTS', KEYS[3], id) == 1 or redis.call('ZSCORE', KEYS[4], id))) then
    out[i + 1] = -1
  else
    seen[id] = true
    local due = tonumber(ARGV[o + 3])
    if due == 0 then due = now + tonumber(ARGV[o + 4]) end
    data[#data + 1] = id
    data[#data + 1] = ARGV[o + 2]
    queue[#queue + 1] = due
    queue[#queue + 1] = id
    local lv = idx[ARGV[o + 6]]
    if lv then
      lv[#lv + 1] = due
      lv[#lv + 1] = id
    end
    if not first or due < first then first = due end
    out[i + 1] = due
  end
end
if first then
  local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  callk('HSET', KEYS[2], data)
  callk('ZADD', KEYS[1], queue)
  for lv, members in pairs(idx) do
    if #members > 0 then callk('ZADD', prefix .. 'jobs:prio:' .. lv, members) end
  end
  if not head[2] or first < tonumber(head[2]) then
    redis.call('PUBLISH', ARGV[1], 'job')
  end
end
return out
`)

// Enqueue adds jobs, EnqueueBatch per script call, all in one pipeline, and
// returns the due time (unix ms) of each, or -1 for a duplicate (nothing
// written for it).
// Bounds: any number of jobs; each call holds EnqueueBatch at most.
// Failure: the queue or data hash of the wrong type fails a call before it
// writes; a failed call writes none of its jobs (the others' calls stand).
func (r *RDB) Enqueue(ctx context.Context, jobs []NewJob) ([]int64, error) {
	keys := []string{r.k.Jobs(), r.k.JobData(), r.k.Owners(), r.k.Dead()}
	cmds, err := pipelined(ctx, r.c, []*redis.Script{enqueueScript}, func(pipe redis.Pipeliner) []*redis.Cmd {
		var cmds []*redis.Cmd
		for lo := 0; lo < len(jobs); lo += EnqueueBatch {
			hi := min(lo+EnqueueBatch, len(jobs))
			args := make([]any, 0, 3+6*(hi-lo))
			args = append(args, r.k.Wake(), hi-lo, r.k.Prefix())
			for _, j := range jobs[lo:hi] {
				args = append(args, j.ID, j.Envelope, j.AtMS, j.Delay.Milliseconds(), boolArg(j.Check), j.levelArg())
			}
			cmds = append(cmds, enqueueScript.EvalSha(ctx, pipe, keys, args...))
		}
		return cmds
	})
	if err != nil {
		return nil, err
	}
	dues := make([]int64, 0, len(jobs))
	for _, cmd := range cmds {
		d, err := cmd.Int64Slice()
		if err != nil {
			return nil, err
		}
		dues = append(dues, d...)
	}
	if len(dues) != len(jobs) {
		return nil, errors.New("enqueue: reply of the wrong length")
	}
	return dues, nil
}

// claimJobsScript pops up to limit due jobs, oldest first, and leases them
// to this claim: each job's owner is the claim id, and the claim has one
// lease (jobs:lease), renewed by the process and removed with its last
// ack, so a job costs one owner field and no lease entry of its own. It
// reads everything first and writes last, in variadic commands sent in
// chunks (callk), so no claim size can fail it after a write.
//
// Each owner field is an OwnerValue, "claim|due": the claim and the score
// the job was claimed at, so a redelivery knows the job's first due
// without a write per job here. A job put back before (release, retry,
// redelivery) has its first due in jobs:first, read only while that hash
// exists (it is empty in a burst of first deliveries).
//
// KEYS: jobs, jobs:data, jobs:attempt, jobs:lease, jobs:owner, jobs:first
// ARGV: limit, lease_ms, claim_id
// Bounds: limit is at most 2 * MaxBatch (8,192): the reply holds five
// values per job.
// Failure: a key of the wrong type fails the ZRANGE or an HMGET, before
// anything is written.
// Returns {next_due_or_-1, id1, due1, attempt1, envelope1, first1, id2,
// ...}; the attempt counts this delivery; first is the job's first due, or
// false when it has none kept (its due is its first).
var claimJobsScript = redis.NewScript(luaNow + `
local out = {-1}
local due = redis.call('ZRANGE', KEYS[1], '-inf', now, 'BYSCORE', 'LIMIT', 0, tonumber(ARGV[1]), 'WITHSCORES')
if #due > 0 then
  local ids = {}
  for i = 1, #due, 2 do ids[#ids + 1] = due[i] end
  local envs = callk('HMGET', KEYS[2], ids)
  local atts, firsts = {}, {}
  if redis.call('EXISTS', KEYS[3]) == 1 then atts = callk('HMGET', KEYS[3], ids) end
  if redis.call('EXISTS', KEYS[6]) == 1 then firsts = callk('HMGET', KEYS[6], ids) end
  want_type(KEYS[4], 'zset') -- so that the writes below cannot fail
  want_type(KEYS[5], 'hash')
  local owners = {}
  local claim = ARGV[3] .. '|'
  for k, id in ipairs(ids) do
    local env = envs[k]
    if env then
      owners[#owners + 1] = id
      owners[#owners + 1] = claim .. due[2 * k]
      out[#out + 1] = id
      out[#out + 1] = due[2 * k]
      out[#out + 1] = (tonumber(atts[k]) or 0) + 1
      out[#out + 1] = env
      out[#out + 1] = firsts[k] or false
    end
  end
  -- They are the first #ids by rank (the range starts at -inf): removing
  -- by rank spares a lookup per member.
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, #ids - 1)
  if #owners > 0 then
    callk('HSET', KEYS[5], owners)
    redis.call('ZADD', KEYS[4], now + tonumber(ARGV[2]), ARGV[3])
  end
end
local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if head[2] then out[1] = head[2] end
return out
`)

// ClaimedJob is one job a claim took: its id, due time (the queue score it
// was claimed at: when this attempt became due), the attempt this delivery
// is (from 1), its envelope as stored, and when it was first due (its
// enqueue's due time, kept across releases, retries and redeliveries;
// DueMS for a first delivery).
type ClaimedJob struct {
	ID         string
	DueMS      int64
	Attempt    int
	Envelope   string
	FirstDueMS int64
}

// MaxJobClaim bounds the jobs one ClaimJobs call takes.
const MaxJobClaim = 8192

// ClaimJobs takes up to limit due jobs (at most MaxJobClaim) for the claim
// claimID, under one lease of the given length. It returns the claimed
// jobs and the due time (unix ms) of the next job: -1 when the queue is
// empty.
func (r *RDB) ClaimJobs(ctx context.Context, claimID string, limit int, lease time.Duration) (jobs []ClaimedJob, nextMS int64, err error) {
	if limit > MaxJobClaim {
		return nil, 0, errors.New("claim jobs: limit " + strconv.Itoa(limit) + " is over " + strconv.Itoa(MaxJobClaim))
	}
	res, err := claimJobsScript.Run(ctx, r.c,
		[]string{r.k.Jobs(), r.k.JobData(), r.k.Attempts(), r.k.Leases(), r.k.Owners(), r.k.FirstDue()},
		limit, lease.Milliseconds(), claimID).Slice()
	if err != nil {
		return nil, 0, err
	}
	jobs, nextMS = parseJobClaim(res)
	return jobs, nextMS, nil
}

// parseJobClaim reads a job claim script's reply.
func parseJobClaim(res []any) (jobs []ClaimedJob, nextMS int64) {
	jobs = make([]ClaimedJob, 0, (len(res)-1)/5)
	for i := 1; i+4 < len(res); i += 5 {
		id, _ := res[i].(string)
		dueStr, _ := res[i+1].(string)
		attempt, _ := res[i+2].(int64)
		env, _ := res[i+3].(string)
		due, _ := strconv.ParseFloat(dueStr, 64)
		j := ClaimedJob{ID: id, DueMS: int64(due), Attempt: int(attempt), Envelope: env, FirstDueMS: int64(due)}
		if s, ok := res[i+4].(string); ok {
			if first, err := strconv.ParseInt(s, 10, 64); err == nil && first > 0 {
				j.FirstDueMS = first
			}
		}
		jobs = append(jobs, j)
	}
	nextMS = -1
	switch f := res[0].(type) {
	case string:
		v, _ := strconv.ParseFloat(f, 64)
		nextMS = max(int64(v), 1)
	case int64:
		if f >= 0 {
			nextMS = max(f, 1)
		}
	}
	return jobs, nextMS
}

// claimJobsOfScript is claimJobsScript for a process that runs only some
// job types (WithTasks): it claims, oldest first, only the due jobs whose
// envelope names one of them, and leaves the others in the queue, as they
// are, for the processes that run them. The type is read from the
// envelope's head as the client writes it ({"task":"name",...}), or else
// decoded with cjson; an envelope that names no type is claimed (its
// process dead-letters it, as claimJobsScript's would). A job whose
// envelope is gone is dropped from the queue, as claimJobsScript does.
// It looks at no more than scan due jobs, a page of limit at a time.
//
// Owner values and jobs:first are as in claimJobsScript.
//
// KEYS: jobs, jobs:data, jobs:attempt, jobs:lease, jobs:owner, jobs:first
// ARGV: limit, lease_ms, claim_id, scan, retry_ms, then the type names
// Bounds: limit is at most 2 * MaxBatch (8,192), scan at most
// MaxJobScan.
// Failure: a key of the wrong type fails before anything is written.
// Returns claimJobsScript's reply, whose next due time is: the head's
// after now when every due job was looked at; now + retry_ms when scan
// due jobs of other types were passed over and more are due.
var claimJobsOfScript = redis.NewScript(luaNow + `
local limit, scan = tonumber(ARGV[1]), tonumber(ARGV[4])
local run = {}
for i = 6, #ARGV do run[ARGV[i]] = true end
want_type(KEYS[4], 'zset') -- so that the writes below cannot fail
want_type(KEYS[5], 'hash')
local out = {-1}
local owners, drop = {}, {}
local hasatt = redis.call('EXISTS', KEYS[3]) == 1
local hasfirst = redis.call('EXISTS', KEYS[6]) == 1
local claim = ARGV[3] .. '|'
local offset, claimed, done = 0, 0, false
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
      if t == nil or run[t] then
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
      end
    end
  end
  offset = offset + n
  if n < page then done = true end
end
if #drop > 0 then callk('ZREM', KEYS[1], drop) end
if #owners > 0 then
  callk('HSET', KEYS[5], owners)
  redis.call('ZADD', KEYS[4], now + tonumber(ARGV[2]), ARGV[3])
end
if claimed < limit and not done then
  out[1] = now + tonumber(ARGV[5])
else
  local head = redis.call('ZRANGE', KEYS[1], '(' .. now, '+inf', 'BYSCORE', 'LIMIT', 0, 1, 'WITHSCORES')
  if head[2] then out[1] = head[2] end
end
return out
`)

// MaxJobScan bounds the due jobs one ClaimJobsOf call looks at.
const MaxJobScan = 4 * MaxJobClaim

// ClaimJobsOf is ClaimJobs for a process that runs only the job types
// named in types (not empty): it claims only jobs of those types (and
// jobs whose envelope names none), looking at no more than scan due jobs
// (at most MaxJobScan), and leaves the others in the queue untouched. Its
// nextMS is the first job due after now when every due job was looked at
// (so the others' due jobs do not make the caller claim again at once),
// and now + retry when scan due jobs were looked at and more are due.
func (r *RDB) ClaimJobsOf(ctx context.Context, claimID string, limit int, lease time.Duration, types []string, scan int, retry time.Duration) (jobs []ClaimedJob, nextMS int64, err error) {
	switch {
	case limit > MaxJobClaim:
		return nil, 0, errors.New("claim jobs: limit " + strconv.Itoa(limit) + " is over " + strconv.Itoa(MaxJobClaim))
	case scan < limit || scan > MaxJobScan:
		return nil, 0, errors.New("claim jobs: scan " + strconv.Itoa(scan) + " is outside [limit, " + strconv.Itoa(MaxJobScan) + "]")
	case len(types) == 0:
		return nil, 0, errors.New("claim jobs: no job types")
	}
	args := make([]any, 0, 5+len(types))
	args = append(args, limit, lease.Milliseconds(), claimID, scan, retry.Milliseconds())
	for _, t := range types {
		args = append(args, t)
	}
	res, err := claimJobsOfScript.Run(ctx, r.c,
		[]string{r.k.Jobs(), r.k.JobData(), r.k.Attempts(), r.k.Leases(), r.k.Owners(), r.k.FirstDue()}, args...).Slice()
	if err != nil {
		return nil, 0, err
	}
	jobs, nextMS = parseJobClaim(res)
	return jobs, nextMS, nil
}

// AckAction is how a delivery ends.
type AckAction string

// The ack actions.
const (
	AckOK      AckAction = "ok"      // done
	AckRetry   AckAction = "retry"   // failed: due again at DueMS, the attempt counted
	AckDead    AckAction = "dead"    // failed for good: moved to the dead letters
	AckRelease AckAction = "release" // not run: due again at DueMS, the attempt not counted
)

// JobAck is the end of one delivery: the job, its claim, the action, when
// it is due again (retry, release), its type (not needed for a release),
// its history record ("" for none), for a dead job the envelope kept in
// the dead letters, and when the job was first due (FirstDueMS: kept in
// jobs:first by a retry or release unless one is kept already; 0 keeps
// none). Unique says the job has a unique identity: its retry marks it in
// jobs:failed (Keys.Failed), so that it holds the identity no longer than
// its expiry.
type JobAck struct {
	ID           string
	Claim        string
	Action       AckAction
	DueMS        int64
	Type         string
	Record       string
	DeadEnvelope string
	FirstDueMS   int64
	Unique       bool
	// Level and Indexed: a retry or release of a job of a namespace with
	// priorities goes back in its level's index too (NewJob.Level).
	Level   int
	Indexed bool
}

// AckBatch is a batch of acks and the claims whose last job it ends (their
// leases go with it).
type AckBatch struct {
	Acks        []JobAck
	EndedClaims []string
	DeadLimit   int
	History     HistoryBound
}

// ackJobsScript ends a batch of deliveries, each only if its claim still
// owns it, which it does while the claim's lease exists (the master takes
// all the jobs of a claim, and its lease, at once): done (ok, or failed for good: moved to the dead letters), put
// back for a retry at due_ms (the failed attempt counted), or released (put
// back at due_ms, its attempt not counted). It removes the leases of the
// claims whose last job this batch ends, and keeps each type's totals and
// history. A batch costs a fixed number of variadic commands plus one per
// retry, release or dead job. A retry or release keeps the job's first due
// in jobs:first (HSETNX: a due kept before wins), which the job's end
// deletes; a plain ok ack writes nothing there. The retry of a job with a
// unique identity marks it in jobs:failed, which the job's end deletes
// too (see luaUniqueHeld).
//
// Last, it adds the batch's finished attempts (ok, retry, dead) to the
// current minute of stats:min (jobs, job_failed; see minute.go).
//
// KEYS: jobs, jobs:data, jobs:attempt, jobs:lease, jobs:owner, dead,
// dead:data, stats, jobs:first, then the history key of each type in the
// batch, then the slots keys, then stats:min, then jobs:failed (last)
// ARGV: dead_limit, history_limit, history_age_ms, n_plain, n, n_types,
// n_claims; then n_plain groups of id, type (1-based index into the types),
// claim (1-based index into the claims), of plain ok acks (no history
// record: most of a burst); then n groups of id, action
// (ok|retry|dead|release), due_ms, type (0 for a release), claim, record
// ("" when it would be trimmed anyway), dead_envelope, first_ms (the job's
// first due; 0: none to keep), unique (1: the job has a unique identity);
// then the name of each type; then each claim id; then the ids of the
// claims that end here (n_ended). ARGV[8]: n_ended. Last come the level
// of each of the n full acks ("" for none: a retry or release with a
// level goes back in its level's index too, see NewJob.Level), then the
// prefix. (A capped type's running slots are not the ack's: see "The
// limits of a claim" in limits.go.)
// Returns the ids of deliveries that were no longer ours.
var ackJobsScript = redis.NewScript(luaNow + luaHistory + luaMinute + `
want_type(KEYS[1], 'zset')
want_type(KEYS[2], 'hash')
want_type(KEYS[3], 'hash')
want_type(KEYS[4], 'zset')
want_type(KEYS[5], 'hash')
want_type(KEYS[6], 'zset')
want_type(KEYS[7], 'hash')
want_type(KEYS[9], 'hash')
local failed = KEYS[#KEYS]
want_type(failed, 'hash')
local np, n, ntypes, nclaims = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local nended = tonumber(ARGV[8])
local full = 8 + 3 * np
local base = full + 9 * n
local lvbase, prefix = #ARGV - n - 1, ARGV[#ARGV]
for i = 1, n do
  local lv = ARGV[lvbase + i]
  if lv ~= '' then want_type(prefix .. 'jobs:prio:' .. lv, 'zset') end
end
local ours = {}
for c = 1, nclaims do ours[c] = redis.call('ZSCORE', KEYS[4], ARGV[base + ntypes + c]) ~= false end
local lost, mine, done = {}, {}, {}
local runs, fails, recs = {}, {}, {}
local dead = false
for i = 0, np - 1 do
  local o = 8 + 3 * i
  local id = ARGV[o + 1]
  if ours[tonumber(ARGV[o + 3])] then
    local t = tonumber(ARGV[o + 2])
    mine[#mine + 1] = id
    done[#done + 1] = id
    runs[t] = (runs[t] or 0) + 1
  else
    lost[#lost + 1] = id
  end
end
for i = 0, n - 1 do
  local o = full + 9 * i
  local id, action, due, t, rec = ARGV[o + 1], ARGV[o + 2], ARGV[o + 3], tonumber(ARGV[o + 4]), ARGV[o + 6]
  if not ours[tonumber(ARGV[o + 5])] then
    lost[#lost + 1] = id
  else
    mine[#mine + 1] = id
    if (action == 'release' or action == 'retry') and ARGV[o + 8] ~= '0' then
      redis.call('HSETNX', KEYS[9], id, ARGV[o + 8])
    end
    local lv = ARGV[lvbase + i + 1]
    if lv ~= '' and (action == 'release' or action == 'retry') then
      redis.call('ZADD', prefix .. 'jobs:prio:' .. lv, due, id)
    end
    if action == 'release' then
      redis.call('ZADD', KEYS[1], due, id)
    else
      runs[t] = (runs[t] or 0) + 1
      if action ~= 'ok' then fails[t] = (fails[t] or 0) + 1 end
      if action == 'retry' then
        if type(redis.pcall('HINCRBY', KEYS[3], id, 1)) == 'table' then redis.call('HSET', KEYS[3], id, 1) end
        if ARGV[o + 9] == '1' then redis.call('HSET', failed, id, 1) end
        redis.call('ZADD', KEYS[1], due, id)
      else
        done[#done + 1] = id
        if action == 'dead' then
          redis.call('ZADD', KEYS[6], now, id)
          redis.call('HSET', KEYS[7], id, ARGV[o + 7])
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
if #mine > 0 then callk('HDEL', KEYS[5], mine) end
if #done > 0 then
  callk('HDEL', KEYS[2], done)
  if redis.call('EXISTS', KEYS[3]) == 1 then callk('HDEL', KEYS[3], done) end
  if redis.call('EXISTS', KEYS[9]) == 1 then callk('HDEL', KEYS[9], done) end
  if redis.call('EXISTS', failed) == 1 then callk('HDEL', failed, done) end
end
local ended = base + ntypes + nclaims
if nended > 0 then
  callk('ZREM', KEYS[4], ARGV, ended + 1, ended + nended)
end
if dead then
  local over = redis.call('ZCARD', KEYS[6]) - tonumber(ARGV[1])
  if over > 0 then
    local old = redis.call('ZRANGE', KEYS[6], 0, over - 1)
    redis.call('ZREMRANGEBYRANK', KEYS[6], 0, over - 1)
    callk('HDEL', KEYS[7], old)
  end
end
for t = 1, ntypes do
  local name = ARGV[base + t]
  if runs[t] then
    incr(KEYS[8], name .. ':runs', runs[t])
    if fails[t] then incr(KEYS[8], name .. ':failures', fails[t]) end
  end
  if recs[t] then push_history_many(KEYS[9 + t], recs[t], tonumber(ARGV[2]), tonumber(ARGV[3])) end
end
local njobs, nfailed = 0, 0
for t = 1, ntypes do
  njobs, nfailed = njobs + (runs[t] or 0), nfailed + (fails[t] or 0)
end
minute_add(KEYS[#KEYS - 1], {jobs = njobs, job_failed = nfailed})
return lost
`)

// AckJobs writes a batch of acks in one script call and returns the ids
// of deliveries that were no longer the claim's (its lease expired: the
// job was delivered again).
// Bounds: at most a batch queue's 512 acks; the variadic writes are
// chunked.
// Failure: every shared key it writes is type-checked first (want_type);
// per-type history keys of another type are skipped.
func (r *RDB) AckJobs(ctx context.Context, b AckBatch) (lost []string, err error) {
	keys := []string{r.k.Jobs(), r.k.JobData(), r.k.Attempts(), r.k.Leases(), r.k.Owners(),
		r.k.Dead(), r.k.DeadData(), r.k.Stats(), r.k.FirstDue()}
	typeIndex := map[string]int{}
	claimIndex := map[string]int{}
	var types, claims []any
	for _, a := range b.Acks {
		// A release counts no run and writes no record: it needs no type
		// (its index stays 0).
		if a.Action != AckRelease {
			if _, ok := typeIndex[a.Type]; !ok {
				types = append(types, a.Type)
				typeIndex[a.Type] = len(types)
				keys = append(keys, r.k.History(a.Type))
			}
		}
		if _, ok := claimIndex[a.Claim]; !ok {
			claims = append(claims, a.Claim)
			claimIndex[a.Claim] = len(claims)
		}
	}
	// Plain ok acks (no history record to write) go first, in three
	// arguments each instead of nine: a burst's common case.
	var plain, full, levels []any
	for _, a := range b.Acks {
		t := 0
		if a.Action != AckRelease {
			t = typeIndex[a.Type]
		}
		if a.Action == AckOK && a.Record == "" {
			plain = append(plain, a.ID, t, claimIndex[a.Claim])
			continue
		}
		full = append(full, a.ID, string(a.Action), a.DueMS, t, claimIndex[a.Claim], a.Record, a.DeadEnvelope, a.FirstDueMS, boolArg(a.Unique))
		level := ""
		if a.Indexed {
			level = strconv.Itoa(a.Level)
		}
		levels = append(levels, level)
	}
	args := make([]any, 0, 8+len(plain)+len(full)+len(types)+len(claims)+len(b.EndedClaims))
	args = append(args, b.DeadLimit, b.History.Records, b.History.Age.Milliseconds(),
		len(plain)/3, len(full)/9, len(types), len(claims), len(b.EndedClaims))
	args = append(args, plain...)
	args = append(args, full...)
	args = append(args, types...)
	args = append(args, claims...)
	for _, c := range b.EndedClaims {
		args = append(args, c)
	}
	args = append(args, levels...)
	args = append(args, r.k.Prefix())
	keys = append(keys, r.k.StatsMinute(), r.k.Failed())
	lost, err = ackJobsScript.Run(ctx, r.c, keys, args...).StringSlice()
	if errors.Is(err, redis.Nil) {
		err = nil
	}
	return lost, err
}

// renewJobsScript extends the leases of this process's claims that still
// have a lease (the master removes an expired one when it delivers the
// claim's jobs again).
//
// KEYS: jobs:lease
// ARGV: lease_ms, claim_id...
var renewJobsScript = redis.NewScript(luaNow + `
want_type(KEYS[1], 'zset')
local n = 0
for i = 2, #ARGV do
  n = n + redis.call('ZADD', KEYS[1], 'XX', 'CH', now + tonumber(ARGV[1]), ARGV[i])
end
return n
`)

// RenewJobLeases extends the leases of claims that still have one.
func (r *RDB) RenewJobLeases(ctx context.Context, lease time.Duration, claims []string) error {
	if len(claims) == 0 {
		return nil
	}
	args := make([]any, 0, len(claims)+1)
	args = append(args, lease.Milliseconds())
	for _, c := range claims {
		args = append(args, c)
	}
	return renewJobsScript.Run(ctx, r.c, []string{r.k.Leases()}, args...).Err()
}

// redeliverScript puts the jobs of claims whose lease expired (their
// process died or stalled) back in the queue, due now, the lost attempt
// counted: at-least-once delivery. Each job's owner field carries the due
// it was claimed at (OwnerValue), kept in jobs:first as its first due
// unless one is kept already (HSETNX). The lost attempt did not fail: a
// jobs:failed field (a failure before it) is deleted, so a unique job put
// back here holds its identity until it ends (luaUniqueHeld). It reads
// every owner field, so its cost is that of the jobs in flight, once per
// expired claim batch.
//
// KEYS: jobs, jobs:lease, jobs:owner, jobs:attempt, jobs:first, jobs:failed
// ARGV: limit (claims), not_after_ms (optional: it does nothing when run
// later)
// Returns {id, claim, id, claim, ...} of the jobs put back.
var redeliverScript = redis.NewScript(luaNow + luaOwner + `
local out = {}
if ARGV[2] and now > tonumber(ARGV[2]) then return out end -- run late (a stall): leases look expired
want_type(KEYS[1], 'zset')
want_type(KEYS[4], 'hash')
want_type(KEYS[5], 'hash')
want_type(KEYS[6], 'hash')
local claims = redis.call('ZRANGE', KEYS[2], '-inf', now, 'BYSCORE', 'LIMIT', 0, tonumber(ARGV[1]))
if #claims == 0 then return out end
local hasfailed = redis.call('EXISTS', KEYS[6]) == 1
local expired = {}
for _, c in ipairs(claims) do expired[c] = true end
local owners = redis.call('HGETALL', KEYS[3])
for i = 1, #owners, 2 do
  local id = owners[i]
  local claim, due = owner_split(owners[i + 1])
  if expired[claim] then
    redis.call('HDEL', KEYS[3], id)
    redis.call('ZADD', KEYS[1], now, id)
    if type(redis.pcall('HINCRBY', KEYS[4], id, 1)) == 'table' then redis.call('HSET', KEYS[4], id, 1) end
    if due then redis.call('HSETNX', KEYS[5], id, due) end
    if hasfailed then redis.call('HDEL', KEYS[6], id) end
    out[#out + 1] = id
    out[#out + 1] = claim
  end
end
callk('ZREM', KEYS[2], claims)
return out
`)

// Redelivered is a job put back in the queue: its claim's lease expired.
type Redelivered struct {
	ID, Claim string
}

// Redeliver puts back the jobs of up to limit claims whose lease expired;
// run later than notAfterMS it does nothing.
func (r *RDB) Redeliver(ctx context.Context, limit int, notAfterMS int64) ([]Redelivered, error) {
	res, err := redeliverScript.Run(ctx, r.c, []string{r.k.Jobs(), r.k.Leases(), r.k.Owners(), r.k.Attempts(), r.k.FirstDue(), r.k.Failed()},
		limit, notAfterMS).StringSlice()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	out := make([]Redelivered, 0, len(res)/2)
	for i := 0; i+1 < len(res); i += 2 {
		out = append(out, Redelivered{ID: res[i], Claim: res[i+1]})
	}
	return out, nil
}

// cancelScript removes a pending job, and frees the unique identity it
// holds (when given one: its key still names the job).
//
// KEYS: jobs, jobs:data, jobs:attempt, jobs:owner, jobs:first, jobs:failed,
// and for a job with a unique identity: unique, unique:<identity>
// ARGV: id, and for a job with a unique identity: the identity
// Returns 1 when cancelled, 2 when it is running, 0 when there is no such
// pending job.
var cancelScript = redis.NewScript(luaLib + `
want_type(KEYS[1], 'zset')
want_type(KEYS[2], 'hash')
want_type(KEYS[3], 'hash')
want_type(KEYS[5], 'hash')
want_type(KEYS[6], 'hash')
if KEYS[8] then
  want_type(KEYS[7], 'zset')
  want_type(KEYS[8], 'string')
end
if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then
  redis.call('HDEL', KEYS[2], ARGV[1])
  redis.call('HDEL', KEYS[3], ARGV[1])
  redis.call('HDEL', KEYS[5], ARGV[1])
  redis.call('HDEL', KEYS[6], ARGV[1])
  if KEYS[8] then
    local v = redis.call('GET', KEYS[8])
    if v and string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. '|' then
      redis.call('DEL', KEYS[8])
      redis.call('ZREM', KEYS[7], ARGV[2])
    end
  end
  return 1
end
if redis.call('HEXISTS', KEYS[4], ARGV[1]) == 1 then return 2 end
return 0
`)

// CancelResult is what Cancel found.
type CancelResult int

// The results of Cancel.
const (
	CancelNotFound CancelResult = 0 // no such pending job
	Cancelled      CancelResult = 1 // removed: it never runs
	CancelRunning  CancelResult = 2 // it is running: not cancelled
)

// Cancel removes the pending job id, and frees the unique identity it
// holds. It reads the job's envelope first (for its identity), then runs
// cancelScript.
func (r *RDB) Cancel(ctx context.Context, id string) (CancelResult, error) {
	keys := []string{r.k.Jobs(), r.k.JobData(), r.k.Attempts(), r.k.Owners(), r.k.FirstDue(), r.k.Failed()}
	args := []any{id}
	env, err := r.c.HGet(ctx, r.k.JobData(), id).Result()
	if err != nil && !errors.Is(err, redis.Nil) && !IsReplyError(err) {
		return 0, err
	}
	if strings.Contains(env, `"unique":"`) {
		if e, err := DecodeEnvelope(env); err == nil && e.Unique != "" {
			keys = append(keys, r.k.UniqueIndex(), r.k.UniqueKey(e.Unique))
			args = append(args, e.Unique)
		}
	}
	n, err := cancelScript.Run(ctx, r.c, keys, args...).Int()
	return CancelResult(n), err
}

// retryDeadScript moves a dead job back to the queue, due now, with its
// attempts reset. A job with a unique identity takes it again when no
// other job holds it (luaUniqueHeld): the identity key is set to name it,
// with the expiry it had if it still named it, else now (the ttl counts
// from the enqueue, which a retry is not: the job holds it while pending
// or running, and frees it when it ends), and it gets the envelope env.
// When another job holds the identity the retried job runs without one:
// it gets env_alone (the envelope without the identity), so it is nobody's
// duplicate and Cancel frees nothing of the holder's.
//
// KEYS: dead, dead:data, jobs, jobs:data, jobs:attempt, and for a job with
// a unique identity: jobs:owner, jobs:failed, unique, unique:<identity>
// ARGV: id, env (the original envelope, without the error), and for a job
// with a unique identity: the identity, env_alone
// Failure: every key it writes or reads is type-checked before the first
// write.
// Returns 0 when no dead job has the id, 1 when it was retried (with its
// identity, if it has one), 2 when it was retried without its identity.
var retryDeadScript = redis.NewScript(luaNow + luaUniqueHeld + `
want_type(KEYS[1], 'zset')
want_type(KEYS[2], 'hash')
want_type(KEYS[3], 'zset')
want_type(KEYS[4], 'hash')
want_type(KEYS[5], 'hash')
local id, env, code = ARGV[1], ARGV[2], 1
if KEYS[9] then
  want_type(KEYS[6], 'hash')
  want_type(KEYS[7], 'hash')
  want_type(KEYS[8], 'zset')
  want_type(KEYS[9], 'string')
end
if not redis.call('ZSCORE', KEYS[1], id) then return 0 end
if KEYS[9] then
  local hid, hexp = unique_holder(KEYS[9])
  if hid and hid ~= id and unique_held(KEYS[3], KEYS[6], KEYS[7], hid, hexp) then
    env, code = ARGV[4], 2
  else
    local exp = now
    if hid == id then exp = math.max(hexp, now) end
    redis.call('SET', KEYS[9], id .. '|' .. exp)
    redis.call('ZADD', KEYS[8], exp, ARGV[3])
  end
end
redis.call('ZREM', KEYS[1], id)
redis.call('HDEL', KEYS[2], id)
redis.call('HSET', KEYS[4], id, env)
redis.call('HDEL', KEYS[5], id)
redis.call('ZADD', KEYS[3], now, id)
return code
`)

// The results of RetryDead.
const (
	RetryDeadNotFound      = 0 // no dead job has the id
	RetriedDead            = 1 // queued again (holding its unique identity, if it has one)
	RetriedWithoutIdentity = 2 // queued again without its unique identity: another job holds it
)

// RetryDead moves the dead job id back to the queue, due now, with the
// envelope env. A job with a unique identity (identity not "") takes it
// again unless another job holds it; then it is queued with envAlone, its
// envelope without the identity (see retryDeadScript). It returns
// RetryDeadNotFound, RetriedDead or RetriedWithoutIdentity.
func (r *RDB) RetryDead(ctx context.Context, id, env, identity, envAlone string) (int, error) {
	keys := []string{r.k.Dead(), r.k.DeadData(), r.k.Jobs(), r.k.JobData(), r.k.Attempts()}
	args := []any{id, env}
	if identity != "" {
		keys = append(keys, r.k.Owners(), r.k.Failed(), r.k.UniqueIndex(), r.k.UniqueKey(identity))
		args = append(args, identity, envAlone)
	}
	return retryDeadScript.Run(ctx, r.c, keys, args...).Int()
}
