package rdb

// The invariant sweep's part of the data model: its scans, its scripts and
// its counters (the sweep hash). The runtime's maintainer drives it a page
// at a time (runtime/sweep.go); each method here reads one page of one
// collection and hands its candidates to a script that checks every one of
// them again, atomically, and repairs only what is still orphaned, so a
// page read while schedulers claim and finish can never make the sweep undo
// a transition in progress: every write path of the engine (enqueue, claim,
// ack, redeliver, cancel, dead-letter retry, register, claim fires, finish
// runs, abandon) changes the keys the sweep checks in one script, so the
// states between its commands are never seen.
//
// Each method returns the next cursor of its scan (0 when the scan is
// done) and the ids it repaired; on an error it returns the cursor it was
// given, so the caller reads the page again. count is the COUNT of the
// scan: a hint to Redis (a small hash or set comes whole), and so about how
// many candidates one script call checks.

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The kinds of repair of the invariant sweep: the fields of the sweep
// hash.
const (
	RepairJob     = "job"     // job records in no state, queued again (SweepJobs)
	RepairClaim   = "claim"   // claim leases that own no job, removed (SweepClaims)
	RepairLease   = "lease"   // an older release's run leases (run:<id>) of gone processes with no running entry (SweepLeases)
	RepairRunning = "running" // an older release's running entries without a lease (reap's, CountRepairs; SweepRunning)
	RepairLock    = "lock"    // task locks held for no run by a gone process, or by none (SweepLocks)
	RepairQueue   = "queue"   // queue members with no task hash, removed (SweepQueue)
	RepairDue     = "due"     // first-due fields (jobs:first) of jobs that no longer exist, removed (SweepFirstDue)
	RepairIndex   = "index"   // task hashes in neither the queue nor the unqueued set, put in the unqueued set (SweepTaskIndex)
)

// RepairKinds returns the kinds of repair, in the order the operator's
// overview prints them.
func RepairKinds() []string {
	return []string{RepairJob, RepairClaim, RepairLease, RepairRunning, RepairLock, RepairQueue, RepairDue, RepairIndex}
}

// ParseRepairCounts reads the sweep hash (HGETALL of Keys.Sweep): every
// kind, 0 when never counted, and any other field that holds a count.
func ParseRepairCounts(h map[string]string) map[string]int64 {
	out := make(map[string]int64, len(h)+6)
	for _, k := range RepairKinds() {
		out[k] = 0
	}
	for k, v := range h {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			out[k] = n
		}
	}
	return out
}

// CountRepairs adds n to the counter of kind in the sweep hash, for a
// repair another duty made (reap's abandoned runs whose lease was gone).
// It is written after the repair, not with it: a counter, it may miss one
// if the process dies between the two.
// Failure: one HINCRBY; a sweep key of the wrong type fails it unwritten.
func (r *RDB) CountRepairs(ctx context.Context, kind string, n int) error {
	return r.c.HIncrBy(ctx, r.k.Sweep(), kind, int64(n)).Err()
}

// pageResult is what a page method returns: the next cursor and the ids
// repaired, or on an error the cursor it was given, to read the page again.
func pageResult(cursor, next uint64, ids []string, err error) (uint64, []string, error) {
	if err != nil {
		return cursor, nil, err
	}
	return next, ids, nil
}

// pairsAt returns every second element of a ZSCAN or HSCAN page from i:
// its members or fields (0), or its scores or values (1).
func pairsAt(kv []string, i int) []string {
	out := make([]string, 0, len(kv)/2)
	for ; i < len(kv); i += 2 {
		out = append(out, kv[i])
	}
	return out
}

// outcomeAbandoned is the outcome of a lost run's history record.
const outcomeAbandoned = "abandoned"

