package runtime

// The invariant sweep: a master duty that walks the namespace's keys a page
// at a time, looking for state that no write path leaves behind and that no
// other duty repairs, and repairs it. Each page's candidates go to a Lua
// script that checks every one of them again, atomically, and repairs only
// what is still orphaned, so a page read while schedulers claim and finish
// can never make the sweep undo a transition in progress: every write path
// of the engine (enqueue, claim, ack, redeliver, cancel, dead-letter retry,
// register, claim fires, finish runs, abandon) changes the keys the sweep
// checks in one script, so the states between its commands are never seen.
//
// What it finds, by kind (the counters of the sweep hash, Overview.Repaired
// and the Repaired hook):
//
//   - job: a job record (jobs:data) that is not queued (jobs), not dead
//     (dead) and not owned by a claim that holds a lease (jobs:owner names
//     no claim, or one without a jobs:lease entry: its acks would all be
//     refused and no redelivery would ever take it). It is queued again,
//     due now: at-least-once, never dropped; its attempts are unchanged.
//   - claim: a claim's lease (jobs:lease) that owns no job (no jobs:owner
//     field names it). It is removed.
//   - lease: a run lease (run:<id>) with no running entry, whose process has
//     no recent heartbeat (or which names no process). The run was lost:
//     the lease, and the task's lock if the run holds it, are deleted, and
//     the run is recorded abandoned in the task's history and counters. A
//     live process's lease is left alone: its finish records the run.
//   - lock: a task lock (lock:task:<key>) whose value "process|fire" names
//     no run in running (and no lease: the lease kind repairs those two
//     together), held by a process with no recent heartbeat, or whose value
//     names no run at all. The lock is deleted, and a named run is recorded
//     abandoned. A live process's lock is left alone: after Redis lost its
//     data, a process takes again the locks of its runs in progress without
//     their leases (dataloss.go), and renews them until they finish.
//   - running: a running entry with no lease. The reap duty already records
//     such a run abandoned (its lease expired: maintain.go), so it counts
//     them there; the sweep itself only removes entries that are not run
//     ids ("task@fire"), which reap skips.
//   - queue: a queue member with no task hash. It is removed from the queue.
//
// Bounds: every scan asks for sweepCount elements (COUNT), a master tick
// makes at most sweepCallsPerTick scan calls, and a pass starts
// sweepEvery heartbeats after the previous one ended; the cursor is kept
// across ticks, so a namespace of a million jobs is swept in about a
// thousand ticks without stalling the other duties. A new master starts a
// pass from the beginning.

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The kinds of repair of the invariant sweep: the fields of the sweep hash,
// the keys of Overview.Repaired and the kind told to Hooks.Repaired.
const (
	// RepairJob counts job records that were neither queued, nor dead, nor
	// owned by a leased claim, and were queued again, due now.
	RepairJob = "job"
	// RepairClaim counts claim leases (jobs:lease) that owned no job and
	// were removed.
	RepairClaim = "claim"
	// RepairLease counts run leases with no running entry whose process was
	// gone: the run is recorded abandoned.
	RepairLease = "lease"
	// RepairRunning counts running entries with no lease: runs recorded
	// abandoned by the reap duty after their lease expired, and entries
	// that were no run id, removed by the sweep.
	RepairRunning = "running"
	// RepairLock counts task locks held for no run in progress by a process
	// that was gone, or by no process: deleted, the run recorded abandoned.
	RepairLock = "lock"
	// RepairQueue counts queue members with no task hash, removed.
	RepairQueue = "queue"
)

// RepairKinds returns the kinds of repair, in the order the operator's
// overview prints them.
func RepairKinds() []string {
	return []string{RepairJob, RepairClaim, RepairLease, RepairRunning, RepairLock, RepairQueue}
}

