package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

func TestAdminListTasksAndStatus(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	var log fireLog
	fast, slow := t.Name()+"/fast", t.Name()+"/slow"
	behave(t, fast, func(ctx context.Context) error { log.add(ctx); return nil })
	behave(t, slow, func(ctx context.Context) error { return nil })
	reg := testRegistry(t,
		TaskConfig{Name: fast, Expression: "every:1s", New: probeNew(0)},
		TaskConfig{Name: slow, Expression: "daily:03:00", TZ: "Europe/Berlin", Status: StatusPaused, Timeout: time.Minute, New: probeNew(1)},
		TaskConfig{Name: "sms", New: func() TaskInterface { return new(smsJob) }},
	)
	runScheduler(t, rdb, reg, WithVersion("v1.2.3"))
	c := NewClient(rdb, nil, WithProcessTTL(time.Second))
	if err := NewClient(rdb, reg).SetTask(ctx, TaskSpec{Key: "dyn", Type: "sms", Params: smsJob{To: t.Name(), Text: "x"}, Expression: "every:1h"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 4*time.Second, "two runs recorded", func() bool {
		ti, err := c.inspect().Task(ctx, fast)
		return err == nil && ti.Runs >= 2
	})

	tasks, err := c.inspect().ListTasks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ti := range tasks {
		names = append(names, ti.Name)
	}
	if len(names) != 3 || !slices.IsSorted(names) {
		t.Fatalf("tasks %q, want %q, %q and dyn, sorted", names, fast, slow)
	}
	byName := map[string]TaskInfo{}
	for _, ti := range tasks {
		byName[ti.Name] = ti
	}
	now := time.Now()
	f := byName[fast]
	if f.Status != StatusActive || f.Expression != "every:1s" || f.TZ != "UTC" || f.Source != SourceStatic ||
		f.Type != fast || f.LastOutcome != OutcomeOK || f.Runs < 1 || f.Failures != 0 || f.Interval == "" ||
		f.Next.Before(now.Add(-time.Second)) || f.Next.After(now.Add(2*time.Second)) || f.Last.IsZero() ||
		f.Timeout != DefaultTimeout || f.Concurrent || f.Misfire != MisfireOnce || f.Created.IsZero() {
		t.Errorf("fast task %+v", f)
	}
	s := byName[slow]
	if s.Status != StatusPaused || s.TZ != "Europe/Berlin" || s.Timeout != time.Minute || s.Next.IsZero() || s.Runs != 0 || s.LastOutcome != "" {
		t.Errorf("slow task %+v", s)
	}
	d := byName["dyn"]
	if d.Source != SourceDynamic || d.Status != StatusActive || d.Type != "sms" || !strings.Contains(string(d.Params), `"text":"x"`) {
		t.Errorf("dynamic task %+v", d)
	}
	// Its hash stores neither status (active) nor source (a run-time
	// task): the Inspector and the status filter read them so.
	if page, err := c.inspect().TaskPage(ctx, TaskQuery{Status: StatusActive, Match: "dyn"}); err != nil || len(page.Tasks) != 1 || page.Tasks[0].Name != "dyn" {
		t.Errorf("page of active tasks matching dyn: %+v, %v", page, err)
	}
	if _, err := c.inspect().Task(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Task(nope): %v", err)
	}

	// Disable: out of the queue at once, no fires.
	if err := c.inspect().Disable(ctx, fast); err != nil {
		t.Fatal(err)
	}
	if ti, _ := c.inspect().Task(ctx, fast); ti.Status != StatusDisabled || !ti.Next.IsZero() {
		t.Errorf("after Disable: %+v", ti)
	}
	// No instant after the Disable runs (one claimed before may still run).
	disabledAt := time.Now()
	time.Sleep(1500 * time.Millisecond)
	for _, f := range log.snapshot() {
		if f.fire.After(disabledAt) {
			t.Errorf("disabled task fired instant %v (disabled at %v)", f.fire, disabledAt)
		}
	}
	n := len(log.snapshot())
	// Enable: queued at once at the next future instant, fires again.
	before := time.Now()
	if err := c.inspect().Enable(ctx, fast); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	ti, _ := c.inspect().Task(ctx, fast)
	if next := ti.Next; ti.Status != StatusActive || !next.Equal(next.Truncate(time.Second)) || !next.After(before) || next.After(after.Add(time.Second)) {
		t.Errorf("after Enable: status %s next %v; want the first whole second after it was enabled, between %v and %v",
			ti.Status, ti.Next, before, after)
	}
	waitFor(t, 3*time.Second, "a fire after Enable", func() bool { return len(log.snapshot()) > n })
	// Pause: stays queued, skips counted.
	if err := c.inspect().Pause(ctx, fast); err != nil {
		t.Fatal(err)
	}
	skips := ti.Skips
	waitFor(t, 3*time.Second, "a skipped fire", func() bool {
		ti, _ := c.inspect().Task(ctx, fast)
		return ti.Skips > skips && !ti.Next.IsZero()
	})
	if err := c.inspect().Resume(ctx, fast); err != nil {
		t.Fatal(err)
	}
	n = len(log.snapshot())
	waitFor(t, 3*time.Second, "a fire after Resume", func() bool { return len(log.snapshot()) > n })

	for _, err := range []error{c.inspect().Pause(ctx, "nope"), c.inspect().Resume(ctx, "nope"), c.inspect().Disable(ctx, "nope"), c.inspect().Enable(ctx, "nope")} {
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("status change of a missing task: %v", err)
		}
	}
	if exists, _ := rdb.Exists(ctx, newKeys("crontab").Task("nope")).Result(); exists != 0 {
		t.Error("a status change created a hash for a missing task")
	}
	if err := c.inspect().SetStatus(ctx, fast, "sleepy"); err == nil {
		t.Error("SetStatus accepted a bad status")
	}
}

