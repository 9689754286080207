package runtime

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
)

// maintainer is the maintenance component: its goroutine beats the
// heartbeat, renews the leases of the runs and claims in flight, syncs the
// clock, notices lost data, reads the live peers for the instant split, and
// in the master does the namespace's duties (abandoned runs, redelivery,
// requeue, prune, the invariant sweep of sweep.go). It also registers the
// tasks at start (register.go).
type maintainer struct {
	*engine
	mu        sync.Mutex
	isMaster  bool                 // guarded by mu
	dataEpoch string               // created_at of meta when last checked (maintain goroutine only)
	digest    string               // registryDigest of reg, taken at Run
	peerSets  map[string]peerTypes // live process id -> the types it runs (share.go; maintain goroutine only)
	sweeper   sweeper              // the invariant sweep's progress (sweep.go; maintain goroutine only)
	limits    []rdb.TypeLimit      // typeLimits of reg, which does not change: published by each heartbeat
	requeueAt requeueCursors       // where requeue's scans resume (maintain goroutine only)
}

func newMaintainer(e *engine) *maintainer {
	mt := &maintainer{engine: e, peerSets: make(map[string]peerTypes)}
	mt.limits = mt.typeLimits()
	return mt
}

// maintain runs the periodic duties of every process (heartbeat, lease
// renewal, clock sync, detecting that Redis lost its data) and, in the
// process holding lock:master, the duties done once per namespace
// (abandoned runs, re-queueing enabled tasks, pruning undeclared tasks,
// redelivering jobs, the invariant sweep of sweep.go).
func (mt *maintainer) maintain(ctx context.Context) {
	tick := time.NewTicker(mt.opts.heartbeat)
	defer tick.Stop()
	lastSync := time.Now()
	lastForget := time.Now()
	var contact redisContact
	lastQuarantine := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		mt.health.tick()
		if time.Since(lastQuarantine) > 10*mt.opts.heartbeat {
			lastQuarantine = time.Now()
			if err := mt.quarantine(ctx); err != nil && ctx.Err() == nil {
				mt.log.Warn("checking the types of the namespace's keys failed", "err", err)
			}
		}
		beat := time.Now()
		if err := mt.heartbeat(ctx); err != nil && ctx.Err() == nil {
			mt.log.Warn("heartbeat failed", "err", err)
			reloadTopology(mt.rdb, err)
			contact.fail()
			continue
		}
		beatEnd, beatAt := time.Now(), mt.clock.Now()
		if broken := contact.ok(beat, beatEnd, mt.opts.processTTL); broken > 0 {
			mt.log.Warn("Redis answers again after an outage or a stall; judging other processes dead waits a process TTL",
				"outage", broken.Round(time.Millisecond).String(), "wait", mt.opts.processTTL.String())
		}
		if mt.opts.afterBeat != nil {
			mt.opts.afterBeat()
		}
		// Lost data first: the locks of runs in progress are taken again
		// right after the heartbeat that finds the loss (see checkData).
		if err := mt.checkData(ctx); err != nil && ctx.Err() == nil {
			mt.log.Warn("data check failed", "err", err)
		}
		mt.renew(ctx)
		mt.jobs.renewJobs(ctx)
		mt.jobs.giveBackWaiting(false)
		if time.Since(lastSync) > 10*time.Second {
			lastSync = time.Now()
			if err := mt.clock.Sync(ctx, 3); err != nil {
				mt.log.Warn("clock sync failed", "err", err)
			}
		}
		if time.Since(lastForget) > time.Minute {
			lastForget = time.Now()
			mt.disp.forgetIgnored()
		}
		// The round judges staleness by this heartbeat: a loop held up since
		// (its calls stalled by Redis, the process not scheduled) for most
		// of a TTL does no duty on it (see dutyContext).
		if mt.takeMaster(ctx) && contact.settled(time.Now(), mt.opts.processTTL) &&
			time.Since(beatEnd) < dutyWindow(mt.opts.processTTL) {
			mt.masterDuties(mt.dutyContext(ctx, beatAt))
		}
	}
}