const (
	// sweepCount is the COUNT of each scan call of the sweep (a hint to
	// Redis: a small hash or set comes whole), and so about how many
	// candidates one script call checks.
	sweepCount = 100
	// sweepCallsPerTick bounds the scan calls of one master tick.
	sweepCallsPerTick = 10
	// sweepEvery is how many heartbeats after a pass ends the next starts.
	sweepEvery = 10
	// sweepMaxClaims bounds the claim ids one pass checks.
	sweepMaxClaims = 10000
)

// sweep returns the key of the sweep's counters:
//
//	P sweep  HASH  repair kind -> how many the invariant sweep repaired
func (k keys) sweep() string { return k.prefix + "sweep" }

// sweeper is the sweep's progress. The maintain goroutine alone uses it.
type sweeper struct {
	active bool
	next   time.Time // when the next pass may start
	step   int       // index into sweepSteps
	cursor uint64    // the step's scan cursor
	claims map[string]bool
}

// sweepStep scans one page from cursor, has its candidates checked and
// repaired, and returns the next cursor (0 when the step is done).
type sweepStep func(s *Scheduler, ctx context.Context, cursor uint64) (uint64, error)

// sweepSteps are the steps of a pass, in order. The claim steps read the
// leases before the owners (see sweepClaimScript).
var sweepSteps = []sweepStep{
	(*Scheduler).sweepQueue,
	(*Scheduler).sweepJobs,
	(*Scheduler).sweepClaimLeases,
	(*Scheduler).sweepClaimOwners,
	(*Scheduler).sweepRunning,
	(*Scheduler).sweepLeases,
	(*Scheduler).sweepLocks,
}

// sweep is the master duty: it goes on with the current pass, or starts
// one when it is time, for at most sweepCallsPerTick scan calls. A failed
// call keeps its cursor, so the page is read again next tick.
func (s *Scheduler) sweep(ctx context.Context) error {
	w := &s.sweeper
	if !w.active {
		if time.Now().Before(w.next) {
			return nil
		}
		*w = sweeper{active: true}
	}
	for range sweepCallsPerTick {
		next, err := sweepSteps[w.step](s, ctx, w.cursor)
		if err != nil {
			return err
		}
		w.cursor = next
		if next != 0 {
			continue
		}
		if w.step++; w.step == len(sweepSteps) {
			*w = sweeper{next: time.Now().Add(sweepEvery * s.opts.heartbeat)}
			return nil
		}
	}
	return nil
}

// repaired logs what a sweep script (or reap) repaired and tells the hook.
func (s *Scheduler) repaired(ctx context.Context, kind string, ids []string) {
	if len(ids) == 0 {
		return
	}
	shown := ids
	if len(shown) > 20 {
		shown = shown[:20]
	}
	s.log.Warn("invariant sweep repaired "+kind, "kind", kind, "n", len(ids), "ids", strings.Join(shown, ","))
	if h := s.opts.hooks.Repaired; h != nil {
		h(ctx, kind, len(ids))
	}
}

// countRepaired counts repairs another duty made (reap's abandoned runs
// whose lease was gone) in the sweep hash, logs them and tells the hook.
// The count is written after the repair, not with it: a counter, it may
// miss one if the process dies between the two.
func (s *Scheduler) countRepaired(ctx context.Context, kind string, ids ...string) {
	if err := s.rdb.HIncrBy(ctx, s.keys.sweep(), kind, int64(len(ids))).Err(); err != nil && ctx.Err() == nil {
		s.log.Warn("counting a repair failed", "kind", kind, "err", err)
	}
	s.repaired(ctx, kind, ids)
}

// runScript runs a sweep script that returns the ids it repaired.
func (s *Scheduler) runSweepScript(ctx context.Context, kind string, sc *redis.Script, keys []string, args ...any) error {
	ids, err := sc.Run(ctx, s.rdb, keys, args...).StringSlice()
	if err != nil {
		return err
	}
	s.repaired(ctx, kind, ids)
	return nil
}

