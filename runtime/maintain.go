package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// maintain runs the periodic duties of every process (heartbeat, lease
// renewal, clock sync, detecting that Redis lost its data) and, in the
// process holding lock:master, the duties done once per namespace
// (abandoned runs, re-queueing enabled tasks, pruning undeclared tasks,
// redelivering jobs, the invariant sweep of sweep.go).
func (s *Scheduler) maintain(ctx context.Context) {
	tick := time.NewTicker(s.opts.heartbeat)
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
		if time.Since(lastQuarantine) > 10*s.opts.heartbeat {
			lastQuarantine = time.Now()
			s.quarantine(ctx)
		}
		beat := time.Now()
		if err := s.heartbeat(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("heartbeat failed", "err", err)
			reloadTopology(s.rdb, err)
			contact.fail()
			continue
		}
		if broken := contact.ok(beat, time.Now(), s.opts.processTTL); broken > 0 {
			s.log.Warn("Redis answers again after an outage or a stall; judging other processes dead waits a process TTL",
				"outage", broken.Round(time.Millisecond).String(), "wait", s.opts.processTTL.String())
		}
		s.renew(ctx)
		s.renewJobs(ctx)
		s.giveBackWaiting(false)
		if time.Since(lastSync) > 10*time.Second {
			lastSync = time.Now()
			if err := s.clock.Sync(ctx, 3); err != nil {
				s.log.Warn("clock sync failed", "err", err)
			}
		}
		if time.Since(lastForget) > time.Minute {
			lastForget = time.Now()
			s.forgetIgnored()
		}
		if err := s.checkData(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("data check failed", "err", err)
		}
		if s.takeMaster(ctx) && contact.settled(time.Now(), s.opts.processTTL) {
			s.masterDuties(s.dutyContext(ctx))
		}
	}
}

// heartbeat tells the namespace this process is alive and what it runs.
func (s *Scheduler) heartbeat(ctx context.Context) error {
	now := ms(s.clock.Now())
	host, _ := os.Hostname()
	s.mu.Lock()
	running := len(s.inflight)
	s.mu.Unlock()
	pipe := s.rdb.Pipeline()
	pipe.ZAdd(ctx, s.keys.processes(), redis.Z{Score: float64(now), Member: s.id})
	pipe.HSet(ctx, s.keys.process(s.id), "host", host, "pid", os.Getpid(), "version", s.opts.version,
		"started", ms(s.start), "beat", now, "running", running, "tasks", len(s.reg.all()), "types", s.digest)
	pipe.PExpire(ctx, s.keys.process(s.id), 3*s.opts.processTTL)
	live := pipe.ZRangeByScore(ctx, s.keys.processes(), &redis.ZRangeBy{
		Min: strconv.FormatInt(now-s.opts.processTTL.Milliseconds(), 10), Max: "+inf"})
	_, err := pipe.Exec(ctx)
	if err != nil {
		return err
	}
	if err := s.refreshPeers(ctx, live.Val()); err != nil {
		return fmt.Errorf("reading the task types of live processes: %w", err)
	}
	return s.refreshDeclared(ctx, now)
}

// renew extends the locks and leases of this process's runs in progress.
func (s *Scheduler) renew(ctx context.Context) {
	runs := s.runsInFlight()
	if len(runs) == 0 {
		return
	}
	_, err := pipelined(ctx, s.rdb, []*redis.Script{renewScript}, func(pipe redis.Pipeliner) struct{} {
		for _, r := range runs {
			renewScript.EvalSha(ctx, pipe, []string{r.lockKey, r.runKey}, r.lockValue, r.lease, r.ttl.Milliseconds())
		}
		return struct{}{}
	})
	if err != nil && ctx.Err() == nil {
		s.log.Warn("renewing run leases failed", "err", err)
	}
}

// checkData re-registers the tasks when Redis lost its data (a restart
// without persistence, a flush): the meta key written at registration is
// gone. The locks of runs in progress are gone too: each process takes its
// own again, whether it finds the loss itself or sees that another process
// registered again (meta's created_at changed), and the tasks are scheduled
// from two heartbeats on, so every live process has its locks back before a
// task can fire beside a run that is still going.
func (s *Scheduler) checkData(ctx context.Context) error {
	created, err := s.rdb.HGet(ctx, s.keys.meta(), "created_at").Result()
	if err != nil && err != redis.Nil {
		return err
	}
	switch {
	case created != "" && (s.dataEpoch == "" || created == s.dataEpoch):
		s.dataEpoch = created
		return nil
	case created != "":
		s.log.Warn("namespace data was lost (Redis restarted empty or was flushed) and registered again by another process; taking the locks of running tasks again")
		s.dataEpoch = created
		s.retakeLocks(ctx)
		return nil
	case !s.hasSchedules():
		return nil // only job types: nothing to register
	}
	s.log.Warn("namespace data is gone (Redis restarted empty or was flushed); registering tasks again")
	s.retakeLocks(ctx)
	if err := s.registerFrom(ctx, s.clock.Now().Add(2*s.opts.heartbeat)); err != nil {
		return err
	}
	s.dataEpoch = "" // ours, or a process's that registered at the same time
	s.wake()
	return nil
}

