package rdb

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// The operators' reads: plain commands (no script writes anything here),
// each one method, so that the Inspector builds no key.

// Time returns the Redis server's time.
func (r *RDB) Time(ctx context.Context) (time.Time, error) { return r.c.Time(ctx).Result() }

// Wake tells the schedulers to look at their queues now (the wake channel);
// reason is the message, for whoever listens.
func (r *RDB) Wake(ctx context.Context, reason string) error {
	return r.c.Publish(ctx, r.k.Wake(), reason).Err()
}

// TaskRead is one task as an operator reads it: its hash (empty when there
// is none), its queue score (Queued false when it is not queued) and the
// value of its lock ("" when not held).
type TaskRead struct {
	Hash   map[string]string
	Next   int64
	Queued bool
	Lock   string
}

// ReadTasks reads the tasks named, in order, in one pipeline, and counts
// the runs in progress of each task (the fields of runs, and the members
// of an older release's running set; one of another type counts none: an
// error reply of one command, as a missing member's, fails nothing).
func (r *RDB) ReadTasks(ctx context.Context, names []string) ([]TaskRead, map[string]int, error) {
	type probe struct {
		hash  *redis.MapStringStringCmd
		score *redis.FloatCmd
		lock  *redis.StringCmd
	}
	var running, legacy *redis.StringSliceCmd
	probes, err := pipelined(ctx, r.c, nil, func(pipe redis.Pipeliner) []probe {
		ps := make([]probe, len(names))
		for i, n := range names {
			ps[i] = probe{pipe.HGetAll(ctx, r.k.Task(n)), pipe.ZScore(ctx, r.k.Queue(), n), pipe.Get(ctx, r.k.Lock(n))}
		}
		running = pipe.HKeys(ctx, r.k.Runs())
		legacy = pipe.SMembers(ctx, r.k.Running())
		return ps
	})
	if err != nil && !errors.Is(err, redis.Nil) && !IsReplyError(err) {
		return nil, nil, err
	}
	runs := map[string]int{}
	for _, id := range append(running.Val(), legacy.Val()...) {
		if task, _, ok := ParseRunID(id); ok {
			runs[task]++
		}
	}
	out := make([]TaskRead, len(names))
	for i, p := range probes {
		out[i].Hash = p.hash.Val()
		if score, err := p.score.Result(); err == nil {
			out[i].Next, out[i].Queued = int64(score), true
		}
		out[i].Lock, _ = p.lock.Result()
	}
	return out, runs, nil
}

// TypeClasses reads the classes of run-time task types from the classes
// hash (SetTasks writes it): type -> class, for the types it holds.
func (r *RDB) TypeClasses(ctx context.Context, types []string) (map[string]string, error) {
	vals, err := r.c.HMGet(ctx, r.k.Classes(), types...).Result()
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(types))
	for i, v := range vals {
		if s, ok := v.(string); ok {
			out[types[i]] = s
		}
	}
	return out, nil
}

// TaskSchedule returns the expression, zone and jitter of a task's hash
// ("" when absent; the error of a jitter field that does not parse names
// it).
func (r *RDB) TaskSchedule(ctx context.Context, key string) (expression, tz string, jitter time.Duration, err error) {
	vals, err := r.c.HMGet(ctx, r.k.Task(key), FieldExpression, FieldTZ, FieldJitter).Result()
	if err != nil {
		return "", "", 0, err
	}
	expression, _ = vals[0].(string)
	tz, _ = vals[1].(string)
	jitter, err = ParseJitter(key, vals[2])
	return expression, tz, jitter, err
}

// JobRef is a job id with its score: the due time of a pending job, the
// failure time of a dead one, the lease deadline of a running one (unix
// ms).
type JobRef struct {
	ID    string
	Score int64
}

// PendingJobs returns the pending jobs of ranks start to start+n-1, soonest
// due first.
func (r *RDB) PendingJobs(ctx context.Context, start, n int64) ([]JobRef, error) {
	zs, err := r.c.ZRangeWithScores(ctx, r.k.Jobs(), start, start+n-1).Result()
	return jobRefs(zs), err
}

// DeadJobRefs returns the dead jobs of ranks start to start+n-1 (n <= 0:
// all from start), most recent first.
func (r *RDB) DeadJobRefs(ctx context.Context, start, n int64) ([]JobRef, error) {
	stop := start + n - 1
	if n <= 0 {
		stop = -1
	}
	zs, err := r.c.ZRevRangeWithScores(ctx, r.k.Dead(), start, stop).Result()
	return jobRefs(zs), err
}

func jobRefs(zs []redis.Z) []JobRef {
	out := make([]JobRef, len(zs))
	for i, z := range zs {
		out[i].ID, _ = z.Member.(string)
		out[i].Score = int64(z.Score)
	}
	return out
}