// keepAlive keeps, while a stopping scheduler's handlers finish, its
// heartbeat and the locks and leases of their runs and jobs renewed (the
// maintenance loop has stopped with Run's ctx): otherwise, past the process
// TTL, a peer would record the runs abandoned, free their locks and start
// a non-concurrent task beside its run, and deliver a running job again.
func (mt *maintainer) keepAlive(ctx context.Context) {
	tick := time.NewTicker(mt.opts.heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		mt.health.tick()
		if err := mt.heartbeat(ctx); err != nil {
			if ctx.Err() == nil {
				mt.log.Warn("heartbeat failed", "err", err)
			}
			continue
		}
		mt.renew(ctx)
		mt.jobs.renewJobs(ctx)
	}
}

// heartbeat tells the namespace this process is alive and what it runs.
func (mt *maintainer) heartbeat(ctx context.Context) error {
	now := ms(mt.clock.Now())
	host, _ := os.Hostname()
	running := mt.tasks.count()
	live, err := mt.db.Beat(ctx, rdb.Heartbeat{ID: mt.id, Host: host, Version: mt.opts.version, PID: os.Getpid(),
		StartedMS: ms(mt.start), NowMS: now, Running: running, Tasks: len(mt.runTypes), Types: mt.digest,
		Names: mt.runTypes, Limits: mt.limits},
		mt.opts.processTTL)
	if err != nil {
		return err
	}
	if err := mt.refreshPeers(ctx, live); err != nil {
		return fmt.Errorf("reading the task types of live processes: %w", err)
	}
	if err := mt.refreshDeclared(ctx, now); err != nil {
		return err
	}
	mt.health.beat()
	return nil
}

// renew extends the locks of this process's runs in progress. (Their
// leases, fields of the runs hash, have no TTL to extend; their run leases
// are the run lease renewer's, runlease.go.)
func (mt *maintainer) renew(ctx context.Context) {
	runs := mt.tasks.runsInFlight()
	if len(runs) == 0 {
		return
	}
	renewals := make([]rdb.RunRenewal, len(runs))
	for i, r := range runs {
		renewals[i] = rdb.RunRenewal{Task: r.task, LockValue: r.lockValue, TTL: r.ttl}
	}
	if err := mt.db.RenewRuns(ctx, renewals); err != nil && ctx.Err() == nil {
		mt.log.Warn("renewing run locks failed", "err", err)
	}
}

// checkData re-registers the tasks when Redis lost its data (a restart
// without persistence, a flush): the meta key written at registration is
// gone. The locks of runs in progress are gone too: each process takes its
// own again, whether it finds the loss itself or sees that another process
// registered again (meta's created_at changed), and then registers its own
// tasks (a fleet's tasks are its own: WithTasks), scheduled from
// dataLossResume on, so every live process has its locks back before a
// task can fire beside a run that is still going.
func (mt *maintainer) checkData(ctx context.Context) error {
	created, err := mt.db.DataEpoch(ctx)
	if err != nil {
		return err
	}
	switch {
	case created != "" && (mt.dataEpoch == "" || created == mt.dataEpoch):
		mt.dataEpoch = created
		return nil
	case created != "":
		mt.log.Warn("namespace data was lost (Redis restarted empty or was flushed) and registered again by another process; taking the locks of running tasks again")
		mt.dataEpoch = created
		mt.tasks.restoreRuns(ctx)
	case !mt.hasSchedules():
		return nil // only job types: nothing to register
	default:
		mt.log.Warn("namespace data is gone (Redis restarted empty or was flushed); registering tasks again")
		mt.tasks.restoreRuns(ctx)
	}
	if err := mt.registerFrom(ctx, mt.clock.Now().Add(mt.dataLossResume())); err != nil {
		return err
	}
	mt.wake()
	return nil
}

