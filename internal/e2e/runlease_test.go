package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/redistest"
)

// slowLock waits (at most 10 s) for a run of the slow task whose instant
// is after afterMS to hold the task's lock, and returns its process and
// instant.
func slowLock(t *testing.T, rdb *redis.Client, afterMS int64) (string, int64) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		v, _ := rdb.Get(ctx, "{crontab}:lock:task:slow").Result()
		if bar := strings.LastIndexByte(v, '|'); bar > 0 {
			if fire, err := strconv.ParseInt(v[bar+1:], 10, 64); err == nil && fire > afterMS {
				return v[:bar], fire
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no run of the slow task after %d took its lock within 10s", afterMS)
	return "", 0
}

// list returns the whole list key.
func list(t *testing.T, rdb *redis.Client, key string) []string {
	t.Helper()
	l, err := rdb.LRange(context.Background(), key, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// readSlow returns the recorded runs of the slow task, by start.
func readSlow(t *testing.T, rdb *redis.Client) []slowRun {
	t.Helper()
	var runs []slowRun
	for _, r := range list(t, rdb, "e2e:slow") {
		p := strings.Split(r, "|")
		var s slowRun
		s.start, _ = strconv.ParseInt(p[0], 10, 64)
		s.end, _ = strconv.ParseInt(p[1], 10, 64)
		s.process = p[2]
		s.fire, _ = strconv.ParseInt(p[3], 10, 64)
		runs = append(runs, s)
	}
	slices.SortFunc(runs, func(a, b slowRun) int { return int(a.start - b.start) })
	return runs
}

// overlaps reports every run of the slow task that started before the
// previous one ended.
func overlaps(runs []slowRun) []string {
	var out []string
	for i := 1; i < len(runs); i++ {
		if runs[i].start < runs[i-1].end {
			out = append(out, fmt.Sprintf("run of %d (%s, from %d) started before the run of %d (%s) ended at %d",
				runs[i].fire, runs[i].process, runs[i].start, runs[i-1].fire, runs[i-1].process, runs[i-1].end))
		}
	}
	return out
}

// abandonedRecords returns the slow task's history records of abandoned
// runs.
func abandonedRecords(t *testing.T, rdb *redis.Client) []string {
	t.Helper()
	var out []string
	for _, h := range list(t, rdb, "{crontab}:history:slow") {
		if strings.Contains(h, `"outcome":"abandoned"`) {
			out = append(out, h)
		}
	}
	return out
}

// TestSIGKILLMidRunFiresElsewhereWithinTwoSeconds kills the worker running
// the non-concurrent every:1s slow task (its runs last 2.5 s), early (150
// ms) and late (850 ms) in its second. The other worker's claim of the
// next instant finds the lock held by a run whose run lease runs out
// within a lease of the instant, waits for it, and then takes the lock
// over: the task runs its next instant within 2 s of the kill, not after
// the process TTL (the workers' is 2 s, which took 5.1 s), wherever in the
// second the kill lands. The killed run is recorded abandoned once, and
// the Abandoned hook called once.
func TestSIGKILLMidRunFiresElsewhereWithinTwoSeconds(t *testing.T) {
	for _, offset := range []time.Duration{150 * time.Millisecond, 850 * time.Millisecond} {
		t.Run(offset.String(), func(t *testing.T) {
			t.Parallel()
			killMidRun(t, offset)
		})
	}
}

// killMidRun kills the worker running the slow task offset after the
// instant of its run, and checks the task's next instant runs elsewhere
// within 2 s, recorded and hooked once.
func killMidRun(t *testing.T, offset time.Duration) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ws := map[string]*worker{}
	for i := range 2 {
		id := fmt.Sprintf("lease%d", i)
		ws[id] = startWorker(t, srv, id, "WORKER_TASKS=slow")
	}
	time.Sleep(2 * time.Second) // both heart-beating and pulsing
	// A run that starts after this, so the kill lands offset into it.
	owner, fire := slowLock(t, rdb, time.Now().UnixMilli())
	if ws[owner] == nil {
		t.Fatalf("lock holder %q is not one of the workers", owner)
	}
	time.Sleep(time.Until(time.UnixMilli(fire).Add(offset)))
	ws[owner].kill()
	killed := time.Now()

	var next slowRun
	waitFor := time.Now().Add(15 * time.Second)
	for next.start == 0 && time.Now().Before(waitFor) {
		for _, r := range readSlow(t, rdb) {
			if r.fire > fire && r.process != owner {
				next = r
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if next.start == 0 {
		t.Fatal("the task never ran again after the kill")
	}
	gap := time.UnixMilli(next.start).Sub(killed)
	t.Logf("killed %s %v into the run of %d; %s ran the instant %d, %v after the kill",
		owner, offset, fire, next.process, next.fire, gap.Round(time.Millisecond))
	if gap > 2*time.Second {
		t.Errorf("the next run started %v after the kill, want at most 2s", gap.Round(time.Millisecond))
	}
	if next.fire != fire+1000 {
		t.Errorf("the first run after the kill is of the instant %d, want %d (the next one: its claim waited for the dead run's lease)", next.fire, fire+1000)
	}

	// Exactly once, also after the master's reap had a process TTL (2 s)
	// to find the dead process.
	time.Sleep(4 * time.Second)
	recs := abandonedRecords(t, rdb)
	if len(recs) != 1 || !strings.Contains(recs[0], fmt.Sprintf(`"fire":%d`, fire)) || !strings.Contains(recs[0], owner) {
		t.Errorf("abandoned records %q, want one, of %s's run of %d", recs, owner, fire)
	}
	hooks := list(t, rdb, "e2e:abandoned")
	if want := fmt.Sprintf("slow|%d|%s|%s", fire, owner, next.process); !slices.Equal(hooks, []string{want}) {
		t.Errorf("Abandoned hook calls %q, want [%s]", hooks, want)
	}
	if o := overlaps(readSlow(t, rdb)); len(o) > 0 {
		t.Errorf("runs overlapped: %v", o)
	}
}

// TestStoppedWorkerKeepsItsRun stops (SIGSTOP) the worker running the slow
// task for 1 s, 300 ms into a run, three times: a pause shorter than 5/6 of
// the run lease (1.25 s) is no death, so no other worker starts the task
// meanwhile, no run is recorded abandoned and the Abandoned hook is never
// called. The control, the same with a 500 ms run lease (it tolerates
// 417 ms), must see the lock taken over: the scenario does reach the
// takeover when the lease is too short.
func TestStoppedWorkerKeepsItsRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, lease string
		takeover    bool
	}{
		{"default lease", "", false},
		{"control: 500ms lease", "500ms", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			rdb := srv.Client(t)
			ws := map[string]*worker{}
			for i := range 2 {
				id := fmt.Sprintf("pause%d", i)
				env := []string{"WORKER_TASKS=slow"}
				if tc.lease != "" {
					env = append(env, "WORKER_RUN_LEASE="+tc.lease)
				}
				ws[id] = startWorker(t, srv, id, env...)
			}
			time.Sleep(2 * time.Second)
			after := time.Now().UnixMilli()
			var stopped []slowRun // the runs in progress at each stop
			for range 3 {
				owner, fire := slowLock(t, rdb, after)
				if ws[owner] == nil {
					t.Fatalf("lock holder %q is not one of the workers", owner)
				}
				time.Sleep(time.Until(time.UnixMilli(fire + 300)))
				p := ws[owner].cmd.Process
				if err := p.Signal(syscall.SIGSTOP); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Second)
				if err := p.Signal(syscall.SIGCONT); err != nil {
					t.Fatal(err)
				}
				stopped = append(stopped, slowRun{process: owner, fire: fire})
				after = fire + 2500 // the next run after this one ends
			}
			time.Sleep(4 * time.Second) // the last run ends, and the master's reap had its chance
			runs := readSlow(t, rdb)
			ov := overlaps(runs)
			recs := abandonedRecords(t, rdb)
			hooks := list(t, rdb, "e2e:abandoned")
			t.Logf("%d runs, %d overlaps, %d abandoned records, %d Abandoned hook calls", len(runs), len(ov), len(recs), len(hooks))
			if tc.takeover {
				if len(ov) == 0 || len(recs) == 0 || len(hooks) == 0 {
					t.Errorf("with a %s run lease a 1s stop must lose the run: overlaps %v, abandoned %q, hooks %q",
						tc.lease, ov, recs, hooks)
				}
				return
			}
			if len(ov) > 0 {
				t.Errorf("runs overlapped: %v", ov)
			}
			if len(recs) > 0 || len(hooks) > 0 {
				t.Errorf("a 1s stop was taken for a death: abandoned records %q, hook calls %q", recs, hooks)
			}
			for _, s := range stopped {
				found := false
				for _, r := range runs {
					found = found || (r.fire == s.fire && r.process == s.process)
				}
				if !found {
					t.Errorf("the stopped run of %d (%s) did not complete", s.fire, s.process)
				}
			}
			for _, w := range ws {
				b, _ := os.ReadFile(w.log)
				if strings.Contains(string(b), "run lease lost") || strings.Contains(string(b), "run abandoned") {
					t.Errorf("worker %s logged a lost run lease or an abandoned run", w.id)
				}
			}
		})
	}
}
