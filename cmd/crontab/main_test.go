package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/gocrontab/crontab/internal/testio"
	crontab "github.com/gocrontab/crontab/runtime"
)

// The test tasks: a fast one, a failing one, one that never fires on its
// own, and two job types.
type tickTask struct{}

func (tickTask) Handle(context.Context) error { return nil }

type failTask struct{}

func (failTask) Handle(context.Context) error { return errors.New("upstream away") }

type nightlyTask struct{}

func (nightlyTask) Handle(context.Context) error { return nil }

type mailJob struct {
	To string `json:"to"`
}

func (mailJob) Handle(context.Context) error { return nil }

type badJob struct{}

func (badJob) Handle(context.Context) error { return errors.New("bad job") }

// env is a private Redis with a scheduler running the test tasks.
type env struct {
	rdb       *redis.Client
	url       string
	client    *crontab.Client
	inspector *crontab.Inspector
}

func setup(t *testing.T) *env {
	t.Helper()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	reg := crontab.NewRegistry()
	for _, cfg := range []crontab.TaskConfig{
		{Name: "tick", Expression: "every:1s", New: func() crontab.TaskInterface { return new(tickTask) }},
		{Name: "fails", Expression: "every:1s", New: func() crontab.TaskInterface { return new(failTask) }},
		{Name: "nightly", Expression: "daily:03:00", TZ: "Europe/Berlin", New: func() crontab.TaskInterface { return new(nightlyTask) }},
		{Name: "mail", New: func() crontab.TaskInterface { return new(mailJob) }},
		{Name: "bad", New: func() crontab.TaskInterface { return new(badJob) }},
	} {
		if err := reg.Add(cfg); err != nil {
			t.Fatal(err)
		}
	}
	s, err := crontab.NewScheduler(rdb, reg, crontab.WithLogger(nil), crontab.WithProcessID("proc-1"),
		crontab.WithVersion("v1.0.0"), crontab.WithProcessTTL(time.Second), crontab.WithGracePeriod(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := s.Run(ctx); err != nil {
			t.Error(err)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	e := &env{rdb: rdb, url: srv.URL(), client: crontab.NewClient(rdb, reg), inspector: crontab.NewInspector(rdb)}
	waitFor(t, 5*time.Second, "tick and fails to run twice", func() bool {
		a, _ := e.inspector.Task(context.Background(), "tick")
		b, _ := e.inspector.Task(context.Background(), "fails")
		return a.Runs >= 2 && b.Runs >= 2
	})
	return e
}

func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	testio.WaitFor(t, d, what, cond)
}

// crontab runs the command line in-process against e's Redis.
func (e *env) crontab(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	getenv := func(k string) string {
		if k == "REDIS_URL" && e != nil {
			return e.url
		}
		return ""
	}
	code = run(context.Background(), args, &out, &errb, getenv)
	return out.String(), errb.String(), code
}

// ok runs the command line and fails the test unless it exits 0.
func (e *env) ok(t *testing.T, args ...string) string {
	t.Helper()
	out, errs, code := e.crontab(t, args...)
	if code != 0 {
		t.Fatalf("crontab %q: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, out, errs)
	}
	return out
}

// lines returns the non-empty lines of s, with runs of spaces squeezed.
func lines(s string) []string {
	var out []string
	sp := regexp.MustCompile(` {2,}`)
	for l := range strings.SplitSeq(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, sp.ReplaceAllString(l, " | "))
		}
	}
	return out
}

func TestUsage(t *testing.T) {
	t.Parallel()
	var e *env // no Redis: none of these get that far
	out, _, code := e.crontab(t, "--help")
	if code != 0 {
		t.Errorf("--help: exit %d", code)
	}
	for _, c := range commands {
		if !strings.Contains(out, "\n  "+c.name+" ") {
			t.Errorf("--help lacks command %s", c.name)
		}
	}
	for _, want := range []string{"-redis URL", "REDIS_URL", "-namespace", "-o format", "-process-ttl", "Exit status", "help [COMMAND]"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help lacks %q:\n%s", want, out)
		}
	}
	for _, args := range [][]string{{"-h"}, {"help"}} {
		if o, _, code := e.crontab(t, args...); code != 0 || o != out {
			t.Errorf("%q: exit %d, output differs from --help", args, code)
		}
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"jobs", "-h"}, []string{"Usage: crontab jobs", "-state", "-task", "-limit", "-redis"}},
		{[]string{"help", "serve"}, []string{"Usage: crontab serve", "-addr", "-token", "-basic-auth", "127.0.0.1:8080"}},
		{[]string{"history", "--help"}, []string{"Usage: crontab history [flags] NAME", "-limit"}},
	} {
		o, _, code := e.crontab(t, tc.args...)
		if code != 0 {
			t.Errorf("%q: exit %d", tc.args, code)
		}
		for _, w := range tc.want {
			if !strings.Contains(o, w) {
				t.Errorf("%q lacks %q:\n%s", tc.args, w, o)
			}
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "no command"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"show"}, "show: want NAME"},
		{[]string{"show", "a", "b"}, "show: want NAME"},
		{[]string{"pause"}, "pause: want NAME..."},
		{[]string{"list", "extra"}, "list takes no arguments"},
		{[]string{"-o", "yaml", "list"}, `-o "yaml": want table or json`},
		{[]string{"list", "-bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"jobs", "-state", "lost"}, `-state "lost": want pending, running or dead`},
		{[]string{"help", "nope"}, `unknown command "nope"`},
		{[]string{"-redis", "http://x", "list"}, `-redis "http://x"`},
		{[]string{"serve", "-addr", "0.0.0.0:0"}, "not a loopback address: set -token"},
		{[]string{"serve", "-addr", ":8080"}, "not a loopback address"},
		{[]string{"serve", "-basic-auth", "nopass"}, "want USER:PASSWORD"},
	} {
		o, errs, code := e.crontab(t, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) || !strings.Contains(errs, "crontab --help") {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
		if tc.args != nil && o != "" {
			t.Errorf("%q wrote to stdout: %q", tc.args, o)
		}
	}
}

func TestRedisDown(t *testing.T) {
	t.Parallel()
	e := &env{url: "redis://127.0.0.1:1/0?dial_timeout=200ms&max_retries=-1"}
	_, errs, code := e.crontab(t, "list")
	if code != 1 || !strings.Contains(errs, "crontab: ") {
		t.Errorf("exit %d, stderr %q; want 1", code, errs)
	}
}

func TestTasks(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()

	ls := lines(e.ok(t, "list"))
	if want := "TASK | STATUS | SCHEDULE | NEXT RUN | LAST RUN | OUTCOME | RUNS | FAILED | SKIPPED | SOURCE"; ls[0] != want {
		t.Errorf("header %q, want %q", ls[0], want)
	}
	if len(ls) != 4 {
		t.Fatalf("list:\n%s", strings.Join(ls, "\n"))
	}
	for i, re := range []string{
		`^fails \| active \| every:1s \| \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \| in \S+ \| \S+ ago \| failed \S+ \| \d+ \| \d+ \| 0 \| static$`,
		`^nightly \| active \| daily:03:00 \(Europe/Berlin\) \| \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \| in \S+ \| - \| - \| 0 \| 0 \| 0 \| static$`,
		`^tick \| active \| every:1s \| .* \| ok \S+ \| \d+ \| 0 \| 0 \| static$`,
	} {
		if !regexp.MustCompile(re).MatchString(ls[i+1]) {
			t.Errorf("row %d %q does not match %s", i+1, ls[i+1], re)
		}
	}
	var tasks []map[string]any
	if err := json.Unmarshal([]byte(e.ok(t, "list", "-o", "json")), &tasks); err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 3 || tasks[1]["name"] != "nightly" || tasks[1]["tz"] != "Europe/Berlin" || tasks[1]["status"] != "active" ||
		tasks[1]["next_run"] == nil || tasks[0]["last_outcome"] != "failed" || tasks[0]["last_error"] != "upstream away" {
		t.Errorf("list -o json: %v", tasks)
	}

	show := e.ok(t, "show", "fails")
	for _, re := range []string{`(?m)^name:\s+fails$`, `(?m)^status:\s+active$`, `(?m)^schedule:\s+every:1s in UTC \(every 1s\)$`,
		`(?m)^last outcome:\s+failed in \S+: upstream away$`, `(?m)^runs:\s+\d+ \(\d+ failed, 0 skipped\)$`, `latest runs:\nFIRE\s+START`,
		`(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+\S+ \S+\s+\S+\s+failed\s+1\s+proc-1\s+-\s+upstream away$`} {
		if !regexp.MustCompile(re).MatchString(show) {
			t.Errorf("show fails: no match for %s in\n%s", re, show)
		}
	}
	var one map[string]any
	json.Unmarshal([]byte(e.ok(t, "-o", "json", "show", "tick")), &one)
	if one["name"] != "tick" || len(one["history"].([]any)) == 0 {
		t.Errorf("show -o json: %v", one)
	}
	if _, errs, code := e.crontab(t, "show", "nope"); code != 1 || !strings.Contains(errs, "not found") {
		t.Errorf("show nope: exit %d %q", code, errs)
	}

	// Status changes reach Redis, and list shows them.
	status := func(name string) string { return e.rdb.HGet(ctx, "{crontab}:task:"+name, "status").Val() }
	if out := e.ok(t, "pause", "nightly", "tick"); out != "paused \"nightly\"\npaused \"tick\"\n" {
		t.Errorf("pause: %q", out)
	}
	if status("nightly") != "paused" || status("tick") != "paused" {
		t.Errorf("after pause: %s %s", status("nightly"), status("tick"))
	}
	if !strings.Contains(e.ok(t, "list"), "tick     paused") {
		t.Errorf("list after pause:\n%s", e.ok(t, "list"))
	}
	if _, errs, code := e.crontab(t, "trigger", "nightly"); code != 1 || !strings.Contains(errs, "paused") {
		t.Errorf("trigger of a paused task: exit %d %q", code, errs)
	}
	e.ok(t, "resume", "nightly", "tick")
	if status("nightly") != "active" {
		t.Errorf("after resume: %s", status("nightly"))
	}
	if out := e.ok(t, "disable", "nightly"); out != "disabled \"nightly\"\n" || status("nightly") != "disabled" {
		t.Errorf("disable: %q, status %s", out, status("nightly"))
	}
	if e.rdb.ZScore(ctx, "{crontab}:queue", "nightly").Err() != redis.Nil {
		t.Error("disabled task still queued")
	}
	var res []map[string]any
	json.Unmarshal([]byte(e.ok(t, "enable", "-o", "json", "nightly")), &res)
	if len(res) != 1 || res[0]["status"] != "active" || res[0]["action"] != "enable" {
		t.Errorf("enable -o json: %v", res)
	}
	if e.rdb.ZScore(ctx, "{crontab}:queue", "nightly").Err() != nil {
		t.Error("enabled task not queued")
	}
	out, errs, code := e.crontab(t, "pause", "nope", "nightly")
	if code != 1 || out != "paused \"nightly\"\n" || !strings.Contains(errs, `"nope"`) {
		t.Errorf("pause nope nightly: exit %d %q %q", code, out, errs)
	}
	e.ok(t, "resume", "nightly")

	// Trigger runs it once, without moving its schedule.
	before, _ := e.inspector.Task(ctx, "nightly")
	out = e.ok(t, "trigger", "nightly")
	if !regexp.MustCompile(`^triggered "nightly": fires at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} on one process; its schedule is unchanged\n$`).MatchString(out) {
		t.Errorf("trigger: %q", out)
	}
	waitFor(t, 3*time.Second, "the triggered run", func() bool {
		ti, _ := e.inspector.Task(ctx, "nightly")
		return ti.Runs == 1
	})
	if after, _ := e.inspector.Task(ctx, "nightly"); !after.Next.Equal(before.Next) {
		t.Errorf("trigger moved next run from %v to %v", before.Next, after.Next)
	}
	hl := lines(e.ok(t, "history", "nightly"))
	if len(hl) != 2 || !regexp.MustCompile(`^\S+ \S+ \| \S+ \S+ \| \S+ \| ok \| 1 \| proc-1 \| - \| -$`).MatchString(hl[1]) {
		t.Errorf("history nightly:\n%s", strings.Join(hl, "\n"))
	}
	if _, errs, code := e.crontab(t, "trigger", "nope"); code != 1 || !strings.Contains(errs, "not found") {
		t.Errorf("trigger nope: exit %d %q", code, errs)
	}

	// History with a limit, flags after the argument, JSON.
	if hl := lines(e.ok(t, "history", "tick", "-limit", "2")); len(hl) != 3 {
		t.Errorf("history tick -limit 2:\n%s", strings.Join(hl, "\n"))
	}
	var runs []map[string]any
	json.Unmarshal([]byte(e.ok(t, "-o", "json", "history", "-limit", "1", "fails")), &runs)
	if len(runs) != 1 || runs[0]["outcome"] != "failed" || runs[0]["error"] != "upstream away" || runs[0]["process"] != "proc-1" {
		t.Errorf("history -o json: %v", runs)
	}
	if _, _, code := e.crontab(t, "history", "tick", "-limit", "-1"); code != 2 {
		t.Errorf("history -limit -1: exit %d", code)
	}

	// Run-time tasks can be removed; tasks declared in code cannot.
	if err := e.client.SetTask(ctx, crontab.TaskSpec{Key: "dyn", Type: "mail", Params: mailJob{To: "x"}, Expression: "every:1h"}); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^dyn .* dynamic$`).MatchString(e.ok(t, "list")) {
		t.Errorf("list lacks the run-time task:\n%s", e.ok(t, "list"))
	}
	if out := e.ok(t, "remove", "dyn"); out != "removed \"dyn\"\n" {
		t.Errorf("remove: %q", out)
	}
	if _, errs, code := e.crontab(t, "remove", "tick"); code != 1 || !strings.Contains(errs, "declared in code") {
		t.Errorf("remove tick: exit %d %q", code, errs)
	}
	if _, errs, code := e.crontab(t, "remove", "dyn"); code != 1 || !strings.Contains(errs, "not found") {
		t.Errorf("second remove: exit %d %q", code, errs)
	}
}

func TestJobsAndProcesses(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	p1, _ := e.client.Enqueue(ctx, mailJob{To: "a@example.com"}, crontab.In(time.Hour), crontab.WithID("mail-1"))
	p2, _ := e.client.Enqueue(ctx, mailJob{To: "b@example.com"}, crontab.In(2*time.Hour), crontab.WithID("mail-2"))
	dead, _ := e.client.Enqueue(ctx, badJob{}, crontab.WithID("bad-1"))
	waitFor(t, 5*time.Second, "the bad job to die", func() bool {
		j, err := e.inspector.Job(ctx, dead)
		return err == nil && j.State == crontab.JobDead
	})

	jl := lines(e.ok(t, "jobs"))
	if len(jl) != 4 || jl[0] != "ID | TYPE | STATE | WHEN | WAIT | ATTEMPTS | PROCESS | ERROR | PAYLOAD" {
		t.Fatalf("jobs:\n%s", strings.Join(jl, "\n"))
	}
	for i, re := range []string{
		`^mail-1 \| mail \| pending \| \S+ \S+ \| in (59m\d+s|1h) \| - \| 0 \| - \| - \| \{"to":"a@example.com"\}$`,
		`^mail-2 \| mail \| pending \| .* \| 0 \| - \| - \| \{"to":"b@example.com"\}$`,
		`^bad-1 \| bad \| dead \| \S+ \S+ \| \S+ ago \| - \| 1 \| - \| bad job \| \{\}$`,
	} {
		if !regexp.MustCompile(re).MatchString(jl[i+1]) {
			t.Errorf("jobs row %q does not match %s", jl[i+1], re)
		}
	}
	var jobs []map[string]any
	json.Unmarshal([]byte(e.ok(t, "jobs", "-state", "pending", "-limit", "1", "-o", "json")), &jobs)
	if len(jobs) != 1 || jobs[0]["id"] != p1 || jobs[0]["state"] != "pending" || jobs[0]["due"] == nil {
		t.Errorf("jobs -state pending -limit 1: %v", jobs)
	}
	if jl := lines(e.ok(t, "jobs", "-task", "bad")); len(jl) != 2 || !strings.HasPrefix(jl[1], "bad-1 |") {
		t.Errorf("jobs -task bad:\n%s", strings.Join(jl, "\n"))
	}
	if out := e.ok(t, "jobs", "-task", "none"); !strings.Contains(out, "(no jobs)") {
		t.Errorf("jobs -task none: %q", out)
	}
	job := e.ok(t, "job", p2)
	for _, re := range []string{`(?m)^id:\s+mail-2$`, `(?m)^state:\s+pending$`, `(?m)^due:\s+\S+ \S+ \(in (1h59m|2h)\)$`, `(?m)^payload:\s+\{"to":"b@example.com"\}$`} {
		if !regexp.MustCompile(re).MatchString(job) {
			t.Errorf("job %s: no match for %s in\n%s", p2, re, job)
		}
	}
	if _, errs, code := e.crontab(t, "job", "nope"); code != 1 || !strings.Contains(errs, "not found") {
		t.Errorf("job nope: exit %d %q", code, errs)
	}

	if out := e.ok(t, "cancel", p1); out != "cancelled mail-1\n" {
		t.Errorf("cancel: %q", out)
	}
	if e.rdb.ZScore(ctx, "{crontab}:jobs", p1).Err() != redis.Nil {
		t.Error("cancelled job still pending")
	}
	if _, errs, code := e.crontab(t, "cancel", p1); code != 1 || !strings.Contains(errs, "no pending job") {
		t.Errorf("second cancel: exit %d %q", code, errs)
	}
	if out := e.ok(t, "retry", dead); out != "queued again bad-1\n" {
		t.Errorf("retry: %q", out)
	}
	if _, _, code := e.crontab(t, "retry", "nope"); code != 1 {
		t.Errorf("retry nope: exit %d", code)
	}

	pl := lines(e.ok(t, "processes"))
	if len(pl) != 2 || !regexp.MustCompile(`^proc-1 \| \S+ \| \d+ \| v1\.0\.0 \| \S+ \S+ \| \S+ ago \| \d+ \| alive,master$`).MatchString(pl[1]) {
		t.Errorf("processes:\n%s", strings.Join(pl, "\n"))
	}
	var procs []map[string]any
	json.Unmarshal([]byte(e.ok(t, "processes", "-o", "json")), &procs)
	if len(procs) != 1 || procs[0]["id"] != "proc-1" || procs[0]["alive"] != true || procs[0]["master"] != true {
		t.Errorf("processes -o json: %v", procs)
	}
	var ov map[string]any
	json.Unmarshal([]byte(e.ok(t, "overview", "-o", "json")), &ov)
	if ov["tasks"] != 3.0 || ov["jobs_pending"] != 1.0 || ov["processes"] != 1.0 {
		t.Errorf("overview: %v", ov)
	}
	if rep, _ := ov["repaired"].(map[string]any); len(rep) != 8 || rep["job"] != 0.0 || rep["index"] != 0.0 {
		t.Errorf("overview -o json: repaired %v", ov["repaired"])
	}
	if ol := lines(e.ok(t, "overview")); len(ol) != 17 || ol[0] != "tasks: | 3" || ol[9] != "repaired job records: | 0" ||
		ol[14] != "repaired queue entries: | 0" || ol[15] != "repaired first-due entries: | 0" || ol[16] != "repaired unindexed tasks: | 0" {
		t.Errorf("overview:\n%s", strings.Join(ol, "\n"))
	}
	// Another namespace is empty.
	if out := e.ok(t, "-namespace", "other", "list"); !strings.Contains(out, `(no tasks in namespace "other")`) {
		t.Errorf("list in another namespace: %q", out)
	}
}

// serve starts `crontab serve` in-process and returns its base URL and a
// function that stops it and returns its exit status.
func (e *env) serve(t *testing.T, args ...string) (string, func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stderr testio.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "-addr", "127.0.0.1:0"}, args...), io.Discard, &stderr,
			func(k string) string {
				if k == "REDIS_URL" {
					return e.url
				}
				return ""
			})
	}()
	re := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+/)`)
	var base string
	waitFor(t, 5*time.Second, "serve to print its address", func() bool {
		select {
		case code := <-done:
			t.Fatalf("serve exited %d: %s", code, stderr.String())
		default:
		}
		m := re.FindStringSubmatch(stderr.String())
		if m != nil {
			base = m[1]
		}
		return m != nil
	})
	var once sync.Once
	code := -1
	stop := func() int {
		once.Do(func() {
			cancel()
			select {
			case code = <-done:
			case <-time.After(10 * time.Second):
				t.Error("serve did not stop")
			}
		})
		return code
	}
	t.Cleanup(func() { stop() })
	return base, stop
}