// takeMaster takes or renews lock:master and reports whether this process
// holds it.
func (s *Scheduler) takeMaster(ctx context.Context) bool {
	ok, err := masterScript.Run(ctx, s.rdb, []string{s.keys.master()}, s.id, s.opts.processTTL.Milliseconds()).Int()
	held := err == nil && ok == 1
	s.mu.Lock()
	changed := held != s.isMaster
	s.isMaster = held
	s.mu.Unlock()
	if changed {
		s.log.Info("master role", "held", held)
	}
	return held
}

// masterDuties are done by one process per namespace at a time.
func (s *Scheduler) masterDuties(ctx context.Context) {
	for name, f := range map[string]func(context.Context) error{
		"reap abandoned runs": s.reap,
		"requeue tasks":       s.requeue,
		"prune tasks":         s.prune,
		"redeliver jobs":      s.redeliver,
		"invariant sweep":     s.sweep,
	} {
		if err := f(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn(name+" failed", "err", err)
		}
	}
}

// reap records runs whose process died as abandoned and frees their locks.
func (s *Scheduler) reap(ctx context.Context) error {
	ids, err := s.rdb.SMembers(ctx, s.keys.running()).Result()
	if err != nil || len(ids) == 0 {
		return err
	}
	leases, err := pipelined(ctx, s.rdb, nil, func(pipe redis.Pipeliner) []*redis.StringCmd {
		cmds := make([]*redis.StringCmd, len(ids))
		for i, id := range ids {
			cmds[i] = pipe.Get(ctx, s.keys.run(id))
		}
		return cmds
	})
	if err != nil && err != redis.Nil && !isReplyError(err) {
		return err
	}
	beats, err := s.rdb.ZRangeWithScores(ctx, s.keys.processes(), 0, -1).Result()
	if err != nil {
		return err
	}
	alive := make(map[string]bool, len(beats))
	deadline := float64(ms(s.clock.Now()) - s.opts.processTTL.Milliseconds())
	for _, b := range beats {
		alive[b.Member.(string)] = b.Score >= deadline
	}
	for i, id := range ids {
		lease, err := leases[i].Result()
		if isReplyError(err) {
			continue // a foreign value where the lease should be
		}
		var l struct {
			Process string `json:"process"`
			Task    string `json:"task"`
			Fire    int64  `json:"fire"`
		}
		if lease != "" && json.Unmarshal([]byte(lease), &l) != nil {
			// Not a lease this engine wrote: no process can renew it.
			s.log.Warn("run lease unreadable; recording the run abandoned", "run", id, "lease", truncate(lease, 100))
			l.Process = ""
		}
		if lease != "" && l.Task != "" {
			if alive[l.Process] {
				continue
			}
		} else {
			// The lease expired: recover task and fire from the run id.
			at := strings.LastIndexByte(id, '@')
			if at < 0 {
				continue
			}
			l.Task = id[:at]
			l.Fire, _ = strconv.ParseInt(id[at+1:], 10, 64)
			// The run's lock names its process: when that process is gone,
			// the lock is released with the run (else the sweep would find
			// it held for no run and record the run a second time).
			if v, err := s.rdb.Get(ctx, s.keys.lock(l.Task)).Result(); err == nil {
				if p, fire, _ := cutLast(v, "|"); fire == id[at+1:] && !alive[p] {
					l.Process = p
				}
			}
		}
		rec := Record{Task: l.Task, Fire: fromMS(l.Fire), Start: fromMS(l.Fire), End: s.clock.Now(),
			Outcome: OutcomeAbandoned, Error: "process " + l.Process + " died during the run", Process: l.Process, Attempt: 1}
		n, err := abandonScript.Run(ctx, s.rdb,
			[]string{s.keys.running(), s.keys.run(id), s.keys.lock(l.Task), s.keys.task(l.Task), s.keys.history(l.Task), s.keys.processes()},
			id, lease, l.Process+"|"+strconv.FormatInt(l.Fire, 10), l.Process, s.opts.processTTL.Milliseconds(),
			rec.encode(), s.opts.historyLen, s.opts.historyAge.Milliseconds(), s.dutyDeadline(ctx)).Int()
		if err != nil {
			return err
		}
		if n == 1 {
			s.log.Warn("run abandoned: its process died", "task", l.Task, "fire", fromMS(l.Fire), "process", l.Process)
			if lease == "" {
				s.countRepaired(ctx, RepairRunning, id) // a running entry without its lease (sweep.go)
			}
			if h := s.opts.hooks.Abandoned; h != nil {
				h(ctx, RunInfo{Task: l.Task, Fire: fromMS(l.Fire), Attempt: 1, Process: l.Process})
			}
			s.retryAbandoned(ctx, l.Task, id)
		}
	}
	return nil
}