// sweepRemoveScript removes the members of a set or sorted set (the queue,
// running) whose companion key (the task hash of a queue member, the lease
// of a running entry) does not exist. The queue: a task hash and its queue
// entry are created together (register, SetTask) and deleted together (a
// once task's finish, prune, RemoveTasks), so a member without a hash is
// never a state in progress. Running: only entries that are no run id
// ("task@fire") are passed, which reap skips as it cannot tell their task;
// the claim script adds run ids only, with their lease.
//
// KEYS: the set or sorted set, sweep, then the companion key of each member
// ARGV: kind (the counter), "zset" or "set", then the members (about
// sweepCount: one page of a scan)
// Returns the members removed. Two reads per member come first (a
// collection of the wrong type fails the script there, before anything is
// written); then one ZREM or SREM and the counter.
var sweepRemoveScript = redis.NewScript(luaNow + luaHistory + `
local zset = ARGV[2] == 'zset'
local gone = {}
for i = 3, #ARGV do
  local present
  if zset then present = redis.call('ZSCORE', KEYS[1], ARGV[i]) else present = redis.call('SISMEMBER', KEYS[1], ARGV[i]) == 1 end
  if present and redis.call('EXISTS', KEYS[i]) == 0 then gone[#gone + 1] = ARGV[i] end
end
if #gone > 0 then
  redis.call(zset and 'ZREM' or 'SREM', KEYS[1], unpack(gone))
  incr(KEYS[2], ARGV[1], #gone)
end
return gone
`)

// sweepRemove has sweepRemoveScript remove the members of collection (of
// Redis type typ) whose key companion(m) does not exist.
func (s *Scheduler) sweepRemove(ctx context.Context, kind, typ, collection string, members []string, companion func(string) string) error {
	if len(members) == 0 {
		return nil
	}
	keys := []string{collection, s.keys.sweep()}
	args := []any{kind, typ}
	for _, m := range members {
		keys = append(keys, companion(m))
		args = append(args, m)
	}
	return s.runSweepScript(ctx, kind, sweepRemoveScript, keys, args...)
}