// RunningJobs reads one HSCAN page (about n) of the jobs in flight, each
// scored by the lease deadline of the claim that delivered it, and the
// cursor of the next page (0 after the last).
func (r *RDB) RunningJobs(ctx context.Context, cursor uint64, n int64) ([]JobRef, uint64, error) {
	kv, next, err := r.c.HScan(ctx, r.k.Owners(), cursor, "", n).Result()
	if err != nil || len(kv) == 0 {
		return nil, next, err
	}
	claims := make([]string, 0, len(kv)/2)
	for i := 1; i < len(kv); i += 2 {
		claim, _ := ParseOwner(kv[i])
		claims = append(claims, claim)
	}
	leases, err := r.c.ZMScore(ctx, r.k.Leases(), claims...).Result()
	if err != nil {
		return nil, next, err
	}
	out := make([]JobRef, len(claims))
	for i := range claims {
		out[i] = JobRef{ID: kv[2*i], Score: int64(leases[i])}
	}
	return out, next, nil
}

// JobData is what is stored of one job: its envelope (OK false when it is
// gone: the job just finished), its past attempts and, in flight, its
// claim.
type JobData struct {
	Envelope string
	OK       bool
	Attempts int64
	Claim    string
}

// ReadJobData reads the stored data of jobs in one pipeline: from the dead
// letters when dead, else from jobs:data with their attempts (and their
// claims when running).
func (r *RDB) ReadJobData(ctx context.Context, ids []string, dead, running bool) ([]JobData, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var data, attempts, owners *redis.SliceCmd
	_, err := pipelined(ctx, r.c, nil, func(pipe redis.Pipeliner) struct{} {
		if dead {
			data = pipe.HMGet(ctx, r.k.DeadData(), ids...)
		} else {
			data = pipe.HMGet(ctx, r.k.JobData(), ids...)
			attempts = pipe.HMGet(ctx, r.k.Attempts(), ids...)
		}
		if running {
			owners = pipe.HMGet(ctx, r.k.Owners(), ids...)
		}
		return struct{}{}
	})
	if err != nil {
		return nil, err
	}
	out := make([]JobData, len(ids))
	for i := range ids {
		out[i].Envelope, out[i].OK = data.Val()[i].(string)
		if attempts != nil {
			out[i].Attempts = atoi(attempts.Val()[i])
		}
		if owners != nil {
			v, _ := owners.Val()[i].(string)
			out[i].Claim, _ = ParseOwner(v)
		}
	}
	return out, nil
}

// JobRead is one job wherever it is: pending (with its due time), in flight
// (its claim, the claim's lease deadline and the due it was claimed at) or
// dead (its dead letter). FirstDueMS is when a pending or running job was
// first due, when it was put back since (Keys.FirstDue); 0 when it was
// not (its due is its first), and for a dead job (its dead letter's
// "fire").
type JobRead struct {
	Pending, Running, Dead bool
	DueMS, LeaseMS         int64
	FirstDueMS             int64
	Envelope               string // the stored envelope, or the dead letter
	Attempts               int64  // attempts made before
	Claim                  string
}

// ReadJob reads one job. Found is false when there is none (it ran, was
// cancelled or never existed).
func (r *RDB) ReadJob(ctx context.Context, id string) (j JobRead, found bool, err error) {
	var pending, dead *redis.FloatCmd
	var data, deadData, attempt, owner, first *redis.StringCmd
	_, err = pipelined(ctx, r.c, nil, func(pipe redis.Pipeliner) struct{} {
		pending = pipe.ZScore(ctx, r.k.Jobs(), id)
		dead = pipe.ZScore(ctx, r.k.Dead(), id)
		data = pipe.HGet(ctx, r.k.JobData(), id)
		deadData = pipe.HGet(ctx, r.k.DeadData(), id)
		attempt = pipe.HGet(ctx, r.k.Attempts(), id)
		owner = pipe.HGet(ctx, r.k.Owners(), id)
		first = pipe.HGet(ctx, r.k.FirstDue(), id)
		return struct{}{}
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return JobRead{}, false, err
	}
	j.Attempts, _ = strconv.ParseInt(attempt.Val(), 10, 64)
	j.FirstDueMS, _ = strconv.ParseInt(first.Val(), 10, 64)
	switch {
	case pending.Err() == nil && data.Err() == nil:
		j.Pending, j.DueMS, j.Envelope = true, int64(pending.Val()), data.Val()
	case owner.Err() == nil && data.Err() == nil:
		j.Running, j.Envelope = true, data.Val()
		j.Claim, j.DueMS = ParseOwner(owner.Val())
		lease, err := r.c.ZScore(ctx, r.k.Leases(), j.Claim).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return JobRead{}, false, err
		}
		j.LeaseMS = int64(lease)
	case dead.Err() == nil && deadData.Err() == nil:
		j.Dead, j.Envelope, j.FirstDueMS = true, deadData.Val(), 0
	default:
		return JobRead{}, false, nil
	}
	return j, true, nil
}

