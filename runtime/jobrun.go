package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// jobRun is one claimed delivery of a job.
type jobRun struct {
	id      string
	due     time.Time
	attempt int
	env     envelope
	raw     string // the envelope as stored
	reg     *registered
}

// claimJobs claims up to limit due jobs and starts their handlers. It
// returns the sleep before the next job is due (0 when there may be more
// due now) and how many it started.
func (s *Scheduler) claimJobs(ctx context.Context, now time.Time, limit int) (time.Duration, int, error) {
	if limit <= 0 {
		return 0, 0, nil
	}
	res, err := claimJobsScript.Run(ctx, s.rdb,
		[]string{s.keys.jobs(), s.keys.jobData(), s.keys.attempts(), s.keys.inflight(), s.keys.owners()},
		limit, s.jobLease().Milliseconds(), s.id).Slice()
	if err != nil {
		return 0, 0, err
	}
	started := 0
	for i := 1; i+3 < len(res); i += 4 {
		id, _ := res[i].(string)
		dueStr, _ := res[i+1].(string)
		attempt, _ := res[i+2].(int64)
		raw, _ := res[i+3].(string)
		due, _ := strconv.ParseFloat(dueStr, 64)
		j := &jobRun{id: id, due: time.UnixMilli(int64(due)), attempt: int(attempt), raw: raw}
		if err := json.Unmarshal([]byte(raw), &j.env); err != nil || j.env.Task == "" {
			s.deadJob(ctx, j, fmt.Errorf("bad job envelope %q: %v", truncate(raw, 200), err))
			continue
		}
		if j.reg = s.reg.lookup(j.env.Task); j.reg == nil {
			s.releaseJob(ctx, j)
			continue
		}
		s.startJob(j)
		started++
	}
	claimed := (len(res) - 1) / 4
	if claimed == limit {
		return 0, started, nil
	}
	next := int64(-1)
	if f, ok := res[0].(string); ok {
		v, _ := strconv.ParseFloat(f, 64)
		next = int64(v)
	}
	return s.sleepFor(now, next), started, nil
}

// jobLease is how long a claimed job stays with its process without a
// renewal; maintenance renews it every heartbeat.
func (s *Scheduler) jobLease() time.Duration { return 2 * s.opts.processTTL }

// startJob runs j on a worker; the dispatch loop holds its slot.
func (s *Scheduler) startJob(j *jobRun) {
	s.mu.Lock()
	s.inflightJobs[j.id] = struct{}{}
	s.mu.Unlock()
	s.running.Add(1)
	go func() {
		defer s.running.Done()
		defer func() { s.slots <- struct{}{} }()
		s.executeJob(j)
		s.mu.Lock()
		delete(s.inflightJobs, j.id)
		s.mu.Unlock()
	}()
}

// executeJob decodes and runs one job, then acks it: done, retried with
// backoff, or dead-lettered.
func (s *Scheduler) executeJob(j *jobRun) {
	info := RunInfo{Task: j.env.Task, JobID: j.id, Fire: j.due, Attempt: j.attempt, Process: s.id}
	timeout := j.reg.cfg.Timeout
	ctx, cancel := context.WithTimeout(withRun(s.runCtx, info), timeout)
	defer cancel()
	start := s.clock.Now()
	var err error
	task := j.reg.cfg.New()
	if len(j.env.Payload) > 0 {
		if derr := json.Unmarshal(j.env.Payload, task); derr != nil {
			err = fmt.Errorf("decode payload into %s: %w", j.reg.cfg.Class, derr)
		}
	}
	if err == nil {
		if h := s.opts.hooks.BeforeExecute; h != nil {
			h(ctx, info)
		}
		err = s.call(ctx, info, task)
	}
	end := s.clock.Now()
	cost := end.Sub(start)
	rec := Record{Task: info.Task, JobID: j.id, Fire: j.due, Start: start, End: end, Outcome: OutcomeOK,
		Process: s.id, Attempt: j.attempt}
	action, due := "ok", int64(0)
	if err != nil {
		rec.Outcome, rec.Error = OutcomeFailed, err.Error()
		retries := j.reg.cfg.Retries
		if j.env.Retries != nil {
			retries = *j.env.Retries
		}
		if j.attempt <= retries {
			action, due = "retry", ms(end.Add(s.backoff(j.attempt)))
		} else {
			action = "dead"
		}
	}
	s.ackJob(j, action, due, rec)
	s.report(ctx, info, start, cost, err)
}

// backoff is the delay before retry number attempt: exponential from the
// base (WithRetryBackoff), capped at an hour, with ±20% jitter.
func (s *Scheduler) backoff(attempt int) time.Duration {
	d := s.opts.retryBackoff << min(attempt-1, 20)
	d = min(d, time.Hour)
	jitter := time.Duration((rand.Float64()*0.4 - 0.2) * float64(d))
	return d + jitter
}