func TestAdminTriggerRunsOnceWithoutMovingTheSchedule(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	var log fireLog
	release := make(chan struct{})
	var blocking atomic.Bool
	name, other := t.Name(), t.Name()+"/hourly"
	behave(t, name, func(ctx context.Context) error {
		log.add(ctx)
		if blocking.Load() {
			<-release
		}
		return nil
	})
	behave(t, other, func(ctx context.Context) error { log.add(ctx); return nil })
	reg := testRegistry(t,
		TaskConfig{Name: name, Expression: "cron:0 3 * * *", New: probeNew(0)},
		TaskConfig{Name: other, Expression: "every:1h", New: probeNew(1)},
		TaskConfig{Name: "sms", New: func() TaskInterface { return new(smsJob) }},
	)
	runScheduler(t, rdb, reg)
	runScheduler(t, rdb, reg)
	c := NewClient(rdb, reg)
	before, err := c.inspect().Task(ctx, name)
	if err != nil {
		t.Fatal(err)
	}

	at, err := c.inspect().Trigger(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Second, "the triggered run", func() bool { return len(log.snapshot()) == 1 })
	time.Sleep(500 * time.Millisecond)
	fires := log.snapshot()
	if len(fires) != 1 || !fires[0].fire.Equal(at) {
		t.Fatalf("fires %+v, want one at %v", fires, at)
	}
	if lag := fires[0].start.Sub(at); lag > 3*time.Second { // generous: CI machines are shared
		t.Errorf("triggered run started %v after the trigger", lag)
	}
	after, _ := c.inspect().Task(ctx, name)
	if !after.Next.Equal(before.Next) || after.Runs != 1 || after.LastOutcome != OutcomeOK {
		t.Errorf("after trigger: next %v (was %v), runs %d, outcome %q", after.Next, before.Next, after.Runs, after.LastOutcome)
	}
	if next := hget(t, rdb, name, "next_run"); next != itoa(before.Next.UnixMilli()) {
		t.Errorf("next_run %s, want %d", next, before.Next.UnixMilli())
	}
	hist, _ := c.inspect().History(ctx, name, 10)
	if len(hist) != 1 || hist[0].Outcome != OutcomeOK || !hist[0].Fire.Equal(at) {
		t.Errorf("history %+v", hist)
	}

	// A non-concurrent task that runs is not triggered again.
	blocking.Store(true)
	if _, err := c.inspect().Trigger(ctx, name); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Second, "the second triggered run", func() bool { return len(log.snapshot()) == 2 })
	if _, err := c.inspect().Trigger(ctx, name); !errors.Is(err, ErrRunning) {
		t.Errorf("trigger while running: %v", err)
	}
	close(release)
	waitFor(t, 3*time.Second, "the lock to be released", func() bool {
		ti, _ := c.inspect().Task(ctx, name)
		return ti.LockedBy == "" && ti.Runs == 2
	})

	// Two triggers in a row make one run: the second finds it due, or,
	// when the first's run started in between, running (ErrRunning).
	blocking.Store(false)
	n := len(log.snapshot())
	a1, err1 := c.inspect().Trigger(ctx, other)
	a2, err2 := c.inspect().Trigger(ctx, other)
	if err1 != nil || (err2 != nil && !errors.Is(err2, ErrRunning)) {
		t.Fatal(err1, err2)
	}
	if err2 != nil {
		a2 = a1 // refused: the one run is the first's
	}
	waitFor(t, 3*time.Second, "the run", func() bool { return len(log.snapshot()) > n })
	time.Sleep(300 * time.Millisecond)
	if m := len(log.snapshot()); m != n+1 && !(m == n+2 && !a1.Equal(a2)) {
		t.Errorf("two quick triggers made %d runs (at %v and %v)", m-n, a1, a2)
	}

	if err := c.inspect().Pause(ctx, other); err != nil {
		t.Fatal(err)
	}
	if _, err := c.inspect().Trigger(ctx, other); !errors.Is(err, ErrNotActive) {
		t.Errorf("trigger of a paused task: %v", err)
	}
	if _, err := c.inspect().Trigger(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("trigger of a missing task: %v", err)
	}

	// A run-time task runs with its parameters.
	to := t.Name() + newJobID() // unique across -count runs
	if err := c.SetTask(ctx, TaskSpec{Key: "dyn", Type: "sms", Params: smsJob{To: to, Text: "p"}, Expression: "daily:03:00"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.inspect().Trigger(ctx, "dyn"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Second, "the run-time task's run", func() bool { return len(smsRuns(to)) == 1 })
	if r := smsRuns(to)[0]; r.job.Text != "p" || r.run.Task != "dyn" {
		t.Errorf("run %+v", r)
	}
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestAdminJobs(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	release := make(chan struct{})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	blockName := t.Name() + "/block"
	behave(t, blockName, func(ctx context.Context) error { <-release; return nil })
	reg := testRegistry(t,
		TaskConfig{Name: "sms", New: func() TaskInterface { return new(smsJob) }},
		TaskConfig{Name: blockName, New: probeNew(0)},
	)
	c := NewClient(rdb, reg)
	to := unique(t)
	later, err := c.Enqueue(ctx, smsJob{To: to, Text: "later"}, In(time.Hour), MaxRetries(2))
	if err != nil {
		t.Fatal(err)
	}
	soon, _ := c.Enqueue(ctx, smsJob{To: to, Text: "soon"}, In(30*time.Minute))
	block, _ := c.EnqueueRaw(ctx, blockName, nil)
	dead, _ := c.Enqueue(ctx, smsJob{To: to, Text: "fail"})
	runScheduler(t, rdb, reg)
	waitFor(t, 5*time.Second, "one running and one dead job", func() bool {
		js, _ := c.inspect().Jobs(ctx, JobFilter{})
		var running, isDead bool
		for _, j := range js {
			running = running || (j.ID == block && j.State == JobRunning)
			isDead = isDead || (j.ID == dead && j.State == JobDead)
		}
		return running && isDead
	})

	pending, err := c.inspect().Jobs(ctx, JobFilter{State: JobPending})
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 2 || pending[0].ID != soon || pending[1].ID != later || pending[1].Retries != 2 || pending[0].Retries != -1 ||
		pending[0].Task != "sms" || !strings.Contains(string(pending[0].Payload), `"soon"`) || pending[0].Due.Before(time.Now().Add(29*time.Minute)) {
		t.Errorf("pending %+v", pending)
	}
	running, _ := c.inspect().Jobs(ctx, JobFilter{State: JobRunning})
	if len(running) != 1 || running[0].ID != block || running[0].Owner == "" || running[0].Attempts != 1 || running[0].LeaseUntil.IsZero() {
		t.Errorf("running %+v", running)
	}
	deadJobs, _ := c.inspect().Jobs(ctx, JobFilter{State: JobDead, Task: "sms"})
	if len(deadJobs) != 1 || deadJobs[0].ID != dead || deadJobs[0].Error != "gateway down" || deadJobs[0].Failed.IsZero() || deadJobs[0].Attempts != 1 {
		t.Errorf("dead %+v", deadJobs)
	}
	if js, _ := c.inspect().Jobs(ctx, JobFilter{Task: blockName}); len(js) != 1 || js[0].ID != block {
		t.Errorf("jobs of %s: %+v", blockName, js)
	}
	if js, _ := c.inspect().Jobs(ctx, JobFilter{Limit: 1}); len(js) != 3 {
		t.Errorf("limit 1 of each state: %d jobs", len(js))
	}
	if _, err := c.inspect().Jobs(ctx, JobFilter{State: "lost"}); err == nil {
		t.Error("a bad state was accepted")
	}
	for id, want := range map[string]JobState{later: JobPending, block: JobRunning, dead: JobDead} {
		j, err := c.inspect().Job(ctx, id)
		if err != nil || j.State != want || j.ID != id {
			t.Errorf("Job(%s) = %+v, %v; want %s", id, j, err, want)
		}
	}
	if _, err := c.inspect().Job(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Job(nope): %v", err)
	}

	ov, err := c.inspect().Overview(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ov.JobsPending != 2 || ov.JobsDue != 0 || ov.JobsRunning != 1 || ov.JobsDead != 1 || ov.Processes != 1 || ov.Now.IsZero() {
		t.Errorf("overview %+v", ov)
	}

	if err := c.Cancel(ctx, later); err != nil {
		t.Fatal(err)
	}
	if _, err := c.inspect().Job(ctx, later); !errors.Is(err, ErrNotFound) {
		t.Errorf("cancelled job: %v", err)
	}
	close(release)
	if err := c.inspect().RetryDead(ctx, dead); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the retried job to die again", func() bool {
		j, err := c.inspect().Job(ctx, dead)
		return err == nil && j.State == JobDead
	})
}

func TestAdminProcessesAndHooks(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	name := t.Name()
	behave(t, name, func(ctx context.Context) error { return nil })
	reg := testRegistry(t, TaskConfig{Name: name, Expression: "daily:03:00", New: probeNew(0)})
	abandoned := make(chan RunInfo, 1)
	redelivered := make(chan [2]string, 1)
	hooks := Hooks{
		Abandoned:   func(_ context.Context, run RunInfo) { abandoned <- run },
		Redelivered: func(_ context.Context, id, process string) { redelivered <- [2]string{id, process} },
	}
	runScheduler(t, rdb, reg, WithVersion("v9"), WithProcessID("one"), WithHooks(hooks))
	runScheduler(t, rdb, reg, WithVersion("v9"), WithProcessID("two"), WithHooks(hooks))
	c := NewClient(rdb, nil, WithProcessTTL(time.Second))
	waitFor(t, 5*time.Second, "a master", func() bool {
		ps, _ := c.inspect().Processes(ctx)
		return len(ps) == 2 && (ps[0].Master || ps[1].Master)
	})
	ps, err := c.inspect().Processes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if !p.Alive || p.Version != "v9" || p.PID == 0 || p.Host == "" || p.Started.IsZero() || p.LastBeat.Before(p.Started) || p.Tasks != 1 {
			t.Errorf("process %+v", p)
		}
	}
	if ps[0].Master == ps[1].Master {
		t.Errorf("masters: %v %v", ps[0].Master, ps[1].Master)
	}

	// A dead process's heartbeat is listed as not alive.
	k := newKeys("crontab")
	rdb.ZAdd(ctx, k.Processes(), redisZ(time.Now().Add(-3*time.Second).UnixMilli(), "ghost"))
	rdb.HSet(ctx, k.Process("ghost"), "host", "h", "pid", 7)
	ps, _ = c.inspect().Processes(ctx)
	if len(ps) != 3 || ps[2].ID != "ghost" || ps[2].Alive || ps[2].PID != 7 {
		t.Errorf("processes with a ghost: %+v", ps)
	}

	// The ghost's run is abandoned and its job redelivered, by the master.
	fire := time.Now().Add(-time.Minute).UnixMilli()
	runID := name + "@" + itoa(fire)
	rdb.HSet(ctx, k.Runs(), runID, leaseValue("ghost", name, fire, fire))
	rdb.HSet(ctx, k.JobData(), "j1", `{"task":"unknown type"}`)
	rdb.ZAdd(ctx, k.Leases(), redisZ(time.Now().Add(-time.Second).UnixMilli(), "ghost#1"))
	rdb.HSet(ctx, k.Owners(), "j1", "ghost#1")
	select {
	case run := <-abandoned:
		if run.Task != name || run.Process != "ghost" || run.Fire.UnixMilli() != fire {
			t.Errorf("abandoned %+v", run)
		}
	case <-time.After(5 * time.Second):
		t.Error("no Abandoned hook call")
	}
	select {
	case r := <-redelivered:
		if r != [2]string{"j1", "ghost"} {
			t.Errorf("redelivered %v", r)
		}
	case <-time.After(5 * time.Second):
		t.Error("no Redelivered hook call")
	}
}