// sweepRemoveScript removes the members of a set or sorted set (the queue,
// an older release's running set) whose companion key (the task hash of a
// queue member, the lease key of a running entry) does not exist. The
// queue: a task hash and its queue entry are created together (register,
// SetTask) and deleted together (a once task's finish, prune, RemoveTask),
// so a member without a hash is never a state in progress. Running: only
// entries that are no run id are passed (SweepRunning), which reap skips
// as it cannot tell their task; an older release's claim script added run
// ids only, with their lease key.
//
// KEYS: the set or sorted set, sweep, then the companion key of each member
// ARGV: kind (the counter), "zset" or "set", then the members
// Returns the members removed.
var sweepRemoveScript = redis.NewScript(luaNow + luaHistory + `
local zset = ARGV[2] == 'zset'
want_type(KEYS[1], zset and 'zset' or 'set')
want_type(KEYS[2], 'hash')
local gone = {}
for i = 3, #ARGV do
  local present
  if zset then present = redis.call('ZSCORE', KEYS[1], ARGV[i]) else present = redis.call('SISMEMBER', KEYS[1], ARGV[i]) == 1 end
  if present and redis.call('EXISTS', KEYS[i]) == 0 then gone[#gone + 1] = ARGV[i] end
end
if #gone > 0 then
  callk(zset and 'ZREM' or 'SREM', KEYS[1], gone)
  incr(KEYS[2], ARGV[1], #gone)
end
return gone
`)

// sweepRemove has sweepRemoveScript remove the members of collection (of
// Redis type typ) whose key companion(m) does not exist.
func (r *RDB) sweepRemove(ctx context.Context, kind, typ, collection string, members []string, companion func(string) string) ([]string, error) {
	if len(members) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, 2+len(members))
	keys = append(keys, collection, r.k.Sweep())
	args := make([]any, 0, 2+len(members))
	args = append(args, kind, typ)
	for _, m := range members {
		keys = append(keys, companion(m))
		args = append(args, m)
	}
	return sweepRemoveScript.Run(ctx, r.c, keys, args...).StringSlice()
}

// SweepQueue checks one ZSCAN page of the queue and removes the members
// that have no task hash, counted as RepairQueue.
// Bounds: one page (about count members), two reads each.
// Failure: a queue or sweep hash of the wrong type fails the scan or the
// script before it writes (want_type); a task key of any type is present.
func (r *RDB) SweepQueue(ctx context.Context, cursor uint64, count int64) (uint64, []string, error) {
	kv, next, err := r.c.ZScan(ctx, r.k.Queue(), cursor, "", count).Result()
	if err != nil {
		return cursor, nil, err
	}
	removed, err := r.sweepRemove(ctx, RepairQueue, "zset", r.k.Queue(), pairsAt(kv, 0), r.k.Task)
	return pageResult(cursor, next, removed, err)
}

// SweepRunning checks one SSCAN page of running, an older release's set of
// its runs in progress (this release's are fields of runs, each with its
// lease: a run without its lease is no state they can be in), and removes
// the entries that are no run id (ParseRunID fails) and have no lease key,
// counted as RepairRunning; the other entries are reap's, which records a
// run whose lease key is gone abandoned and counts it (CountRepairs).
// Bounds: one page; two reads per entry that is no run id.
// Failure: a running set or sweep hash of the wrong type fails the scan or
// the script before it writes (want_type).
func (r *RDB) SweepRunning(ctx context.Context, cursor uint64, count int64) (uint64, []string, error) {
	ids, next, err := r.c.SScan(ctx, r.k.Running(), cursor, "", count).Result()
	if err != nil {
		return cursor, nil, err
	}
	var junk []string
	for _, id := range ids {
		if _, _, ok := ParseRunID(id); !ok {
			junk = append(junk, id)
		}
	}
	removed, err := r.sweepRemove(ctx, RepairRunning, "set", r.k.Running(), junk, r.k.Run)
	return pageResult(cursor, next, removed, err)
}