// DeadLetter returns the stored dead letter of id; found is false when no
// dead job has it.
func (r *RDB) DeadLetter(ctx context.Context, id string) (env string, found bool, err error) {
	env, err = r.c.HGet(ctx, r.k.DeadData(), id).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	return env, err == nil, err
}

// ProcessRead is one process's heartbeat: its id, its last beat (unix ms)
// and its process hash.
type ProcessRead struct {
	ID     string
	BeatMS int64
	Hash   map[string]string
}

// ReadProcesses reads every process that has beaten and is not forgotten,
// most recent beat first, and the holder of lock:master.
func (r *RDB) ReadProcesses(ctx context.Context) ([]ProcessRead, string, error) {
	beats, err := r.c.ZRevRangeWithScores(ctx, r.k.Processes(), 0, -1).Result()
	if err != nil {
		return nil, "", err
	}
	var master *redis.StringCmd
	hashes, err := pipelined(ctx, r.c, nil, func(pipe redis.Pipeliner) []*redis.MapStringStringCmd {
		cmds := make([]*redis.MapStringStringCmd, len(beats))
		for i, b := range beats {
			id, _ := b.Member.(string)
			cmds[i] = pipe.HGetAll(ctx, r.k.Process(id))
		}
		master = pipe.Get(ctx, r.k.Master())
		return cmds
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, "", err
	}
	out := make([]ProcessRead, len(beats))
	for i, b := range beats {
		out[i].ID, _ = b.Member.(string)
		out[i].BeatMS = int64(b.Score)
		out[i].Hash = hashes[i].Val()
	}
	return out, master.Val(), nil
}

// Counts are the namespace's sizes at one instant.
type Counts struct {
	Tasks, Queued, Due, Running                 int64
	JobsPending, JobsDue, JobsRunning, JobsDead int64
	Processes                                   int64 // beaten since aliveSinceMS
	Repaired                                    map[string]int64
}

// ReadCounts counts, in one pipeline, the tasks (the queue's size plus the
// unqueued set's: every task is in one of them, see Keys.Unqueued; a task
// whose queue entry was lost counts again once the sweep finds it), what
// is queued, due at nowMS and running (the fields of runs, and the members
// of an older release's running set), the processes that beat since aliveSinceMS, and the sweep's
// repair counters.
func (r *RDB) ReadCounts(ctx context.Context, nowMS, aliveSinceMS int64) (Counts, error) {
	nowS, alive := strconv.FormatInt(nowMS, 10), strconv.FormatInt(aliveSinceMS, 10)
	var repaired *redis.MapStringStringCmd
	cmds, err := pipelined(ctx, r.c, nil, func(pipe redis.Pipeliner) []*redis.IntCmd {
		repaired = pipe.HGetAll(ctx, r.k.Sweep())
		return []*redis.IntCmd{
			pipe.SCard(ctx, r.k.Unqueued()),
			pipe.ZCard(ctx, r.k.Queue()),
			pipe.ZCount(ctx, r.k.Queue(), "-inf", nowS),
			pipe.HLen(ctx, r.k.Runs()),
			pipe.ZCard(ctx, r.k.Jobs()),
			pipe.ZCount(ctx, r.k.Jobs(), "-inf", nowS),
			pipe.HLen(ctx, r.k.Owners()),
			pipe.ZCard(ctx, r.k.Dead()),
			pipe.ZCount(ctx, r.k.Processes(), alive, "+inf"),
			pipe.SCard(ctx, r.k.Running()), // an older release's runs in progress
		}
	})
	if err != nil {
		return Counts{}, err
	}
	v := func(i int) int64 { return cmds[i].Val() }
	return Counts{Tasks: v(0) + v(1), Queued: v(1), Due: v(2), Running: v(3) + v(9),
		JobsPending: v(4), JobsDue: v(5), JobsRunning: v(6), JobsDead: v(7), Processes: v(8),
		Repaired: ParseRepairCounts(repaired.Val())}, nil
}

// RunTotals returns the run and failure totals of name: a task's from its
// hash, plus a job type's from the stats hash.
func (r *RDB) RunTotals(ctx context.Context, name string) (runs, failures int64, err error) {
	pipe := r.c.Pipeline()
	task := pipe.HMGet(ctx, r.k.Task(name), "runs", "failures")
	job := pipe.HMGet(ctx, r.k.Stats(), name+":runs", name+":failures")
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, 0, err
	}
	for _, vals := range [][]any{task.Val(), job.Val()} {
		runs += atoi(vals[0])
		failures += atoi(vals[1])
	}
	return runs, failures, nil
}

// History returns up to limit stored run records of a task or job type,
// newest first (limit <= 0: all that are kept).
func (r *RDB) History(ctx context.Context, name string, limit int) ([]string, error) {
	stop := int64(limit) - 1
	if limit <= 0 {
		stop = -1
	}
	return r.c.LRange(ctx, r.k.History(name), 0, stop).Result()
}

// atoi reads an integer reply value (a string, or nil for a missing one).
func atoi(v any) int64 {
	s, _ := v.(string)
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
