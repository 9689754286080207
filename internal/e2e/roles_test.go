package e2e

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/gocrontab/crontab/internal/testio"
)

var (
	rolesFire = regexp.MustCompile(`(?m)^fire task="([^"]+)" at=(\d+) process=(\S+)(?: enqueued=(\S+))?$`)
	rolesJob  = regexp.MustCompile(`(?m)^job task="([^"]+)" id=(\S+) process=(\S+) `)
)

// TestExampleRoles runs examples/roles as two fleets of one build on one
// private Redis, two processes each: the scheduler fleet fires the
// periodic tasks, the worker fleet runs the "send sms" jobs they enqueue.
// Periodic tasks run only in scheduler processes and jobs only in worker
// processes; each instant fires once, each job runs once, and nothing is
// dead-lettered.
func TestExampleRoles(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	bin := buildExample(t, "github.com/gocrontab/crontab/examples/roles")
	type proc struct {
		role string
		out  *testio.Buffer
		stop func()
	}
	var procs []proc
	for _, role := range []string{"scheduler", "worker", "scheduler", "worker"} {
		cmd, out := startExample(t, bin, srv, "-role", role)
		procs = append(procs, proc{role, out, func() {
			_ = cmd.Process.Signal(syscall.SIGINT)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("%s: exit after Ctrl-C: %v", role, err)
				}
			case <-time.After(10 * time.Second):
				t.Errorf("%s did not stop within 10s of Ctrl-C", role)
			}
		}})
	}
	// About 6 s of fires: 6 reminders (and their jobs), 3 reports.
	start := time.Now()
	testio.WaitFor(t, 12*time.Second, "6 reminders to run as jobs", func() bool {
		n := 0
		for _, p := range procs {
			n += len(rolesJob.FindAllString(p.out.String(), -1))
		}
		return n >= 6 && time.Since(start) > 6*time.Second
	})
	// The schedulers first, then, once their last reminder's job ran, the
	// workers.
	for _, p := range procs {
		if p.role == "scheduler" {
			p.stop()
		}
	}
	time.Sleep(time.Second)
	for _, p := range procs {
		if p.role == "worker" {
			p.stop()
		}
	}

	fires := map[string]map[int64]int{} // task -> instant -> runs
	enqueued := map[string]bool{}
	ran := map[string]int{} // job id -> runs
	for i, p := range procs {
		out := p.out.String()
		for _, m := range rolesFire.FindAllStringSubmatch(out, -1) {
			if p.role != "scheduler" {
				t.Errorf("process %d (%s) fired the periodic task %q", i, p.role, m[1])
			}
			at, _ := strconv.ParseInt(m[2], 10, 64)
			if fires[m[1]] == nil {
				fires[m[1]] = map[int64]int{}
			}
			fires[m[1]][at]++
			if m[4] != "" {
				enqueued[m[4]] = true
			}
		}
		for _, m := range rolesJob.FindAllStringSubmatch(out, -1) {
			if p.role != "worker" {
				t.Errorf("process %d (%s) ran job %s of %q", i, p.role, m[2], m[1])
			}
			ran[m[2]]++
		}
		if strings.Contains(out, "level=ERROR") || strings.Contains(out, "not registered") {
			t.Errorf("process %d (%s) logged an error or an unknown type:\n%s", i, p.role, out)
		}
	}
	for task, minRuns := range map[string]int{"send reminders": 6, "report": 3} {
		var instants []int64
		for at, n := range fires[task] {
			instants = append(instants, at)
			if n != 1 {
				t.Errorf("%s instant %d fired %d times, want once", task, at, n)
			}
		}
		slices.Sort(instants)
		if len(instants) < minRuns {
			t.Errorf("%s fired %d instants, want at least %d", task, len(instants), minRuns)
		}
		step := map[string]int64{"send reminders": 1000, "report": 2000}[task]
		for i := 1; i < len(instants); i++ {
			if instants[i]-instants[i-1] != step {
				t.Errorf("%s: instants %d and %d are not %d ms apart (one missed)", task, instants[i-1], instants[i], step)
			}
		}
	}
	for id := range enqueued {
		if ran[id] != 1 {
			t.Errorf("job %s ran %d times, want once", id, ran[id])
		}
	}
	for id, n := range ran {
		if !enqueued[id] {
			t.Errorf("job %s ran %d times but no reminder enqueued it", id, n)
		}
	}
	rdb := srv.Client(t)
	ctx := context.Background()
	if n, err := rdb.ZCard(ctx, "{crontab}:dead").Result(); err != nil || n != 0 {
		t.Errorf("%d dead-lettered jobs (%v), want none", n, err)
	}
	if n, err := rdb.ZCard(ctx, "{crontab}:jobs").Result(); err != nil || n != 0 {
		t.Errorf("%d jobs left in the queue (%v), want none", n, err)
	}
	t.Logf("reminders %d, reports %d, jobs %d", len(fires["send reminders"]), len(fires["report"]), len(ran))
}