// dataLossResume is how long after registering again on lost data the
// tasks are first due: a process TTL and a heartbeat. A live process
// beats within a process TTL, and the heartbeat that finds the loss is
// followed by taking its locks again, so by then every live process holds
// the locks of its runs in progress again (one that has not beaten for a
// TTL counts as dead anyway).
func (mt *maintainer) dataLossResume() time.Duration {
	return mt.opts.processTTL + mt.opts.heartbeat
}

// takeMaster takes or renews lock:master and reports whether this process
// holds it.
func (mt *maintainer) takeMaster(ctx context.Context) bool {
	ok, err := mt.db.TakeMaster(ctx, mt.id, mt.opts.processTTL)
	held := err == nil && ok
	mt.mu.Lock()
	changed := held != mt.isMaster
	mt.isMaster = held
	mt.mu.Unlock()
	if changed {
		mt.log.Info("master role", "held", held)
	}
	return held
}

// masterDuties are done by one process per namespace at a time.
func (mt *maintainer) masterDuties(ctx context.Context) {
	for name, f := range map[string]func(context.Context) error{
		"reap abandoned runs": mt.reap,
		"requeue tasks":       mt.requeue,
		"prune tasks":         mt.prune,
		"redeliver jobs":      mt.jobs.redeliver,
		"invariant sweep":     mt.sweep,
		"free unique ids":     mt.freeUnique,
	} {
		if err := f(ctx); err != nil && ctx.Err() == nil {
			mt.log.Warn(name+" failed", "err", err)
		}
	}
}

// freeUnique deletes, a page per tick, the unique identities (Unique)
// whose ttl ended and that no job holds any more: their keys have no TTL
// of their own. A namespace without unique jobs pays one ZRANGE a tick.
func (mt *maintainer) freeUnique(ctx context.Context) error {
	_, err := mt.db.SweepUnique(ctx, uniqueSweepPage)
	return err
}

// uniqueSweepPage bounds the identities one master tick frees.
const uniqueSweepPage = 1000

// reap records runs whose process died as abandoned and frees their locks:
// the runs of the runs hash, and those an older release sharing the
// namespace (a rolling upgrade) lists in its running set, whose lease key
// may also have expired.
func (mt *maintainer) reap(ctx context.Context) error {
	runs, err := mt.db.ReadRuns(ctx)
	if err != nil || len(runs) == 0 {
		return err
	}
	beats, err := mt.db.ProcessBeats(ctx)
	if err != nil {
		return err
	}
	alive := make(map[string]bool, len(beats))
	deadline := ms(mt.clock.Now()) - mt.opts.processTTL.Milliseconds()
	for id, beat := range beats {
		alive[id] = beat >= deadline
	}
	for _, run := range runs {
		id, lease := run.ID, run.Lease
		if run.Foreign {
			continue // a foreign value where the lease should be
		}
		var l rdb.Lease
		if lease != "" {
			var perr error
			if l, perr = rdb.ParseLease(lease); perr != nil {
				// Not a lease this engine wrote: no process can renew it.
				mt.log.Warn("run lease unreadable; recording the run abandoned", "run", id, "err", perr)
			}
		}
		if l.Task != "" {
			if alive[l.Process] {
				continue
			}
		} else {
			// An older release's lease key expired (or the lease is not
			// ours): recover task and fire from the run id.
			task, fire, ok := rdb.ParseRunID(id)
			if !ok {
				continue
			}
			l = rdb.Lease{Task: task, Fire: fire}
			// The run's lock names its process: when that process is gone,
			// the lock is released with the run (else the sweep would find
			// it held for no run and record the run a second time).
			if p, lockFire, ok := rdb.ParseLockValue(mt.db.LockHolder(ctx, task)); ok && lockFire == fire && !alive[p] {
				l.Process = p
			}
		}
		rec := Record{Task: l.Task, Fire: fromMS(l.Fire), Start: fromMS(l.Fire), End: mt.clock.Now(),
			Outcome: OutcomeAbandoned, Error: "process " + l.Process + " died during the run", Process: l.Process, Attempt: 1}
		done, err := mt.db.Abandon(ctx, rdb.Abandonment{RunID: id, Task: l.Task, LeaseSeen: lease,
			LockValue: rdb.LockValue(l.Process, l.Fire), Process: l.Process, ProcessTTL: mt.opts.processTTL,
			Record: rec.encode(), NotAfterMS: mt.dutyDeadline(ctx)}, mt.history())
		if err != nil {
			return err
		}
		if done {
			mt.log.Warn("run abandoned: its process died", "task", l.Task, "fire", fromMS(l.Fire), "process", l.Process)
			if lease == "" {
				mt.countRepaired(ctx, RepairRunning, id) // an older release's running entry without its lease key (sweep.go)
			}
			if h := mt.opts.hooks.Abandoned; h != nil {
				h(ctx, RunInfo{Task: l.Task, Fire: fromMS(l.Fire), Due: fromMS(l.Fire), Attempt: 1, Process: l.Process})
			}
			mt.retryAbandoned(ctx, l.Task, id, fromMS(l.Fire))
		}
	}
	return nil
}