// sweepJobsScript queues again, due now, the job records that are in no
// state: not pending, not dead, and not owned by a claim that holds a
// lease. Every write path moves a job between these states in one script
// (enqueue: data and queue; claim: queue to owner and lease; ack: owner to
// queue or to nothing or to dead; redeliver: owner to queue; cancel: queue
// and data; retry of a dead job: dead to data and queue), and a job that a
// process holds in memory, waiting for a worker, has its owner; so a
// record in no state is never a move in progress. An owner whose claim has
// no lease is stale (the claim's acks are refused and redelivery only
// looks at leases), and is removed with the re-queue, the due it was
// claimed at kept as the job's first due (as a redelivery keeps it), and
// its jobs:failed field deleted (as a redelivery deletes it: the lost
// attempt did not fail). Attempts are unchanged.
//
// KEYS: jobs, jobs:data, jobs:owner, jobs:lease, dead, sweep, jobs:first,
// jobs:failed
// ARGV: wake_channel, then the job ids (one HSCAN page of jobs:data)
// Returns the ids queued again.
var sweepJobsScript = redis.NewScript(luaNow + luaHistory + luaOwner + `
want_type(KEYS[1], 'zset')
want_type(KEYS[3], 'hash')
want_type(KEYS[6], 'hash')
want_type(KEYS[7], 'hash')
want_type(KEYS[8], 'hash')
local lost, stale, firsts = {}, {}, {}
for i = 2, #ARGV do
  local id = ARGV[i]
  if redis.call('HEXISTS', KEYS[2], id) == 1 and not redis.call('ZSCORE', KEYS[1], id)
      and not redis.call('ZSCORE', KEYS[5], id) then
    local owner = redis.call('HGET', KEYS[3], id)
    if not owner then
      lost[#lost + 1] = id
    else
      local claim, due = owner_split(owner)
      if not redis.call('ZSCORE', KEYS[4], claim) then
        lost[#lost + 1] = id
        stale[#stale + 1] = id
        if due then
          firsts[#firsts + 1] = id
          firsts[#firsts + 1] = due
        end
      end
    end
  end
end
if #stale > 0 then
  callk('HDEL', KEYS[3], stale)
  if redis.call('EXISTS', KEYS[8]) == 1 then callk('HDEL', KEYS[8], stale) end
end
for i = 1, #firsts, 2 do redis.call('HSETNX', KEYS[7], firsts[i], firsts[i + 1]) end
if #lost > 0 then
  local queue = {}
  for _, id in ipairs(lost) do
    queue[#queue + 1] = now
    queue[#queue + 1] = id
  end
  callk('ZADD', KEYS[1], queue)
  incr(KEYS[6], '` + RepairJob + `', #lost)
  redis.call('PUBLISH', ARGV[1], 'job')
end
return lost
`)

// SweepJobs checks one HSCAN page of jobs:data and queues again, due now,
// the jobs in no state (see sweepJobsScript), counted as RepairJob.
// Bounds: one page; about four reads per job, then one HDEL, one ZADD
// (chunked), one counter and one PUBLISH.
// Failure: the queue, owners and sweep hash are type-checked first
// (want_type); the data hash, leases and dead set fail their first read;
// all before anything is written.
func (r *RDB) SweepJobs(ctx context.Context, cursor uint64, count int64) (uint64, []string, error) {
	kv, next, err := r.c.HScan(ctx, r.k.JobData(), cursor, "", count).Result()
	if err != nil {
		return cursor, nil, err
	}
	if len(kv) == 0 {
		return next, nil, nil
	}
	args := make([]any, 0, 1+len(kv)/2)
	args = append(args, r.k.Wake())
	for _, id := range pairsAt(kv, 0) {
		args = append(args, id)
	}
	lost, err := sweepJobsScript.Run(ctx, r.c,
		[]string{r.k.Jobs(), r.k.JobData(), r.k.Owners(), r.k.Leases(), r.k.Dead(), r.k.Sweep(), r.k.FirstDue(), r.k.Failed()}, args...).StringSlice()
	return pageResult(cursor, next, lost, err)
}