// retryAbandoned re-runs an abandoned fire when its task has retries.
func (s *Scheduler) retryAbandoned(ctx context.Context, task, runID string) {
	vals, err := s.rdb.HMGet(ctx, s.keys.task(task), fieldType, fieldParams, fieldRetries).Result()
	if err != nil || len(vals) != 3 {
		return
	}
	typ, _ := vals[0].(string)
	params, _ := vals[1].(string)
	retries, _ := strconv.Atoi(fmt.Sprint(vals[2]))
	if typ != "" && retries > 0 {
		s.retryFire(typ, params, retries, runID)
	}
}

// requeue puts active and paused tasks that are not in the queue back in
// it at their next future instant: tasks an operator enabled again, and
// entries lost to bad data. It reads the queue scores of all tasks with
// ZMSCORE, a command per thousand tasks, and the hashes only of the tasks
// not queued, so a heartbeat costs little more than the task count.
func (s *Scheduler) requeue(ctx context.Context) error {
	members, err := s.rdb.SMembers(ctx, s.keys.tasks()).Result()
	if err != nil || len(members) == 0 {
		return err
	}
	var unqueued []string
	for chunk := range slices.Chunk(members, 1000) {
		args := make([]any, 0, len(chunk)+2)
		args = append(args, "ZMSCORE", s.keys.queue())
		for _, m := range chunk {
			args = append(args, m)
		}
		scores, err := s.rdb.Do(ctx, args...).Slice()
		if err != nil {
			return err
		}
		for i, m := range chunk {
			var score float64
			switch v := scores[i].(type) {
			case float64: // RESP3
				score = v
			case string: // RESP2
				if score, err = strconv.ParseFloat(v, 64); err != nil {
					continue
				}
			default: // nil: not queued
				unqueued = append(unqueued, m)
				continue
			}
			if absurdScore(score) {
				s.repairScore(ctx, m, score)
			}
		}
	}
	if len(unqueued) == 0 {
		return nil
	}
	members = unqueued
	states, err := pipelined(ctx, s.rdb, nil, func(pipe redis.Pipeliner) []*redis.SliceCmd {
		cmds := make([]*redis.SliceCmd, len(members))
		for i, m := range members {
			cmds[i] = pipe.HMGet(ctx, s.keys.task(m), taskStateFields...)
		}
		return cmds
	})
	if err != nil && err != redis.Nil && !isReplyError(err) {
		return err
	}
	now := s.clock.Now()
	for i, m := range members {
		if isReplyError(states[i].Err()) {
			continue // not a hash: the dispatcher logs it when it is due
		}
		vals := states[i].Val()
		if allNil(vals) {
			s.rdb.SRem(ctx, s.keys.tasks(), m)
			continue
		}
		st, err := parseTaskState(m, vals)
		if err != nil || (st.status != StatusActive && st.status != StatusPaused) || st.expression == "" {
			continue
		}
		sched, err := s.cache.get(st.expression, st.tz)
		if err != nil {
			continue
		}
		next := ms(sched.Next(now))
		if next == 0 {
			continue
		}
		n, err := requeueScript.Run(ctx, s.rdb, []string{s.keys.task(m), s.keys.queue()}, m, next).Int()
		if err != nil {
			return err
		}
		if n == 1 {
			s.log.Info("task back in the queue", "task", m, "status", st.status, "next", fromMS(next))
			s.rdb.Publish(ctx, s.keys.wake(), "requeue")
		}
	}
	return nil
}

// prune removes static tasks that no live process has declared for a
// while: tasks deleted from the code, once every process of the builds
// that declared them is gone. Run-time tasks are never pruned.
func (s *Scheduler) prune(ctx context.Context) error {
	grace := 3 * s.opts.processTTL
	cutoff := strconv.FormatInt(ms(s.clock.Now())-grace.Milliseconds(), 10)
	stale, err := s.rdb.ZRangeByScore(ctx, s.keys.declared(), &redis.ZRangeBy{Min: "-inf", Max: "(" + cutoff}).Result()
	if err != nil {
		return err
	}
	for _, m := range stale {
		n, err := pruneScript.Run(ctx, s.rdb, []string{s.keys.task(m), s.keys.queue(), s.keys.tasks(), s.keys.declared()},
			m, grace.Milliseconds(), s.dutyDeadline(ctx)).Int()
		if err != nil {
			return err
		}
		if n == 1 {
			s.log.Info("task removed: no running build declares it", "task", m)
		}
	}
	// Forget processes that have been silent for long.
	old := strconv.FormatInt(ms(s.clock.Now())-(10*s.opts.processTTL).Milliseconds(), 10)
	return s.rdb.ZRemRangeByScore(ctx, s.keys.processes(), "-inf", "("+old).Err()
}