// retryAbandoned re-runs an abandoned fire when its task has retries.
func (mt *maintainer) retryAbandoned(ctx context.Context, task, runID string, fire time.Time) {
	typ, params, retries, err := mt.db.TaskRetry(ctx, task)
	if err != nil {
		return
	}
	if typ != "" && retries > 0 {
		mt.tasks.retryFire(typ, params, retries, runID, fire)
	}
}

// requeueBudget bounds how many task names one requeue reads from each of
// the unqueued set and the tasks set, so that a master tick costs the same
// at a million tasks as at a thousand.
const requeueBudget = 2000

// requeueScans bounds the SSCAN calls of each of requeue's two scans per
// tick (of about 1,000 names each).
const requeueScans = 8

// requeueCursors is where requeue's scans of the unqueued set and the
// tasks set resume at the next tick (0: from the start).
type requeueCursors struct{ unqueued, tasks uint64 }

// requeue puts active and paused tasks that are not in the queue back in
// it at their next future instant: tasks an operator enabled again, and
// entries lost to bad data. Each tick it reads up to requeueBudget names
// of the unqueued set (the tasks taken out of the queue as disabled, and
// those the invariant sweep found in no index: an operator's HSET of
// status active is seen within a tick) and as many of the tasks set (the
// declared tasks: one whose queue entry was lost is found within
// tasks/requeueBudget ticks; a run-time task's, within a sweep pass),
// resuming where the previous tick stopped. It reads their queue scores
// with ZMSCORE, a command per thousand tasks, and the hashes only of the
// tasks not queued. A task of the tasks set that it cannot queue goes in
// the unqueued set, which lists it without the tasks set.
func (mt *maintainer) requeue(ctx context.Context) error {
	members, fromIndex, err := mt.requeueCandidates(ctx)
	if err != nil || len(members) == 0 {
		return err
	}
	scores, queued, err := mt.db.QueueScores(ctx, members)
	if err != nil {
		return err
	}
	var stale []string // in the unqueued set, but queued
	for i, m := range members {
		if queued[i] && fromIndex[m] {
			stale = append(stale, m)
		}
	}
	if err := mt.db.DropUnqueued(ctx, stale); err != nil {
		return err
	}
	var unqueued []string
	for i, m := range members {
		switch {
		case !queued[i]:
			unqueued = append(unqueued, m)
		case absurdScore(scores[i]):
			mt.repairScore(ctx, m, scores[i])
		}
	}
	if len(unqueued) == 0 {
		return nil
	}
	members = unqueued
	reads, err := mt.db.ReadTaskStates(ctx, members)
	if err != nil {
		return err
	}
	now := mt.clock.Now()
	var unlisted []string // from the tasks set, in neither index, and not to be queued
	for i, m := range members {
		read := reads[i]
		if read.Missing {
			_ = mt.db.ForgetTask(ctx, m)
			continue
		}
		next := mt.nextForRequeue(m, read, now)
		if next == 0 {
			if !fromIndex[m] {
				unlisted = append(unlisted, m)
			}
			continue
		}
		queued, err := mt.db.Requeue(ctx, m, next)
		if err != nil {
			return err
		}
		if queued {
			mt.log.Info("task back in the queue", "task", m, "status", read.State.Status, "next", fromMS(next))
			_ = mt.db.Wake(ctx, "requeue")
		}
	}
	// Listed then by the unqueued set, which is what lists and counts a
	// task without the tasks set (rdb.Keys.Unqueued).
	_, err = mt.db.IndexUnqueued(ctx, unlisted)
	return err
}