// ScanLeasedClaims reads one ZSCAN page of jobs:lease: claims that hold a
// lease, the candidates of SweepClaims. It writes nothing.
func (r *RDB) ScanLeasedClaims(ctx context.Context, cursor uint64, count int64) (uint64, []string, error) {
	kv, next, err := r.c.ZScan(ctx, r.k.Leases(), cursor, "", count).Result()
	if err != nil {
		return cursor, nil, err
	}
	return next, pairsAt(kv, 0), nil
}

// ScanOwnerClaims reads one HSCAN page of jobs:owner and returns the claims
// its fields name: claims that own a job. It writes nothing.
func (r *RDB) ScanOwnerClaims(ctx context.Context, cursor uint64, count int64) (uint64, []string, error) {
	kv, next, err := r.c.HScan(ctx, r.k.Owners(), cursor, "", count).Result()
	if err != nil {
		return cursor, nil, err
	}
	claims := pairsAt(kv, 1)
	for i, v := range claims {
		claims[i], _ = ParseOwner(v)
	}
	return next, claims, nil
}

// sweepClaimScript removes the leases of claims that own no job.
//
// Whether a claim owns a job is not checked here: it would take all of
// jobs:owner (every job in flight) in one call. It need not be, because it
// cannot change back: the owner fields naming a claim are written only by
// the claim script that creates the claim's lease, and later only removed
// (ack, redeliver, the sweep's job step). So the caller reads the leases
// first (ScanLeasedClaims), then HSCANs all of jobs:owner (ScanOwnerClaims:
// a full scan returns every field present for its whole length); a claim
// it read whose id no owner field showed owns no job at the end of the
// scan, and never will again. This script only removes those that still
// have a lease.
//
// KEYS: jobs:lease, sweep
// ARGV: claim ids
// Returns the claims removed.
var sweepClaimScript = redis.NewScript(luaNow + luaHistory + `
want_type(KEYS[1], 'zset')
want_type(KEYS[2], 'hash')
local gone = {}
for i = 1, #ARGV do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) then gone[#gone + 1] = ARGV[i] end
end
if #gone > 0 then
  callk('ZREM', KEYS[1], gone)
  incr(KEYS[2], '` + RepairClaim + `', #gone)
end
return gone
`)

// sweepClaimChunk is how many claims one sweepClaimScript call checks.
const sweepClaimChunk = 1000

// SweepClaims removes the leases of claims that a full ScanOwnerClaims
// pass, begun after ScanLeasedClaims read them, showed in no owner field
// (see sweepClaimScript), counted as RepairClaim. It returns the claims
// removed, also those of the calls before an error.
// Bounds: a call per sweepClaimChunk claims; one ZSCORE each, then one
// ZREM and one counter.
// Failure: each call type-checks the leases and the sweep hash first
// (want_type), so a failed call wrote nothing.
func (r *RDB) SweepClaims(ctx context.Context, claims []string) ([]string, error) {
	var removed []string
	for len(claims) > 0 {
		n := min(len(claims), sweepClaimChunk)
		args := make([]any, n)
		for i, c := range claims[:n] {
			args[i] = c
		}
		gone, err := sweepClaimScript.Run(ctx, r.c, []string{r.k.Leases(), r.k.Sweep()}, args...).StringSlice()
		removed = append(removed, gone...)
		if err != nil {
			return removed, err
		}
		claims = claims[n:]
	}
	return removed, nil
}

// LostRuns is how SweepLeases and SweepLocks judge and record a lost run:
// a process is gone when it has no heartbeat younger than ProcessTTL; a
// lost run's history record ends at EndMS (the caller's clock) within
// History; a script run later than NotAfterMS (server time) does nothing,
// because a stall makes every heartbeat look old.
type LostRuns struct {
	ProcessTTL time.Duration
	History    HistoryBound
	EndMS      int64
	NotAfterMS int64
}