// ackJob records the end of a delivery, retrying while Redis is away.
func (s *Scheduler) ackJob(j *jobRun, action string, due int64, rec Record) {
	deadEnv := ""
	if action == "dead" {
		env := j.env
		env.Error, env.Failed, env.Attempts = rec.Error, ms(rec.End), j.attempt
		b, _ := json.Marshal(env)
		deadEnv = string(b)
	}
	keys := []string{s.keys.jobs(), s.keys.jobData(), s.keys.attempts(), s.keys.inflight(), s.keys.owners(),
		s.keys.dead(), s.keys.deadData(), s.keys.stats(), s.keys.history(j.env.Task)}
	args := []any{j.id, s.id, action, due, deadEnv, s.opts.deadLetters, j.env.Task, rec.encode(),
		s.opts.historyLen, s.opts.historyAge.Milliseconds()}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	backoff := 50 * time.Millisecond
	for {
		n, err := ackJobScript.Run(ctx, s.rdb, keys, args...).Int()
		if err == nil {
			if n == 0 {
				s.log.Warn("job delivery was no longer ours (lease expired; delivered again)", "job", j.id, "task", j.env.Task)
			}
			if action == "dead" {
				s.log.Error("job failed for good; moved to the dead letters", "job", j.id, "task", j.env.Task,
					"attempts", j.attempt, "err", rec.Error)
			}
			return
		}
		if ctx.Err() != nil {
			s.log.Error("could not ack job; it will be delivered again", "job", j.id, "err", err)
			return
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, 2*time.Second)
	}
}

// releaseJob puts back a job whose type this process lacks, a little
// later, for a process that has it. It is never dropped.
func (s *Scheduler) releaseJob(ctx context.Context, j *jobRun) {
	if s.unknownJobTypes.seen(j.env.Task) {
		s.log.Warn("job type not registered in this process; left for a process that has it",
			"job", j.id, "task", j.env.Task)
	}
	due := ms(s.clock.Now().Add(s.opts.maxSleep * 5))
	err := ackJobScript.Run(ctx, s.rdb,
		[]string{s.keys.jobs(), s.keys.jobData(), s.keys.attempts(), s.keys.inflight(), s.keys.owners(),
			s.keys.dead(), s.keys.deadData(), s.keys.stats(), s.keys.history(j.env.Task)},
		j.id, s.id, "release", due, "", 0, j.env.Task, "", 0, 0).Err()
	if err != nil {
		s.log.Warn("could not put back a job of an unknown type; its lease will", "job", j.id, "err", err)
	}
}

// deadJob dead-letters a job that can never run (a corrupt envelope).
func (s *Scheduler) deadJob(ctx context.Context, j *jobRun, err error) {
	s.log.Error("bad job data; moved to the dead letters", "job", j.id, "err", err)
	j.env = envelope{Task: "?", Payload: json.RawMessage(strconv.Quote(j.raw))}
	now := s.clock.Now()
	s.ackJob(j, "dead", 0, Record{Task: "?", JobID: j.id, Fire: j.due, Start: now, End: now,
		Outcome: OutcomeFailed, Error: err.Error(), Process: s.id, Attempt: j.attempt})
}

// renewJobs extends the leases of this process's running jobs.
func (s *Scheduler) renewJobs(ctx context.Context) {
	s.mu.Lock()
	args := make([]any, 0, len(s.inflightJobs)+2)
	args = append(args, s.id, s.jobLease().Milliseconds())
	for id := range s.inflightJobs {
		args = append(args, id)
	}
	s.mu.Unlock()
	if len(args) == 2 {
		return
	}
	if err := renewJobsScript.Run(ctx, s.rdb, []string{s.keys.inflight(), s.keys.owners()}, args...).Err(); err != nil && ctx.Err() == nil {
		s.log.Warn("renewing job leases failed", "err", err)
	}
}

// redeliver puts jobs whose lease expired back in the queue (master duty).
func (s *Scheduler) redeliver(ctx context.Context) error {
	res, err := redeliverScript.Run(ctx, s.rdb, []string{s.keys.jobs(), s.keys.inflight(), s.keys.owners()}, 1000, s.dutyDeadline()).StringSlice()
	if err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	for i := 0; i+1 < len(res); i += 2 {
		s.log.Warn("job delivered again: its process died or stalled", "job", res[i], "process", res[i+1])
		if h := s.opts.hooks.Redelivered; h != nil {
			h(ctx, res[i], res[i+1])
		}
	}
	if len(res) > 0 {
		s.rdb.Publish(ctx, s.keys.wake(), "redeliver")
	}
	return nil
}

// report calls the hooks and listeners of a finished run.
func (s *Scheduler) report(ctx context.Context, info RunInfo, start time.Time, cost time.Duration, err error) {
	if err != nil {
		s.log.Warn("run failed", "task", info.Task, "job", info.JobID, "fire", info.Fire, "attempt", info.Attempt, "err", err)
		if h := s.opts.hooks.Failed; h != nil {
			h(ctx, info, err)
		}
	} else {
		s.log.Debug("run ok", "task", info.Task, "job", info.JobID, "fire", info.Fire, "cost", cost.String())
		if h := s.opts.hooks.Executed; h != nil {
			h(ctx, info, cost)
		}
	}
	res := Result{RunInfo: info, Start: start, Cost: cost, OK: err == nil, Err: err}
	for _, l := range s.opts.listeners {
		l.OnComplete(ctx, res)
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// onceSet reports the first sighting of each string, bounded.
type onceSet struct {
	m map[string]struct{}
}

func (o *onceSet) seen(k string) bool {
	if o.m == nil || len(o.m) > 1000 {
		o.m = make(map[string]struct{})
	}
	if _, ok := o.m[k]; ok {
		return false
	}
	o.m[k] = struct{}{}
	return true
}