// nextForRequeue is the instant a task that is not queued goes back at: its
// next after now if it is active or paused, else 0 (disabled, no instant
// left, a hash or an expression that does not parse).
func (mt *maintainer) nextForRequeue(key string, read rdb.TaskStateRead, now time.Time) int64 {
	st := read.State
	if read.Err != nil || (st.Status != StatusActive && st.Status != StatusPaused) || st.Expression == "" {
		return 0
	}
	sched, err := mt.cache.Get(st.Expression, st.TZ)
	if err != nil {
		return 0
	}
	return ms(jittered(sched, key, st.Jitter).Next(now))
}

// requeueCandidates reads the next names of the unqueued set and of the
// tasks set (up to requeueBudget each, without repeats), and tells which
// came from the unqueued set.
func (mt *maintainer) requeueCandidates(ctx context.Context) ([]string, map[string]bool, error) {
	var out []string
	fromIndex := map[string]bool{}
	seen := map[string]bool{}
	scans := []struct {
		cursor *uint64
		scan   func(context.Context, uint64, int64) ([]string, uint64, error)
		index  bool
	}{
		{&mt.requeueAt.unqueued, mt.db.ScanUnqueued, true},
		{&mt.requeueAt.tasks, mt.db.ScanDeclared, false},
	}
	for _, sc := range scans {
		// Up to requeueBudget names, in at most requeueScans calls: a sparse
		// hash table may answer a step with few names or none.
		for read, calls := 0, 0; read < requeueBudget && calls < requeueScans; calls++ {
			names, next, err := sc.scan(ctx, *sc.cursor, 1000)
			if err != nil {
				return nil, nil, err
			}
			*sc.cursor = next
			read += len(names)
			for _, m := range names {
				if sc.index {
					fromIndex[m] = true
				}
				if !seen[m] {
					seen[m] = true
					out = append(out, m)
				}
			}
			if next == 0 {
				break
			}
		}
	}
	return out, fromIndex, nil
}

// prune removes static tasks that no live process has declared for a
// while: tasks deleted from the code, once every process of the builds
// that declared them is gone. Run-time tasks are never pruned.
func (mt *maintainer) prune(ctx context.Context) error {
	grace := 3 * mt.opts.processTTL
	stale, err := mt.db.UndeclaredSince(ctx, ms(mt.clock.Now())-grace.Milliseconds())
	if err != nil {
		return err
	}
	for _, m := range stale {
		pruned, err := mt.db.Prune(ctx, m, grace, mt.dutyDeadline(ctx))
		if err != nil {
			return err
		}
		if pruned {
			mt.log.Info("task removed: no running build declares it", "task", m)
		}
	}
	// Forget processes that have been silent for long.
	return mt.db.ForgetProcesses(ctx, ms(mt.clock.Now())-(10*mt.opts.processTTL).Milliseconds())
}

// typeLimits is the flow-control limits of the job types this process
// runs that have any, as its heartbeat publishes them for operators.
func (mt *maintainer) typeLimits() []rdb.TypeLimit {
	var out []rdb.TypeLimit
	for _, e := range mt.reg.Entries() {
		c := e.Config()
		if e.Schedule() != nil || (c.MaxRunning == 0 && c.Rate.IsZero() && c.Priority == 0) {
			continue
		}
		out = append(out, rdb.TypeLimit{Type: c.Name, MaxRunning: c.MaxRunning, RateN: c.Rate.N, RatePerMS: c.Rate.Per.Milliseconds(),
			Priority: c.Priority})
	}
	return out
}