// luaSweepLost is the prelude of the lease and lock scripts: it defines
// gone(process, ttl), true when process has no heartbeat younger than ttl
// ms (or is ""); recorded(task, task_is_hash, run), whether the task's
// abandoned_run already names the run (reap or a claim's takeover recorded
// it); lost(task, task_is_hash, hist, record, reason, run), which
// records a lost run as abandonScript does: the task's last result and
// counters (when its key is a hash) and the history record; and
// apply(todo, kind), the writes of both scripts, made after all their
// reads. It also begins both: run later than not_after_ms (ARGV[4]) a
// script does nothing, as a stall makes every heartbeat look old; the
// sweep hash (KEYS[3]) is type-checked; ttl (ARGV[1]), todo (the repairs
// decided) and groups (of four keys, from KEYS[5]) are set. KEYS[1] is an
// older release's running set, KEYS[4] the runs hash.
const luaSweepLost = `
if now > tonumber(ARGV[4]) then return {} end
want_type(KEYS[3], 'hash')
local ttl, todo, groups = tonumber(ARGV[1]), {}, (#KEYS - 4) / 4
local function gone(process, ttl)
  if process == '' then return true end
  local beat = tonumber(redis.call('ZSCORE', KEYS[2], process))
  return not (beat and beat >= now - ttl)
end
-- recorded(task, is_hash, run) reports whether run was recorded abandoned
-- already (by reap, or by a claim that took its lock over): the task's
-- abandoned_run names it.
local function recorded(task, is_hash, run)
  return is_hash and redis.call('HGET', task, 'abandoned_run') == run
end
local function lost(task, is_hash, hist, record, reason, run)
  if is_hash then
    redis.call('HSET', task, 'last_result', '` + outcomeAbandoned + `', 'last_error', reason, 'abandoned_run', run)
    incr(task, 'runs', 1)
    incr(task, 'failures', 1)
  end
  push_history(hist, record, tonumber(ARGV[2]), tonumber(ARGV[3]))
end
-- apply(todo, kind) makes the writes of the repairs decided: for each, it
-- deletes its first key (KEYS[5 + 4*i]: an older release's lease key, or a
-- lock), its second too when also is set (the lease's lock), and records
-- the lost run when there is a record; then counts them. Neither script
-- repairs a run in runs: its field holds its lease, whose process reap
-- watches.
local function apply(todo, kind)
  local out = {}
  for _, t in ipairs(todo) do
    local i = t.i
    redis.call('DEL', KEYS[5 + 4*i])
    if t.also then redis.call('DEL', KEYS[6 + 4*i]) end
    if t.rec then lost(KEYS[7 + 4*i], t.hash, KEYS[8 + 4*i], t.rec, t.reason, t.run) end
    out[#out + 1] = t.id
  end
  if #out > 0 then incr(KEYS[3], kind, #out) end
  return out
end
`

// sweepLeaseScript deletes an older release's run leases (run:<id> keys:
// this release keeps a run's lease in its field of runs, which is its
// entry too) that have no running entry and whose process is gone, with
// the run's lock when the run holds it, and records each run abandoned.
// That release's claim script wrote a lease with its running entry, and
// its finish and abandon remove both (as this release's abandon does), so
// a lease without its entry is never a claim or a finish in progress; the
// entry is gone by a fault (a running set moved aside, a foreign write).
// Then reap never sees the run: while its process lives, the run's finish
// deletes the lease and records it; once the process has no heartbeat for
// a process TTL, no finish will come, and the run is recorded here.
//
// KEYS: running, processes, sweep, runs, then per lease: run, lock, task,
// history
// ARGV: process_ttl_ms, history_limit, history_age_ms, not_after_ms, then
// per lease: run_id, lease_seen (it is left alone unless it still holds
// exactly that), process ("" for an unreadable lease), lock_value,
// record_json, error text
// Returns the run ids recorded.
var sweepLeaseScript = redis.NewScript(luaNow + luaHistory + luaSweepLost + `
for i = 0, groups - 1 do
  local run, lock, task = KEYS[5 + 4*i], KEYS[6 + 4*i], KEYS[7 + 4*i]
  local o = 4 + 6*i
  local id, seen, process, lockv = ARGV[o + 1], ARGV[o + 2], ARGV[o + 3], ARGV[o + 4]
  if redis.pcall('GET', run) == seen and redis.call('SISMEMBER', KEYS[1], id) == 0 and gone(process, ttl) then
    local hash = redis.call('TYPE', task).ok == 'hash'
    todo[#todo + 1] = {i = i, id = id, rec = not recorded(task, hash, id) and ARGV[o + 5] or nil, reason = ARGV[o + 6],
      also = redis.pcall('GET', lock) == lockv, hash = hash, run = id}
  end
end
return apply(todo, '` + RepairLease + `')
`)

