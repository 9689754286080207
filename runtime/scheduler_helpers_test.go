package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	rdbpkg "github.com/gocrontab/crontab/internal/rdb"
	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/testio"
)

// behaviours maps a task name to what its probe handler does; test task
// names are unique per test.
var behaviours sync.Map // string -> func(context.Context) error

// probeTask[M] is a task type whose Handle runs the behaviour registered
// under the run's task name. Each marker M makes a distinct type, as a
// registry wants one type per task.
type probeTask[M any] struct{}

func (probeTask[M]) Handle(ctx context.Context) error {
	fn, ok := behaviours.Load(TaskName(ctx))
	if !ok {
		return fmt.Errorf("no behaviour for %q", TaskName(ctx))
	}
	return fn.(func(context.Context) error)(ctx)
}

type (
	m0 struct{}
	m1 struct{}
	m2 struct{}
	m3 struct{}
	m4 struct{}
)

// probeNew returns the New func of the i-th distinct probe type.
func probeNew(i int) func() TaskInterface {
	switch i {
	case 0:
		return func() TaskInterface { return new(probeTask[m0]) }
	case 1:
		return func() TaskInterface { return new(probeTask[m1]) }
	case 2:
		return func() TaskInterface { return new(probeTask[m2]) }
	case 3:
		return func() TaskInterface { return new(probeTask[m3]) }
	case 4:
		return func() TaskInterface { return new(probeTask[m4]) }
	}
	panic("probeNew: no such probe type")
}

// fireLog collects the fires seen by probe handlers.
type fireLog struct {
	mu    sync.Mutex
	fires []seenFire
}

type seenFire struct {
	task    string
	fire    time.Time
	start   time.Time
	process string
}

func (l *fireLog) add(ctx context.Context) {
	run, _ := Run(ctx)
	l.mu.Lock()
	l.fires = append(l.fires, seenFire{task: run.Task, fire: run.Fire, start: time.Now(), process: run.Process})
	l.mu.Unlock()
}

func (l *fireLog) snapshot() []seenFire {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append([]seenFire(nil), l.fires...)
	sort.Slice(out, func(i, j int) bool { return out[i].fire.Before(out[j].fire) })
	return out
}

// behave registers fn as the behaviour of task name for the test.
func behave(t testing.TB, name string, fn func(context.Context) error) {
	behaviours.Store(name, fn)
	t.Cleanup(func() { behaviours.Delete(name) })
}

// testLogger logs to stderr when -v is set and CRONTAB_TEST_LOG=1.
func testLogger() *slog.Logger {
	if os.Getenv("CRONTAB_TEST_LOG") == "1" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return nil
}

// runScheduler starts a scheduler in a goroutine and returns a function
// that stops it and waits for Run to return.
func runScheduler(t testing.TB, rdb redis.UniversalClient, reg *Registry, opts ...Option) (*Scheduler, func()) {
	t.Helper()
	opts = append([]Option{WithLogger(testLogger()), WithProcessTTL(time.Second), WithGracePeriod(2 * time.Second)}, opts...)
	s, err := NewScheduler(rdb, reg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(15 * time.Second):
				t.Errorf("Run did not return 15s after its ctx ended")
			}
		})
	}
	t.Cleanup(stop)
	select {
	case <-s.started:
	case err := <-done:
		t.Fatalf("Run returned before starting: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("scheduler did not start within 10s")
	}
	return s, stop
}

// testRegistry builds a registry of configs, failing the test on error.
func testRegistry(t testing.TB, cfgs ...TaskConfig) *Registry {
	t.Helper()
	r := NewRegistry()
	for _, c := range cfgs {
		if err := r.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// waitFor polls cond until it holds or d passes (testio.WaitFor).
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	testio.WaitFor(t, d, what, cond)
}

// hget reads one field of a task hash in the default namespace.
func hget(t testing.TB, rdb redis.UniversalClient, task, field string) string {
	t.Helper()
	v, err := rdb.HGet(context.Background(), newKeys("crontab").Task(task), field).Result()
	if err != nil && err != redis.Nil {
		t.Fatal(err)
	}
	return v
}

func redisZ(score int64, member string) redis.Z {
	return redis.Z{Score: float64(score), Member: member}
}

// flights counts the handlers of one task in flight at once, across every
// scheduler of a test, and the most ever seen.
type flights struct {
	now, max, starts atomic.Int64
}

// enter records a handler's start; leave, its end.
func (c *flights) enter() {
	c.starts.Add(1)
	n := c.now.Add(1)
	for m := c.max.Load(); n > m && !c.max.CompareAndSwap(m, n); m = c.max.Load() {
	}
}

func (c *flights) leave() { c.now.Add(-1) }

// abandonWatch sees the runs that schedulers record abandoned, through the
// Abandoned hook and the log; give its opts to every scheduler of a test.
type abandonWatch struct {
	hooked atomic.Int64
	logs   *logCapture
	opts   []Option
}

func newAbandonWatch() *abandonWatch {
	w := &abandonWatch{}
	logs, logger := newLogCapture()
	w.logs = logs
	w.opts = []Option{WithLogger(logger), WithHooks(Hooks{Abandoned: func(context.Context, RunInfo) { w.hooked.Add(1) }})}
	return w
}

// expectNone fails t if a run was recorded abandoned; why says why none may be.
func (w *abandonWatch) expectNone(t testing.TB, why string) {
	t.Helper()
	if n := w.hooked.Load(); n > 0 {
		t.Errorf("the Abandoned hook was called %d times; %s", n, why)
	}
	if l := w.logs.lines("run abandoned"); len(l) > 0 {
		t.Errorf("logged %s", strings.Join(l, "\n"))
	}
}

// inspect returns an Inspector of c's namespace with c's settings, for
// tests that enqueue and inspect with one value.
func (c *Client) inspect() *Inspector {
	return &Inspector{db: c.db, opts: c.opts, err: c.err}
}

// rdbOf is the data model of the default namespace on c.
func rdbOf(c redis.UniversalClient) *rdbpkg.RDB { return rdbpkg.New(c, DefaultNamespace) }
