package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	rdbpkg "github.com/gocrontab/crontab/internal/rdb"
	"github.com/gocrontab/crontab/internal/redistest"
	crontab "github.com/gocrontab/crontab/runtime"
	cschedule "github.com/gocrontab/crontab/runtime/schedule"
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
		`(?m)^concurrent:\s+yes\nmax running:\s+50 \(running now: 0/50\)\nmisfire:`,
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
	if one["max_running"] != 50.0 || one["slots_running"] != 0.0 || one["rate"] != nil || one["priority"] != nil {
		t.Errorf("show -o json capped: %v", one)
	}
	one = nil
	if err := json.Unmarshal([]byte(e.ok(t, "-o", "json", "show", "plain")), &one); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"max_running", "slots_running", "rate", "priority"} {
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

// holdTask holds each run until holdGate closes (at the end of the test
// that uses it), so that its test sees runs in progress.
type holdTask struct{}

var holdGate = make(chan struct{})

func (holdTask) Handle(ctx context.Context) error {
	select {
	case <-holdGate:
	case <-ctx.Done():
	}
	return nil
}

// holdJob is holdTask as a job type of its own.
type holdJob struct{ holdTask }

// idleJob is a job type no process of the test runs.
type idleJob struct{ N int }

func (idleJob) Handle(context.Context) error { return nil }

// show TASK of a scheduled task with max_running prints its fire slots in
// use; jobs fills WAIT (and -o json "waiting") for due pending jobs only:
// a full cap, a type no process runs.
func TestShowFireSlotsAndJobsWait(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx, cancel := context.WithCancel(context.Background())
	reg := crontab.NewRegistry()
	for _, cfg := range []crontab.TaskConfig{
		{Name: "crunch", Expression: "every:1s", Concurrent: true, MaxRunning: 2, New: func() crontab.TaskInterface { return new(holdTask) }},
		{Name: "resize", MaxRunning: 1, New: func() crontab.TaskInterface { return new(holdJob) }},
		{Name: "idle", New: func() crontab.TaskInterface { return new(idleJob) }},
	} {
		if err := reg.Add(cfg); err != nil {
			t.Fatal(err)
		}
	}
	s, err := crontab.NewScheduler(rdb, reg, crontab.WithLogger(nil), crontab.WithGracePeriod(time.Second),
		crontab.WithTasks("crunch", "resize"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() { close(holdGate); cancel(); <-done })
	<-s.Ready()
	client := crontab.NewClient(rdb, reg)
	var ids []string
	// max_running 1: one runs, JobSlotsAhead - 1 more wait in the process
	// for its slot (JobSlotsAhead per slot), the last waits in the queue.
	for i := range 1 + rdbpkg.JobSlotsAhead {
		id, err := client.Enqueue(ctx, holdJob{}, crontab.WithID("resize-"+string(rune('a'+i))))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if _, err := client.Enqueue(ctx, idleJob{N: 1}, crontab.WithID("idle-1")); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Enqueue(ctx, idleJob{N: 2}, crontab.WithID("idle-later"), crontab.In(time.Hour)); err != nil {
		t.Fatal(err)
	}
	e := &env{rdb: rdb, url: srv.URL()}

	want := regexp.MustCompile(`(?m)^max running:\s+2 \(running now: 2/2\)$`)
	var out string
	waitFor(t, 10*time.Second, "two runs of crunch to hold its slots", func() bool {
		out = e.ok(t, "show", "crunch")
		return want.MatchString(out)
	})
	var one map[string]any
	if err := json.Unmarshal([]byte(e.ok(t, "-o", "json", "show", "crunch")), &one); err != nil {
		t.Fatal(err)
	}
	if one["max_running"] != 2.0 || one["slots_running"] != 2.0 {
		t.Errorf("show -o json crunch: max_running %v, slots_running %v; want 2 and 2", one["max_running"], one["slots_running"])
	}

	waitFor(t, 10*time.Second, "resize jobs to be claimed", func() bool {
		jobs, _ := crontab.NewInspector(rdb).Jobs(ctx, crontab.JobFilter{State: crontab.JobRunning})
		return len(jobs) == rdbpkg.JobSlotsAhead
	})
	jl := lines(e.ok(t, "jobs"))
	if len(jl) == 0 || !strings.HasPrefix(jl[0], "ID | TYPE | STATE | WHEN | WAIT | ATTEMPTS") {
		t.Fatalf("jobs:\n%s", strings.Join(jl, "\n"))
	}
	rows := map[string]string{}
	for _, l := range jl[1:] {
		id, _, _ := strings.Cut(l, " | ")
		rows[id] = l
	}
	for id, re := range map[string]string{
		"idle-1":     `^idle-1 \| idle \| pending \| \S+ \S+ \| \S+ ago \| no process \| 0 \|`,
		"idle-later": `^idle-later \| idle \| pending \| \S+ \S+ \| in \S+ \| - \| 0 \|`,
	} {
		if !regexp.MustCompile(re).MatchString(rows[id]) {
			t.Errorf("jobs row %q does not match %s", rows[id], re)
		}
	}
	var waiting, running int
	for _, id := range ids {
		switch {
		case regexp.MustCompile(`^\S+ \| resize \| pending \| \S+ \S+ \| \S+ ago \| max_running 1/1 \| 0 \|`).MatchString(rows[id]):
			waiting++
		case regexp.MustCompile(`^\S+ \| resize \| running \| \S+ \S+ \| in \S+ \| - \| 1 \|`).MatchString(rows[id]):
			running++
		}
	}
	if waiting != 1 || running != rdbpkg.JobSlotsAhead {
		t.Errorf("resize jobs: %d waiting for max_running, %d claimed (running, or waiting in the process for its slot); want 1 and %d:\n%s",
			waiting, running, rdbpkg.JobSlotsAhead, strings.Join(jl, "\n"))
	}

	var jobs []map[string]any
	if err := json.Unmarshal([]byte(e.ok(t, "jobs", "-o", "json")), &jobs); err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, j := range jobs {
		if w, ok := j["waiting"]; ok {
			got[j["id"].(string)] = w
		}
	}
	if len(got) != 2 || got["idle-1"] != "no process" {
		t.Errorf("jobs -o json: waiting %v; want idle-1 no process and one resize job max_running 1/1", got)
	}
	for id, w := range got {
		if strings.HasPrefix(id, "resize-") && w != "max_running 1/1" {
			t.Errorf("jobs -o json: %s waiting %v, want max_running 1/1", id, w)
		}
	}
}

// show prints a jittered task's jitter with the effective offset of its
// instants, in text and in -o json, and nothing for a task without one.
func TestShowJitter(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	reg := crontab.NewRegistry()
	if err := reg.Add(crontab.TaskConfig{Name: "mail", New: func() crontab.TaskInterface { return new(mailJob) }}); err != nil {
		t.Fatal(err)
	}
	client := crontab.NewClient(rdb, reg)
	if _, err := client.SetTasks(ctx, []crontab.TaskSpec{
		{Key: "spread", Type: "mail", Expression: "every:1h", Jitter: time.Hour},
		{Key: "plain", Type: "mail", Expression: "every:1h"},
	}); err != nil {
		t.Fatal(err)
	}
	e := &env{rdb: rdb, url: srv.URL()}
	offset := cschedule.JitterOffset("spread", time.Hour)
	show := e.ok(t, "show", "spread")
	if want := "jitter:        1h0m0s (offset " + offset.String() + ")"; !strings.Contains(show, want) {
		t.Errorf("show spread: no %q in\n%s", want, show)
	}
	if plain := e.ok(t, "show", "plain"); strings.Contains(plain, "jitter") {
		t.Errorf("show plain has a jitter row:\n%s", plain)
	}
	var one map[string]any
	if err := json.Unmarshal([]byte(e.ok(t, "-o", "json", "show", "spread")), &one); err != nil {
		t.Fatal(err)
	}
	if one["jitter_ms"] != 3_600_000.0 || one["jitter_offset_ms"] != float64(offset.Milliseconds()) {
		t.Errorf("show -o json spread: jitter_ms %v jitter_offset_ms %v, want 3600000 and %d", one["jitter_ms"], one["jitter_offset_ms"], offset.Milliseconds())
	}
}