// scanner returns the client whose SCAN sees the namespace's keys: on
// Redis Cluster the master of the namespace's slot (SCAN is per node),
// else the client itself.
func (r *RDB) scanner(ctx context.Context) (redis.Cmdable, error) {
	if cc, ok := r.c.(*redis.ClusterClient); ok {
		return cc.MasterForKey(ctx, r.k.Runs())
	}
	return r.c, nil
}

// scanKeys reads one SCAN page (COUNT count, from cursor) of the keys
// that start with prefix, on the client scanner returns, and returns
// them, the part of each after prefix, and the next cursor.
func (r *RDB) scanKeys(ctx context.Context, cursor uint64, prefix string, count int64) (keys, names []string, next uint64, err error) {
	node, err := r.scanner(ctx)
	if err != nil {
		return nil, nil, cursor, err
	}
	keys, next, err = node.Scan(ctx, cursor, globEscape(prefix)+"*", count).Result()
	if err != nil {
		return nil, nil, cursor, err
	}
	names = make([]string, len(keys))
	for i, k := range keys {
		names[i] = strings.TrimPrefix(k, prefix)
	}
	return keys, names, next, nil
}

// globEscape escapes the characters SCAN MATCH treats as a pattern.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// getAll reads keys with one GET each, in one pipeline. A key that is
// absent or of another type has no entry in the map.
func (r *RDB) getAll(ctx context.Context, keys []string) (map[string]string, error) {
	cmds, err := pipelined(ctx, r.c, nil, func(pipe redis.Pipeliner) []*redis.StringCmd {
		cmds := make([]*redis.StringCmd, len(keys))
		for i, k := range keys {
			cmds[i] = pipe.Get(ctx, k)
		}
		return cmds
	})
	if err != nil && err != redis.Nil && !IsReplyError(err) {
		return nil, err
	}
	out := make(map[string]string, len(keys))
	for i, k := range keys {
		if v, err := cmds[i].Result(); err == nil {
			out[k] = v
		}
	}
	return out, nil
}

// lostArgs are the KEYS and ARGV the lease and lock scripts share.
func (r *RDB) lostArgs(p LostRuns) ([]string, []any) {
	return []string{r.k.Running(), r.k.Processes(), r.k.Sweep(), r.k.Runs()},
		[]any{p.ProcessTTL.Milliseconds(), p.History.Records, p.History.Age.Milliseconds(), p.NotAfterMS}
}

// lostRecord is the history record of a run lost at p.EndMS.
func lostRecord(task string, fireMS, startMS int64, process, reason string, p LostRuns) string {
	return Record{Task: task, Fire: fireMS, Start: startMS, End: p.EndMS, Outcome: outcomeAbandoned,
		Error: reason, Process: process, Attempt: 1}.Encode()
}

