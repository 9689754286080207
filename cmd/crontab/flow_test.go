package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
	crontab "github.com/gocrontab/crontab/runtime"
)

// show prints a task's cap only when set, in text and in -o json (a
// scheduled task has no rate or priority yet).
func TestShowFlowControl(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	reg := crontab.NewRegistry()
	if err := reg.Add(crontab.TaskConfig{Name: "mail", New: func() crontab.TaskInterface { return new(mailJob) }}); err != nil {
		t.Fatal(err)
	}
	client := crontab.NewClient(rdb, reg)
	for _, spec := range []crontab.TaskSpec{
		{Key: "capped", Type: "mail", Expression: "every:1h", Concurrent: true,
			MaxRunning: 50},
		{Key: "plain", Type: "mail", Expression: "every:1h"},
	} {
		if err := client.SetTask(ctx, spec); err != nil {
			t.Fatal(err)
		}
	}
	e := &env{rdb: rdb, url: srv.URL()}

	show := e.ok(t, "show", "capped")
	for _, re := range []string{
		`(?m)^concurrent:\s+yes\nmax running:\s+50\nmisfire:`,
	} {
		if !regexp.MustCompile(re).MatchString(show) {
			t.Errorf("show capped: no match for %s in\n%s", re, show)
		}
	}
	plain := e.ok(t, "show", "plain")
	for _, row := range []string{"max running:", "rate:", "priority:"} {
		if strings.Contains(plain, row) {
			t.Errorf("show plain has %q:\n%s", row, plain)
		}
	}

	var one map[string]any
	if err := json.Unmarshal([]byte(e.ok(t, "-o", "json", "show", "capped")), &one); err != nil {
		t.Fatal(err)
	}
	if one["max_running"] != 50.0 || one["rate"] != nil || one["priority"] != nil {
		t.Errorf("show -o json capped: %v", one)
	}
	one = nil
	if err := json.Unmarshal([]byte(e.ok(t, "-o", "json", "show", "plain")), &one); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"max_running", "rate", "priority"} {
		if _, ok := one[k]; ok {
			t.Errorf("show -o json plain has %q: %v", k, one)
		}
	}
}

// gateJob blocks each run until its test closes gate, so the test sees
// runs in progress.
type gateJob struct{ N int }

var gate = make(chan struct{})

func (gateJob) Handle(ctx context.Context) error {
	select {
	case <-gate:
	case <-ctx.Done():
	}
	return nil
}

// show NAME for a job type with limits prints the limits the live
// processes publish and their use now; a name that is neither a task nor
// such a type is still "not found".
func TestShowJobTypeFlow(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx, cancel := context.WithCancel(context.Background())
	reg := crontab.NewRegistry()
	if err := reg.Add(crontab.TaskConfig{Name: "resize", MaxRunning: 3, Rate: crontab.Rate{N: 10, Per: time.Hour},
		New: func() crontab.TaskInterface { return new(gateJob) }}); err != nil {
		t.Fatal(err)
	}
	s, err := crontab.NewScheduler(rdb, reg, crontab.WithLogger(nil), crontab.WithGracePeriod(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() { close(gate); cancel(); <-done })
	<-s.Ready()
	client := crontab.NewClient(rdb, reg)
	for i := range 5 {
		if _, err := client.Enqueue(ctx, gateJob{N: i}); err != nil {
			t.Fatal(err)
		}
	}
	e := &env{rdb: rdb, url: srv.URL()}
	want := regexp.MustCompile(`(?m)^job type:\s+resize\nmax running:\s+3 \(running now: 3\)\nrate:\s+10/1h0m0s \(starts in the window now: 3\)\nprocesses:\s+1 live processes run it with limits\n`)
	deadline := time.Now().Add(10 * time.Second)
	var out string
	for {
		if out = e.ok(t, "show", "resize"); want.MatchString(out) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !want.MatchString(out) {
		t.Errorf("show resize:\n%s\nwant a match for %s", out, want)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(e.ok(t, "-o", "json", "show", "resize")), &v); err != nil {
		t.Fatal(err)
	}
	if v["max_running"] != 3.0 || v["rate"] != "10/1h0m0s" || v["running"] != 3.0 || v["starts_in_window"] != 3.0 {
		t.Errorf("show -o json resize: %v", v)
	}
	if _, errs, code := e.crontab(t, "show", "nosuch"); code == 0 || !strings.Contains(errs, "not found") {
		t.Errorf("show nosuch: exit %d, stderr %q; want not found", code, errs)
	}
}

// jobs -o json shows a unique job's identity, and nothing for a plain one.
func TestJobsShowUniqueIdentity(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	reg := crontab.NewRegistry()
	if err := reg.Add(crontab.TaskConfig{Name: "mail", New: func() crontab.TaskInterface { return new(mailJob) }}); err != nil {
		t.Fatal(err)
	}
	c := crontab.NewClient(rdb, reg)
	uid, err := c.Enqueue(ctx, mailJob{To: "a"}, crontab.UniqueKey("user-1"), crontab.Unique(time.Hour), crontab.In(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := c.Enqueue(ctx, mailJob{To: "b"}, crontab.In(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{rdb: rdb, url: srv.URL()}
	var jobs []map[string]any
	if err := json.Unmarshal([]byte(e.ok(t, "jobs", "-o", "json")), &jobs); err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, j := range jobs {
		got[j["id"].(string)] = j["unique"]
	}
	if got[uid] != crontab.UniqueIdentity("mail", nil, "user-1") || got[pid] != nil {
		t.Errorf("unique of the unique job %v, of the plain one %v; want %q and none", got[uid], got[pid], crontab.UniqueIdentity("mail", nil, "user-1"))
	}
}