func TestServe(t *testing.T) {
	t.Parallel()
	e := setup(t)
	base, stop := e.serve(t, "-token", "s3cret")
	get := func(path string, hdr map[string]string) (int, string) {
		req, _ := http.NewRequest("GET", base+strings.TrimPrefix(path, "/"), nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	bearer := map[string]string{"Authorization": "Bearer s3cret"}
	if code, _ := get("/api/tasks", nil); code != 401 {
		t.Errorf("no credentials: %d", code)
	}
	code, body := get("/api/tasks", bearer)
	if code != 200 || !strings.Contains(body, `"name":"nightly"`) {
		t.Errorf("GET /api/tasks: %d %s", code, body)
	}
	if code, body := get("/metrics", bearer); code != 200 || !strings.Contains(body, "crontab_queue_depth 3") || !strings.Contains(body, `crontab_task_runs_total{task="tick"}`) {
		t.Errorf("GET /metrics: %d %s", code, body)
	}
	req, _ := http.NewRequest("POST", base+"api/tasks/nightly/pause", nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || e.rdb.HGet(context.Background(), "{crontab}:task:nightly", "status").Val() != "paused" {
		t.Errorf("POST pause: %d", resp.StatusCode)
	}
	if code := stop(); code != 0 {
		t.Errorf("serve exited %d", code)
	}
}

func TestMain(m *testing.M) {
	// The table times are local: pin the zone so the patterns hold anywhere.
	time.Local = time.UTC
	m.Run()
}

func TestFmtDur(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0ms", 1500 * time.Microsecond: "2ms", 1234 * time.Millisecond: "1.2s", 59*time.Second + 990*time.Millisecond: "1m0s",
		61 * time.Second: "1m1s", time.Hour: "1h", 3*time.Hour + 25*time.Minute + 10*time.Second: "3h25m",
		26 * time.Hour: "1d2h", 49*time.Hour + 59*time.Minute: "2d1h",
	} {
		if got := fmtDur(d); got != want {
			t.Errorf("fmtDur(%v) = %q, want %q", d, got, want)
		}
	}
}