// SweepLeases checks one SCAN page of an older release's run leases
// (run:<id> keys; no index lists them; on Redis Cluster the scan goes to
// the node of the namespace's slot) and deletes those with no running
// entry whose process is gone (see sweepLeaseScript), counted as
// RepairLease, each run recorded abandoned. This release writes no such
// key: it finds them only in a namespace an older release used.
// Bounds: one page; about six reads per lease, every write after all of
// them.
// Failure: the sweep hash is type-checked first (want_type), a runs hash,
// running set or processes of the wrong type fails a read; a lease, lock, task or
// history of another type is left alone (or its write skipped).
func (r *RDB) SweepLeases(ctx context.Context, cursor uint64, count int64, p LostRuns) (uint64, []string, error) {
	found, ids, next, err := r.scanKeys(ctx, cursor, r.k.Run(""), count)
	if err != nil {
		return cursor, nil, err
	}
	if len(found) == 0 {
		return next, nil, nil
	}
	leases, err := r.getAll(ctx, found)
	if err != nil {
		return cursor, nil, err
	}
	keys, args := r.lostArgs(p)
	for i, key := range found {
		id := ids[i]
		task, fire, ok := ParseRunID(id)
		lease, got := leases[key]
		if !ok || !got {
			continue // no run id; or gone, or not a string (not a lease: left alone)
		}
		l, err := ParseLease(lease)
		if err != nil {
			l = Lease{} // not this engine's: no process renews it
		}
		start := l.Start
		if start == 0 {
			start = fire
		}
		reason := "invariant sweep: run lease without a running entry, its process " + l.Process + " gone"
		keys = append(keys, r.k.Run(id), r.k.Lock(task), r.k.Task(task), r.k.History(task))
		args = append(args, id, lease, l.Process, LockValue(l.Process, fire), lostRecord(task, fire, start, l.Process, reason, p), reason)
	}
	if len(keys) == 4 {
		return next, nil, nil
	}
	repaired, err := sweepLeaseScript.Run(ctx, r.c, keys, args...).StringSlice()
	return pageResult(cursor, next, repaired, err)
}

// sweepLockScript deletes task locks held for no run: the value
// "process|fire" names a run id "task@fire" that has no field in runs, is
// not in an older release's running set and has no lease key of that
// release (run:<id>), and the process has no heartbeat for a process TTL;
// or the value names no run (no scheduler wrote it). A named run is
// recorded abandoned. The claim script takes a lock with its run's field,
// and finish and abandon release it with it, so a lock without its run is
// no claim or finish in progress. A lock a scheduler wrote again after
// Redis lost its data comes with its run's field (RestoreRun). A lock whose
// run has an older release's lease key is left to the lease step, which
// deletes both and records the run once.
//
// KEYS: running, processes, sweep, runs, then per lock: lock, run (an
// older release's lease key), task, history
// ARGV: process_ttl_ms, history_limit, history_age_ms, not_after_ms, then
// per lock: value_seen (it is left alone unless it still holds exactly
// that), run_id ("" when the value names no run), process, record_json,
// error text
// Returns the lock values deleted.
var sweepLockScript = redis.NewScript(luaNow + luaHistory + luaSweepLost + `
for i = 0, groups - 1 do
  local lock, run, task = KEYS[5 + 4*i], KEYS[6 + 4*i], KEYS[7 + 4*i]
  local o = 4 + 5*i
  local seen, id, process = ARGV[o + 1], ARGV[o + 2], ARGV[o + 3]
  if redis.pcall('GET', lock) == seen and (id == '' or (redis.call('HEXISTS', KEYS[4], id) == 0
      and redis.call('SISMEMBER', KEYS[1], id) == 0 and redis.call('EXISTS', run) == 0 and gone(process, ttl))) then
    local hash = redis.call('TYPE', task).ok == 'hash'
    todo[#todo + 1] = {i = i, id = seen, rec = id ~= '' and not recorded(task, hash, id) and ARGV[o + 4] or nil,
      reason = ARGV[o + 5], hash = hash, run = id}
  end
end
return apply(todo, '` + RepairLock + `')
`)

