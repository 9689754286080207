package runtime

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/redis/go-redis/v9"
)

func TestWithTasksErrors(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	defer rdb.Close()
	reg := testRegistry(t, TaskConfig{Name: "clean logs", Expression: "every:1h", New: probeNew(0)},
		TaskConfig{Name: "send sms", New: probeNew(1)})
	for _, tc := range []struct {
		name string
		opts []Option
		want []string // substrings of the error
	}{
		{"unknown name", []Option{WithTasks("send sms", "send smss")},
			[]string{"WithTasks", `"send smss" not registered`, `registered: "clean logs", "send sms"`}},
		{"two unknown names", []Option{WithTasks("x", "y")}, []string{"WithTasks", `"x", "y" not registered`}},
		{"empty list", []Option{WithTasks()}, []string{"WithTasks", "no task names"}},
		{"a name twice", []Option{WithTasks("send sms", "clean logs", "send sms")},
			[]string{"WithTasks", `"send sms" is given twice`}},
		{"the option twice", []Option{WithTasks("send sms"), WithTasks("clean logs")}, []string{"WithTasks", "given twice"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewScheduler(rdb, reg, tc.opts...)
			if err == nil {
				t.Fatal("NewScheduler accepted it")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	t.Run("empty registry", func(t *testing.T) {
		_, err := NewScheduler(rdb, NewRegistry(), WithTasks("a"))
		if err == nil || !strings.Contains(err.Error(), "the registry is empty") {
			t.Errorf("err = %v, want it to say the registry is empty", err)
		}
	})
	t.Run("long registry", func(t *testing.T) {
		big := NewRegistry()
		for i := range maxListedNames + 1 {
			must(t, big.Add(TaskConfig{Name: strings.Repeat("t", i+1), Expression: "every:1h", New: probeNewAt(t, i)}))
		}
		_, err := NewScheduler(rdb, big, WithTasks("nope"))
		if err == nil || !strings.Contains(err.Error(), "21 tasks are registered") || strings.Contains(err.Error(), `"tt"`) {
			t.Errorf("err = %v, want it to count the registered tasks, not list them", err)
		}
	})
	t.Run("client", func(t *testing.T) {
		c := NewClient(rdb, reg, WithTasks("send sms"))
		if _, err := c.EnqueueRaw(context.Background(), "send sms", nil); err == nil || !strings.Contains(err.Error(), "WithTasks is a Scheduler option") {
			t.Errorf("err = %v, want WithTasks refused for a Client", err)
		}
	})
	if _, err := NewScheduler(rdb, reg, WithTasks("send sms")); err != nil {
		t.Errorf("a registered name: %v", err)
	}
}

// probeNewAt returns a New func of a distinct type for i beyond probeNew's
// five: registries want one Go type per task, so these are func types.
func probeNewAt(t *testing.T, i int) func() TaskInterface {
	t.Helper()
	if i < 5 {
		return probeNew(i)
	}
	types := []func() TaskInterface{
		func() TaskInterface { return new(probeTask[[5]int]) }, func() TaskInterface { return new(probeTask[[6]int]) },
		func() TaskInterface { return new(probeTask[[7]int]) }, func() TaskInterface { return new(probeTask[[8]int]) },
		func() TaskInterface { return new(probeTask[[9]int]) }, func() TaskInterface { return new(probeTask[[10]int]) },
		func() TaskInterface { return new(probeTask[[11]int]) }, func() TaskInterface { return new(probeTask[[12]int]) },
		func() TaskInterface { return new(probeTask[[13]int]) }, func() TaskInterface { return new(probeTask[[14]int]) },
		func() TaskInterface { return new(probeTask[[15]int]) }, func() TaskInterface { return new(probeTask[[16]int]) },
		func() TaskInterface { return new(probeTask[[17]int]) }, func() TaskInterface { return new(probeTask[[18]int]) },
		func() TaskInterface { return new(probeTask[[19]int]) }, func() TaskInterface { return new(probeTask[[20]int]) },
	}
	return types[i-5]
}

// rolesBuild is one build of a task "<p> a", a task "<p> b" (both
// every:1s) and job types "<p> job a" and "<p> job b"; p names them apart
// for the behaviours of tests that run in parallel.
func rolesBuild(t *testing.T, p string) *Registry {
	return testRegistry(t,
		TaskConfig{Name: p + " a", Expression: "every:1s", New: probeNew(0)},
		TaskConfig{Name: p + " b", Expression: "every:1s", New: probeNew(1)},
		TaskConfig{Name: p + " job a", New: probeNew(2)},
		TaskConfig{Name: p + " job b", New: probeNew(3)})
}

// snapshot is what a test compares of the keys of another process's task
// and job: DUMPs and scores, byte for byte.
func rolesSnapshot(t *testing.T, rdb redis.UniversalClient, task, job string) map[string]string {
	t.Helper()
	ctx := context.Background()
	k := newKeys("crontab")
	out := map[string]string{}
	fields, err := rdb.HGetAll(ctx, k.Task(task)).Result()
	must(t, err)
	for f, v := range fields {
		out["HGET "+k.Task(task)+" "+f] = v
	}
	for _, key := range []string{k.History(task), k.Lock(task)} {
		v, err := rdb.Dump(ctx, key).Result()
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		out["DUMP "+key] = v
	}
	for what, cmd := range map[string]*redis.FloatCmd{
		"queue score":    rdb.ZScore(ctx, k.Queue(), task),
		"job score":      rdb.ZScore(ctx, k.Jobs(), job),
		"dead job score": rdb.ZScore(ctx, k.Dead(), job),
	} {
		v, err := cmd.Result()
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		out[what] = time.UnixMilli(int64(v)).String()
	}
	for what, cmd := range map[string]*redis.StringCmd{
		"job data":    rdb.HGet(ctx, k.JobData(), job),
		"job owner":   rdb.HGet(ctx, k.Owners(), job),
		"job attempt": rdb.HGet(ctx, k.Attempts(), job),
	} {
		v, err := cmd.Result()
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		out[what] = v
	}
	members, err := rdb.HKeys(ctx, k.Runs()).Result()
	must(t, err)
	slices.Sort(members)
	out["runs"] = strings.Join(members, ",")
	return out
}

// A process with WithTasks registers and runs only its tasks and jobs, and
// leaves another fleet's task and job exactly as they are: here "roles b",
// registered by a process of the same build that ran only it and is gone,
// is due every second for seconds of heartbeats, master duties (requeue,
// prune, the sweep) and claims of the first, and a due job of "roles job
// b" waits in the queue: no byte of either changes.
func TestWithTasksLeavesOtherTasksUntouched(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	reg := rolesBuild(t, "roles")
	var ranA, ranB, jobA atomic.Int32
	behave(t, "roles a", func(context.Context) error { ranA.Add(1); return nil })
	behave(t, "roles b", func(context.Context) error { ranB.Add(1); return nil })
	behave(t, "roles job a", func(context.Context) error { jobA.Add(1); return nil })
	behave(t, "roles job b", func(context.Context) error { t.Error("roles job b ran"); return nil })

	// The other fleet registers its task, then stops.
	_, stopB := runScheduler(t, rdb, reg, WithProcessID("fleet-b"), WithTasks("roles b"))
	stopB()
	k := newKeys("crontab")
	must(t, rdb.Del(ctx, k.History("roles b")).Err()) // had it run: what follows must not add to it
	c := NewClient(rdb, reg)
	jobB, err := c.EnqueueRaw(ctx, "roles job b", nil)
	must(t, err)
	before := rolesSnapshot(t, rdb, "roles b", jobB)
	ranB.Store(0)

	s, stop := runScheduler(t, rdb, reg, WithProcessID("fleet-a"), WithTasks("roles a", "roles job a"))
	if _, err := c.EnqueueRaw(ctx, "roles job a", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "fleet-a to become master", func() bool { return s.maint.isMasterNow() })
	// 3.5 s: 17 heartbeats and master ticks at a process TTL of 1s, past
	// the prune grace (3 TTL), an invariant sweep every 10 ticks, three
	// instants of "roles b" due, and job claims with its job due.
	time.Sleep(3500 * time.Millisecond)
	stop()
	after := rolesSnapshot(t, rdb, "roles b", jobB)
	for what, v := range after {
		if before[what] != v {
			t.Errorf("%s changed: %q, was %q", what, v, before[what])
		}
	}
	for what, v := range before {
		if _, ok := after[what]; !ok {
			t.Errorf("%s changed: %q, was %q", what, after[what], v)
		}
	}
	if n := ranB.Load(); n != 0 {
		t.Errorf("roles b ran %d times in fleet-a", n)
	}
	if ranA.Load() < 2 || jobA.Load() != 1 {
		t.Errorf("fleet-a ran roles a %d times and roles job a %d times, want at least 2 and 1", ranA.Load(), jobA.Load())
	}
	if n, err := rdb.ZCard(ctx, k.Dead()).Result(); err != nil || n != 0 {
		t.Errorf("dead letters: %d (%v), want none", n, err)
	}
}

// After Redis lost its data, a process with WithTasks registers only its
// own tasks again: another fleet's task is not written (its fleet writes
// it), and nothing of it is recorded.
func TestWithTasksReregistersOnlyItsTasks(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	reg := rolesBuild(t, "flush")
	behave(t, "flush a", func(context.Context) error { return nil })
	_, stop := runScheduler(t, rdb, reg, WithProcessID("fleet-a"), WithTasks("flush a"))
	defer stop()
	k := newKeys("crontab")
	if n, _ := rdb.Exists(ctx, k.Task("flush b")).Result(); n != 0 {
		t.Fatal("roles b was registered by a process that does not run it")
	}
	must(t, rdb.FlushAll(ctx).Err()) // the test's own redis-server
	waitFor(t, 5*time.Second, "flush a registered again", func() bool {
		n, _ := rdb.Exists(ctx, k.Task("flush a")).Result()
		return n == 1
	})
	time.Sleep(time.Second) // more heartbeats and master ticks
	for _, key := range []string{k.Task("flush b"), k.History("flush b"), k.Lock("flush b")} {
		if n, _ := rdb.Exists(ctx, key).Result(); n != 0 {
			t.Errorf("%s exists after the data loss", key)
		}
	}
	if _, err := rdb.ZScore(ctx, k.Queue(), "flush b").Result(); err != redis.Nil {
		t.Errorf("roles b is in the queue (err %v)", err)
	}
	names, err := rdb.HGet(ctx, k.Process("fleet-a"), "task_names").Result()
	if err != nil || names != `["flush a"]` {
		t.Errorf("fleet-a's task_names = %q (%v), want its set", names, err)
	}
}

// After Redis lost its data, every fleet registers its own tasks again,
// whichever notices the loss first: the one that sees the namespace
// registered again by another fleet writes its tasks too, and they fire.
func TestEveryFleetReregistersAfterDataLoss(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	reg := rolesBuild(t, "reflush")
	var ranB atomic.Int64
	behave(t, "reflush a", func(context.Context) error { return nil })
	behave(t, "reflush b", func(context.Context) error { ranB.Add(1); return nil })
	_, stopA := runScheduler(t, rdb, reg, WithProcessID("fleet-a"), WithTasks("reflush a"))
	defer stopA()
	_, stopB := runScheduler(t, rdb, reg, WithProcessID("fleet-b"), WithTasks("reflush b"))
	defer stopB()
	k := newKeys("crontab")
	must(t, rdb.FlushAll(ctx).Err()) // the test's own redis-server
	waitFor(t, 5*time.Second, "both fleets' tasks registered again", func() bool {
		n, _ := rdb.Exists(ctx, k.Task("reflush a"), k.Task("reflush b")).Result()
		return n == 2
	})
	ran := ranB.Load()
	waitFor(t, 5*time.Second, "reflush b to fire after the loss", func() bool { return ranB.Load() > ran })
}

// isMasterNow reports whether the process holds lock:master as of its
// latest heartbeat.
func (mt *maintainer) isMasterNow() bool {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	return mt.isMaster
}