// sweepQueue checks one ZSCAN page of the queue.
func (s *Scheduler) sweepQueue(ctx context.Context, cursor uint64) (uint64, error) {
	kv, next, err := s.rdb.ZScan(ctx, s.keys.queue(), cursor, "", sweepCount).Result()
	if err != nil {
		return next, err
	}
	var members []string
	for i := 0; i < len(kv); i += 2 {
		members = append(members, kv[i])
	}
	return next, s.sweepRemove(ctx, RepairQueue, "zset", s.keys.queue(), members, s.keys.task)
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
// looks at leases), and is removed with the re-queue.
//
// KEYS: jobs, jobs:data, jobs:owner, jobs:lease, dead, sweep
// ARGV: wake_channel, then the job ids (one HSCAN page of jobs:data)
// Returns the ids queued again. About four reads per id come first (a key
// of the wrong type fails the script there, before anything is written);
// then one HDEL, one ZADD, one counter and one PUBLISH.
var sweepJobsScript = redis.NewScript(luaNow + luaHistory + `
local lost, stale = {}, {}
for i = 2, #ARGV do
  local id = ARGV[i]
  if redis.call('HEXISTS', KEYS[2], id) == 1 and not redis.call('ZSCORE', KEYS[1], id)
      and not redis.call('ZSCORE', KEYS[5], id) then
    local owner = redis.call('HGET', KEYS[3], id)
    if not owner then
      lost[#lost + 1] = id
    elseif not redis.call('ZSCORE', KEYS[4], owner) then
      lost[#lost + 1] = id
      stale[#stale + 1] = id
    end
  end
end
if #stale > 0 then redis.call('HDEL', KEYS[3], unpack(stale)) end
if #lost > 0 then
  local queue = {}
  for _, id in ipairs(lost) do
    queue[#queue + 1] = now
    queue[#queue + 1] = id
  end
  redis.call('ZADD', KEYS[1], unpack(queue))
  incr(KEYS[6], 'job', #lost)
  redis.call('PUBLISH', ARGV[1], 'job')
end
return lost
`)

// sweepJobs checks one HSCAN page of jobs:data.
func (s *Scheduler) sweepJobs(ctx context.Context, cursor uint64) (uint64, error) {
	kv, next, err := s.rdb.HScan(ctx, s.keys.jobData(), cursor, "", sweepCount).Result()
	if err != nil || len(kv) == 0 {
		return next, err
	}
	args := []any{s.keys.wake()}
	for i := 0; i < len(kv); i += 2 {
		args = append(args, kv[i])
	}
	return next, s.runSweepScript(ctx, RepairJob, sweepJobsScript,
		[]string{s.keys.jobs(), s.keys.jobData(), s.keys.owners(), s.keys.leases(), s.keys.dead(), s.keys.sweep()}, args...)
}

// sweepClaimLeases reads one ZSCAN page of jobs:lease: the claims this pass
// checks.
func (s *Scheduler) sweepClaimLeases(ctx context.Context, cursor uint64) (uint64, error) {
	kv, next, err := s.rdb.ZScan(ctx, s.keys.leases(), cursor, "", sweepCount).Result()
	if err != nil {
		return next, err
	}
	if s.sweeper.claims == nil {
		s.sweeper.claims = map[string]bool{}
	}
	for i := 0; i < len(kv) && len(s.sweeper.claims) < sweepMaxClaims; i += 2 {
		s.sweeper.claims[kv[i]] = true
	}
	return next, nil
}

// sweepClaimScript removes the leases of claims that own no job.
//
// Whether a claim owns a job is not checked here: it would take all of
// jobs:owner (every job in flight) in one call. It need not be, because it
// cannot change back: the owner fields naming a claim are written only by
// the claim script that creates the claim's lease, and later only removed
// (ack, redeliver, this sweep's job step). So the caller reads the leases
// first, then HSCANs all of jobs:owner (which returns every field present
// for the whole scan); a claim it read whose id no owner field showed owns
// no job at the end of the scan, and never will again. This script only
// removes those that still have a lease.
//
// KEYS: jobs:lease, sweep
// ARGV: claim ids (at most sweepMaxClaims, in chunks)
// Returns the claims removed. ZSCORE reads first (a lease set of the wrong
// type fails there); then one ZREM and one counter.
var sweepClaimScript = redis.NewScript(luaNow + luaHistory + `
local gone = {}
for i = 1, #ARGV do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) then gone[#gone + 1] = ARGV[i] end
end
if #gone > 0 then
  redis.call('ZREM', KEYS[1], unpack(gone))
  incr(KEYS[2], 'claim', #gone)
end
return gone
`)

// sweepClaimOwners reads one HSCAN page of jobs:owner, crossing off the
// claims that own a job; after the last page, the claims left have their
// leases removed.
func (s *Scheduler) sweepClaimOwners(ctx context.Context, cursor uint64) (uint64, error) {
	if len(s.sweeper.claims) == 0 {
		return 0, nil
	}
	kv, next, err := s.rdb.HScan(ctx, s.keys.owners(), cursor, "", sweepCount).Result()
	if err != nil {
		return next, err
	}
	for i := 1; i < len(kv); i += 2 {
		delete(s.sweeper.claims, kv[i])
	}
	if next != 0 || len(s.sweeper.claims) == 0 {
		return next, nil
	}
	args := make([]any, 0, len(s.sweeper.claims))
	for c := range s.sweeper.claims {
		args = append(args, c)
	}
	for len(args) > 0 {
		n := min(len(args), 1000)
		if err := s.runSweepScript(ctx, RepairClaim, sweepClaimScript, []string{s.keys.leases(), s.keys.sweep()}, args[:n]...); err != nil {
			return cursor, err // this page again next tick
		}
		args = args[n:]
	}
	s.sweeper.claims = nil
	return 0, nil
}

// sweepRunning checks one SSCAN page of running for entries that are not
// run ids; the others are reap's (see RepairRunning).
func (s *Scheduler) sweepRunning(ctx context.Context, cursor uint64) (uint64, error) {
	ids, next, err := s.rdb.SScan(ctx, s.keys.running(), cursor, "", sweepCount).Result()
	if err != nil {
		return next, err
	}
	var junk []string
	for _, id := range ids {
		if !strings.Contains(id, "@") {
			junk = append(junk, id)
		}
	}
	return next, s.sweepRemove(ctx, RepairRunning, "set", s.keys.running(), junk, s.keys.run)
}

// luaSweepLost is the prelude of the lease and lock scripts: it defines
// gone(process, ttl), true when process has no heartbeat younger than ttl
// ms (or is ""); lost(task, task_is_hash, hist, record, reason), which
// records a lost run as abandonScript does: the task's last result and
// counters (when its key is a hash) and the history record; and
// apply(todo, kind), the writes of both scripts, made after all their
// reads.
const luaSweepLost = `
local function gone(process, ttl)
  if process == '' then return true end
  local beat = tonumber(redis.call('ZSCORE', KEYS[2], process))
  return not (beat and beat >= now - ttl)
end
local function lost(task, is_hash, hist, record, reason)
  if is_hash then
    redis.call('HSET', task, 'last_result', 'abandoned', 'last_error', reason)
    incr(task, 'runs', 1)
    incr(task, 'failures', 1)
  end
  push_history(hist, record, tonumber(ARGV[2]), tonumber(ARGV[3]))
end
-- apply(todo, kind) makes the writes of the repairs decided: for each, it
-- deletes its first key (KEYS[4 + 4*i]), its second too when also is set,
-- and records the lost run when there is a record; then counts them.
local function apply(todo, kind)
  local out = {}
  for _, t in ipairs(todo) do
    local i = t.i
    redis.call('DEL', KEYS[4 + 4*i])
    if t.also then redis.call('DEL', KEYS[5 + 4*i]) end
    if t.rec then lost(KEYS[6 + 4*i], t.hash, KEYS[7 + 4*i], t.rec, t.reason) end
    out[#out + 1] = t.id
  end
  if #out > 0 then incr(KEYS[3], kind, #out) end
  return out
end
`

// sweepLeaseScript deletes run leases that have no running entry and whose
// process is gone, with the run's lock when the run holds it, and records
// each run abandoned. The claim script writes a lease with its running
// entry, and finish and abandon remove both, so a lease without its entry
// is never a claim or a finish in progress; the entry is gone by a fault
// (a running set moved aside, a foreign write). Then reap never sees the
// run: while its process lives, the run's finish deletes the lease and
// records it; once the process has no heartbeat for a process TTL, no
// finish will come, and the run is recorded here.
//
// KEYS: running, processes, sweep, then per lease: run, lock, task, history
// ARGV: process_ttl_ms, history_limit, history_age_ms, not_after_ms (it
// does nothing when run later: a stall makes every heartbeat look old),
// then per lease: run_id, lease_seen (it is left alone unless it still
// holds exactly that), process ("" for an unreadable lease), lock_value,
// record_json, error text
// Returns the run ids recorded. Each lease costs about six reads; every
// write comes after all of them.
var sweepLeaseScript = redis.NewScript(luaNow + luaHistory + luaSweepLost + `
if now > tonumber(ARGV[4]) then return {} end
local ttl, todo = tonumber(ARGV[1]), {}
for i = 0, (#KEYS - 3) / 4 - 1 do
  local run, lock, task, hist = KEYS[4 + 4*i], KEYS[5 + 4*i], KEYS[6 + 4*i], KEYS[7 + 4*i]
  local o = 4 + 6*i
  local id, seen, process, lockv = ARGV[o + 1], ARGV[o + 2], ARGV[o + 3], ARGV[o + 4]
  local cur = redis.pcall('GET', run)
  if cur == seen and redis.call('SISMEMBER', KEYS[1], id) == 0 and gone(process, ttl) then
    todo[#todo + 1] = {i = i, id = id, rec = ARGV[o + 5], reason = ARGV[o + 6],
      also = redis.pcall('GET', lock) == lockv, hash = redis.call('TYPE', task).ok == 'hash'}
  end
end
return apply(todo, 'lease')
`)

// runKeyScanner returns the client whose SCAN sees the namespace's keys:
// on Redis Cluster the master of the namespace's slot (SCAN is per node),
// else the client itself.
func (s *Scheduler) runKeyScanner(ctx context.Context) (redis.Cmdable, error) {
	if cc, ok := s.rdb.(*redis.ClusterClient); ok {
		return cc.MasterForKey(ctx, s.keys.running())
	}
	return s.rdb, nil
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

// splitRunID splits a run id "task@fire_ms".
func splitRunID(id string) (task string, fire int64, ok bool) {
	at := strings.LastIndexByte(id, '@')
	if at < 0 {
		return "", 0, false
	}
	fire, err := strconv.ParseInt(id[at+1:], 10, 64)
	return id[:at], fire, err == nil
}

// sweepLeases checks one SCAN page of the run leases (no index lists them).
func (s *Scheduler) sweepLeases(ctx context.Context, cursor uint64) (uint64, error) {
	node, err := s.runKeyScanner(ctx)
	if err != nil {
		return cursor, err
	}
	prefix := s.keys.run("")
	found, next, err := node.Scan(ctx, cursor, globEscape(prefix)+"*", sweepCount).Result()
	if err != nil || len(found) == 0 {
		return next, err
	}
	type cand struct {
		id, task string
		fire     int64
		get      *redis.StringCmd
	}
	var cands []*cand
	for _, key := range found {
		id := strings.TrimPrefix(key, prefix)
		if task, fire, ok := splitRunID(id); ok {
			cands = append(cands, &cand{id: id, task: task, fire: fire})
		}
	}
	if len(cands) == 0 {
		return next, nil
	}
	_, err = pipelined(ctx, s.rdb, nil, func(pipe redis.Pipeliner) struct{} {
		for _, c := range cands {
			c.get = pipe.Get(ctx, s.keys.run(c.id))
		}
		return struct{}{}
	})
	if err != nil && err != redis.Nil && !isReplyError(err) {
		return cursor, err
	}
	keys := []string{s.keys.running(), s.keys.processes(), s.keys.sweep()}
	args := []any{s.opts.processTTL.Milliseconds(), s.opts.historyLen, s.opts.historyAge.Milliseconds(), s.dutyDeadline(ctx)}
	for _, c := range cands {
		lease, err := c.get.Result()
		if err != nil {
			continue // gone, or not a string (not a lease: left alone)
		}
		var l struct {
			Process string `json:"process"`
			Start   int64  `json:"start"`
		}
		if json.Unmarshal([]byte(lease), &l) != nil {
			l.Process, l.Start = "", 0
		}
		start := l.Start
		if start == 0 {
			start = c.fire
		}
		reason := "invariant sweep: run lease without a running entry, its process " + l.Process + " gone"
		rec := Record{Task: c.task, Fire: fromMS(c.fire), Start: fromMS(start), End: s.clock.Now(),
			Outcome: OutcomeAbandoned, Error: reason, Process: l.Process, Attempt: 1}
		keys = append(keys, s.keys.run(c.id), s.keys.lock(c.task), s.keys.task(c.task), s.keys.history(c.task))
		args = append(args, c.id, lease, l.Process, l.Process+"|"+strconv.FormatInt(c.fire, 10), rec.encode(), reason)
	}
	if len(keys) == 3 {
		return next, nil
	}
	return next, s.runSweepScript(ctx, RepairLease, sweepLeaseScript, keys, args...)
}

// sweepLockScript deletes task locks held for no run: the value
// "process|fire" names a run id "task@fire" that is not in running and has
// no lease, and the process has no heartbeat for a process TTL; or the
// value names no run (no scheduler wrote it). A named run is recorded
// abandoned. The claim script takes a lock with its run's entry and lease,
// and finish and abandon release it with them, so a lock without its run
// is no claim or finish in progress. The one lock a scheduler holds
// without its run is one it took again after Redis lost its data
// (dataloss.go); its process is alive and renews it, so it is left alone
// until that process is gone. A lock whose run has a lease is left to the
// lease step, which deletes both and records the run once.
//
// KEYS: running, processes, sweep, then per lock: lock, run, task, history
// ARGV: process_ttl_ms, history_limit, history_age_ms, not_after_ms, then
// per lock: value_seen (it is left alone unless it still holds exactly
// that), run_id ("" when the value names no run), process, record_json,
// error text
// Returns the lock values deleted. Each lock costs about six reads; every
// write comes after all of them.
var sweepLockScript = redis.NewScript(luaNow + luaHistory + luaSweepLost + `
if now > tonumber(ARGV[4]) then return {} end
local ttl, todo = tonumber(ARGV[1]), {}
for i = 0, (#KEYS - 3) / 4 - 1 do
  local lock, run, task = KEYS[4 + 4*i], KEYS[5 + 4*i], KEYS[6 + 4*i]
  local o = 4 + 5*i
  local seen, id, process = ARGV[o + 1], ARGV[o + 2], ARGV[o + 3]
  if redis.pcall('GET', lock) == seen and (id == '' or (redis.call('SISMEMBER', KEYS[1], id) == 0
      and redis.call('EXISTS', run) == 0 and gone(process, ttl))) then
    todo[#todo + 1] = {i = i, id = seen, rec = id ~= '' and ARGV[o + 4] or nil, reason = ARGV[o + 5],
      hash = redis.call('TYPE', task).ok == 'hash'}
  end
end
return apply(todo, 'lock')
`)

// sweepLocks checks the locks of one SSCAN page of the tasks set (every
// task key; a lock of a key not in it expires with its TTL).
func (s *Scheduler) sweepLocks(ctx context.Context, cursor uint64) (uint64, error) {
	members, next, err := s.rdb.SScan(ctx, s.keys.tasks(), cursor, "", sweepCount).Result()
	if err != nil || len(members) == 0 {
		return next, err
	}
	gets, err := pipelined(ctx, s.rdb, nil, func(pipe redis.Pipeliner) []*redis.StringCmd {
		cmds := make([]*redis.StringCmd, len(members))
		for i, m := range members {
			cmds[i] = pipe.Get(ctx, s.keys.lock(m))
		}
		return cmds
	})
	if err != nil && err != redis.Nil && !isReplyError(err) {
		return cursor, err
	}
	keys := []string{s.keys.running(), s.keys.processes(), s.keys.sweep()}
	args := []any{s.opts.processTTL.Milliseconds(), s.opts.historyLen, s.opts.historyAge.Milliseconds(), s.dutyDeadline(ctx)}
	for i, m := range members {
		v, err := gets[i].Result()
		if err != nil {
			continue // no lock, or not a string
		}
		process, fireS, _ := cutLast(v, "|")
		fire, perr := strconv.ParseInt(fireS, 10, 64)
		id, rec, reason := "", "", "invariant sweep: lock held by no scheduler's run"
		if perr == nil && process != "" {
			id = m + "@" + fireS
			reason = "invariant sweep: lock held for no running run, its process " + process + " gone"
			rec = Record{Task: m, Fire: fromMS(fire), Start: fromMS(fire), End: s.clock.Now(),
				Outcome: OutcomeAbandoned, Error: reason, Process: process, Attempt: 1}.encode()
		} else {
			process = ""
		}
		keys = append(keys, s.keys.lock(m), s.keys.run(id), s.keys.task(m), s.keys.history(m))
		args = append(args, v, id, process, rec, reason)
	}
	if len(keys) == 3 {
		return next, nil
	}
	return next, s.runSweepScript(ctx, RepairLock, sweepLockScript, keys, args...)
}

// cutLast is strings.Cut at the last sep.
func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

// repairCounts reads the sweep hash: every kind, 0 when never counted, and
// any other field that holds a count.
func repairCounts(h map[string]string) map[string]int64 {
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