// SweepLocks checks one SCAN page of the task locks (lock:task:<key>; no
// index lists them, and a task's lock exists only while it runs; on Redis
// Cluster the scan goes to the node of the namespace's slot) and deletes
// those held for no run (see sweepLockScript), counted as RepairLock, a
// named run recorded abandoned.
// Bounds: one page; about six reads per lock, every write after all of
// them.
// Failure: as SweepLeases.
func (r *RDB) SweepLocks(ctx context.Context, cursor uint64, count int64, p LostRuns) (uint64, []string, error) {
	lockKeys, members, next, err := r.scanKeys(ctx, cursor, r.k.Lock(""), count)
	if err != nil {
		return cursor, nil, err
	}
	if len(lockKeys) == 0 {
		return next, nil, nil
	}
	locks, err := r.getAll(ctx, lockKeys)
	if err != nil {
		return cursor, nil, err
	}
	keys, args := r.lostArgs(p)
	for i, m := range members {
		v, held := locks[lockKeys[i]]
		if !held {
			continue // no lock, or not a string
		}
		id, rec, reason := "", "", "invariant sweep: lock held by no scheduler's run"
		process, fire, ok := ParseLockValue(v)
		if ok && process != "" {
			id = RunID(m, fire)
			reason = "invariant sweep: lock held for no running run, its process " + process + " gone"
			rec = lostRecord(m, fire, fire, process, reason, p)
		} else {
			process = ""
		}
		keys = append(keys, lockKeys[i], r.k.Run(id), r.k.Task(m), r.k.History(m))
		args = append(args, v, id, process, rec, reason)
	}
	if len(keys) == 4 {
		return next, nil, nil
	}
	deleted, err := sweepLockScript.Run(ctx, r.c, keys, args...).StringSlice()
	return pageResult(cursor, next, deleted, err)
}

// sweepFirstDueScript removes the fields of jobs:first whose job no longer
// exists (no jobs:data entry). Every path that ends a job (its ack, a
// cancel) deletes its field with its data, in one script, and a field is
// written only for a job whose data exists (a release, a retry, a
// redelivery, the job sweep): so a field without data is never a state in
// progress, only one a crash of an older version or a hand edit left.
//
// KEYS: jobs:first, jobs:data, sweep
// ARGV: the job ids (one HSCAN page of jobs:first)
// Returns the ids whose field was removed.
var sweepFirstDueScript = redis.NewScript(luaNow + luaHistory + `
want_type(KEYS[1], 'hash')
want_type(KEYS[3], 'hash')
local gone = {}
for i = 1, #ARGV do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 and redis.call('HEXISTS', KEYS[2], ARGV[i]) == 0 then
    gone[#gone + 1] = ARGV[i]
  end
end
if #gone > 0 then
  callk('HDEL', KEYS[1], gone)
  incr(KEYS[3], '` + RepairDue + `', #gone)
end
return gone
`)

// SweepFirstDue checks one HSCAN page of jobs:first and removes the fields
// of jobs that no longer exist, counted as RepairDue.
// Bounds: one page; two reads per field, then one HDEL (chunked) and one
// counter.
// Failure: jobs:first and the sweep hash are type-checked first
// (want_type); a data hash of the wrong type fails its first read; all
// before anything is written.
func (r *RDB) SweepFirstDue(ctx context.Context, cursor uint64, count int64) (uint64, []string, error) {
	kv, next, err := r.c.HScan(ctx, r.k.FirstDue(), cursor, "", count).Result()
	if err != nil {
		return cursor, nil, err
	}
	if len(kv) == 0 {
		return next, nil, nil
	}
	args := make([]any, 0, len(kv)/2)
	for _, id := range pairsAt(kv, 0) {
		args = append(args, id)
	}
	gone, err := sweepFirstDueScript.Run(ctx, r.c, []string{r.k.FirstDue(), r.k.JobData(), r.k.Sweep()}, args...).StringSlice()
	return pageResult(cursor, next, gone, err)
}
