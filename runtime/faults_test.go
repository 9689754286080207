package runtime

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

// sleeperJob is a job type that runs for a while, so a fault can hit it
// mid-run.
type sleeperJob struct {
	Sleep time.Duration `json:"sleep"`
}

// sleeperSpans receives the spans of sleeper jobs, by test (the job's
// registered name is the test's name).
var sleeperSpans = newSpanLog()

func (j sleeperJob) Handle(ctx context.Context) error { return sleeperSpans.run(ctx, j.Sleep) }

// faultRig is two schedulers on one private server, running an every:1s
// task (tick), a non-concurrent every:1s task that runs for 2.5s (slow)
// and a 3s job (sleeper), for tests that break Redis under them.
type faultRig struct {
	srv   *redistest.Server
	sched *Scheduler
	fires fireLog
	spans *spanLog
	logs  *logCapture
	tick  string
	slow  string
	job   string
}

func newFaultRig(t *testing.T, srv *redistest.Server) *faultRig {
	t.Helper()
	r := &faultRig{srv: srv, spans: newSpanLog(), tick: t.Name() + "/tick", slow: t.Name() + "/slow", job: t.Name() + "/sleeper-" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	behave(t, r.tick, func(ctx context.Context) error { r.fires.add(ctx); return nil })
	behave(t, r.slow, func(ctx context.Context) error { return r.spans.run(ctx, 2500*time.Millisecond) })
	reg := testRegistry(t,
		TaskConfig{Name: r.tick, Expression: "every:1s", New: probeNew(0)},
		TaskConfig{Name: r.slow, Expression: "every:1s", Timeout: 20 * time.Second, New: probeNew(1)},
		TaskConfig{Name: r.job, Timeout: 20 * time.Second, New: func() TaskInterface { return new(sleeperJob) }})
	logs, logger := newLogCapture()
	r.logs = logs
	rdb := srv.Client(t)
	r.sched, _ = runScheduler(t, rdb, reg, WithLogger(logger))
	runScheduler(t, rdb, reg, WithLogger(logger))
	return r
}

// startFaultLoad waits until the slow task and the sleeper job both run,
// so the fault hits them mid-run.
func (r *faultRig) startFaultLoad(t *testing.T) {
	t.Helper()
	rdb := r.srv.Client(t)
	if _, err := NewClient(rdb, nil).EnqueueRaw(context.Background(), r.job, []byte(`{"sleep":3000000000}`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the slow task and the sleeper job to run", func() bool {
		r.spans.mu.Lock()
		slow := r.spans.running[r.slow]
		r.spans.mu.Unlock()
		sleeperSpans.mu.Lock()
		job := sleeperSpans.running[r.job]
		sleeperSpans.mu.Unlock()
		return slow > 0 && job > 0 && len(r.fires.snapshot()) >= 2
	})
}

// check waits until the tick fires after recovered and the slow task ran
// again, then checks the guarantees: no instant fired twice, no two runs of
// the slow task overlapped, the sleeper job started once (counted after a
// job lease, when a second delivery would show). It returns the time
// from recovered to the first fire after it, and the tick's missed
// instants and how many of them the history records as skipped.
func (r *faultRig) check(t *testing.T, fault string, recovered time.Time) (time.Duration, string) {
	t.Helper()
	waitFor(t, 20*time.Second, "a fire after "+fault, func() bool {
		return !firstStartAfter(r.fires.snapshot(), recovered).IsZero()
	})
	first := firstStartAfter(r.fires.snapshot(), recovered)
	waitFor(t, 20*time.Second, "a run of the slow task after "+fault, func() bool {
		for _, sp := range r.spans.snapshot() {
			if sp.start.After(recovered) {
				return true
			}
		}
		return false
	})
	waitFor(t, 20*time.Second, "the sleeper job to end", func() bool {
		return len(spansOf(sleeperSpans, r.job)) >= 1
	})
	waitFor(t, 20*time.Second, "two fires after "+fault, func() bool {
		after := 0
		for _, f := range r.fires.snapshot() {
			if f.start.After(recovered) {
				after++
			}
		}
		return after >= 2
	})
	// A second delivery of the job, were its lease lost, would start a
	// lease after the lease's last renewal (at the latest the job's end), at
	// a round of the master's duties: wait that out before counting.
	jobEnd := spansOf(sleeperSpans, r.job)[0].end
	time.Sleep(time.Until(jobEnd.Add(r.sched.jobs.jobLease() + 2*r.sched.opts.heartbeat + 500*time.Millisecond)))
	fires := r.fires.snapshot()
	for _, task := range []string{r.tick, r.slow} {
		if hget(t, r.srv.Client(t), task, "expression") == "" {
			t.Errorf("%s: task %s is gone from Redis", fault, task)
		}
	}
	if d := duplicates(fires); len(d) > 0 {
		t.Errorf("%s: instants fired more than once: %v", fault, d)
	}
	if o := r.spans.overlaps(); len(o) > 0 {
		// What both processes logged of the task (claims skipped, runs,
		// leases, the data checks), to tell how the second run got its lock.
		l := r.logs.lines(r.slow)
		l = append(l, r.logs.lines("namespace data")...)
		t.Errorf("%s: runs of the non-concurrent task overlapped: %v\nthe task's log:\n%s", fault, o, strings.Join(l, "\n"))
	}
	if n := sleeperSpans.startsOf(r.job); n != 1 {
		t.Errorf("%s: the job running during the fault started %d times, want once", fault, n)
	}
	// A missed instant is one the misfire rules dropped or a fire that was
	// skipped and recorded (a catch-up fire that found the previous
	// catch-up still holding the lock); none is lost silently.
	skipped := historyOutcomes(t, r.sched, r.tick)[OutcomeSkipped]
	return first.Sub(recovered), fmt.Sprintf("%d instants missed (%d recorded as skipped)", missed(fires), skipped)
}

// spansOf returns l's spans of task.
func spansOf(l *spanLog, task string) []span {
	var out []span
	for _, sp := range l.snapshot() {
		if sp.task == task {
			out = append(out, sp)
		}
	}
	return out
}

// noAbandoned fails t when a run was recorded abandoned: no process died,
// so a Redis outage must not be mistaken for dead processes.
func (r *faultRig) noAbandoned(t *testing.T, fault string) {
	t.Helper()
	if oc := historyOutcomes(t, r.sched, r.slow); oc[OutcomeAbandoned] > 0 {
		t.Errorf("%s: %d runs recorded abandoned though every process lived (history %v)", fault, oc[OutcomeAbandoned], oc)
	}
	if l := r.logs.lines("run abandoned"); len(l) > 0 {
		t.Errorf("%s: logged %s", fault, strings.Join(l, "\n"))
	}
	if l := r.logs.lines("job delivered again"); len(l) > 0 {
		t.Errorf("%s: logged %s", fault, strings.Join(l, "\n"))
	}
}

// TestFaultRedisRestartedEmpty kills Redis (no persistence) while a
// non-concurrent task and a job run, and starts it again empty: the
// schedulers notice, register their tasks again and keep firing; nothing
// fires twice and the task's runs never overlap, though its lock was lost.
func TestFaultRedisRestartedEmpty(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	r := newFaultRig(t, srv)
	r.startFaultLoad(t)
	srv.Kill()
	srv.Restart(t)
	restarted := time.Now()
	rec, miss := r.check(t, "Redis restarted empty", restarted)
	r.logs.expectLog(t, "namespace data is gone")
	t.Logf("Redis restarted empty: first fire %v after the restart; %s; 0 duplicates, 0 overlaps",
		rec.Round(time.Millisecond), miss)
}

// TestFaultRedisRestartedWithAOF kills Redis (appendfsync always) while a
// non-concurrent task and a job run, keeps it down for 2s (twice the
// process TTL) and starts it again from its AOF: firing resumes, nothing
// fires twice, the runs in progress are neither abandoned nor delivered
// again, and the outage is logged.
func TestFaultRedisRestartedWithAOF(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.WithAOF())
	r := newFaultRig(t, srv)
	r.startFaultLoad(t)
	srv.Kill()
	down := time.Now()
	time.Sleep(2 * time.Second)
	srv.Restart(t)
	restarted := time.Now()
	rec, miss := r.check(t, "Redis restarted with AOF", restarted)
	r.noAbandoned(t, "Redis restarted with AOF")
	r.logs.expectLog(t, "Redis answers again after an outage or a stall")
	t.Logf("Redis down %v, restarted with AOF: first fire %v after the restart; %s; 0 duplicates, 0 overlaps",
		restarted.Sub(down).Round(time.Millisecond), rec.Round(time.Millisecond), miss)
}

// TestFaultRedisPaused stops Redis (SIGSTOP) for 4s, longer than the
// process TTL (1s), the job lease (2s) and go-redis's read timeout (3s),
// while a non-concurrent task and a job run: after SIGCONT nothing fires
// twice, the runs in progress are neither abandoned nor delivered again,
// and the stall is logged.
func TestFaultRedisPaused(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	r := newFaultRig(t, srv)
	r.startFaultLoad(t)
	srv.Pause()
	time.Sleep(4 * time.Second)
	srv.Resume()
	resumed := time.Now()
	rec, miss := r.check(t, "Redis paused", resumed)
	r.noAbandoned(t, "Redis paused")
	r.logs.expectLog(t, "Redis answers again after an outage or a stall")
	t.Logf("Redis paused 4s: first fire %v after SIGCONT; %s; 0 duplicates, 0 overlaps",
		rec.Round(time.Millisecond), miss)
}
