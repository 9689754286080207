package dashboard_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/dashboard"
	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/gocrontab/crontab/internal/testio"
	crontab "github.com/gocrontab/crontab/runtime"
)

// The demo tasks, also what the screenshot shows.
type (
	heartbeat struct{}
	report    struct{}
	cleanLogs struct{}
	flaky     struct{}
	sendSMS   struct {
		To   string `json:"to"`
		Text string `json:"text"`
	}
	// exportPDF is a job type the demo's schedulers do not run (their
	// WithTasks leaves it out): its jobs wait for "no process".
	exportPDF struct {
		Report string `json:"report"`
	}
)

func (exportPDF) Handle(context.Context) error { return nil }

func (heartbeat) Handle(ctx context.Context) error {
	return sleep(ctx, time.Duration(20+crontab.FireTime(ctx).Second()%7*15)*time.Millisecond)
}

func (report) Handle(ctx context.Context) error {
	return sleep(ctx, time.Duration(150+crontab.FireTime(ctx).Second()%5*60)*time.Millisecond)
}

func (cleanLogs) Handle(context.Context) error { return nil }

func (flaky) Handle(ctx context.Context) error {
	if crontab.FireTime(ctx).Second()%4 == 0 {
		return errors.New("upstream returned 503")
	}
	return sleep(ctx, time.Duration(40+crontab.FireTime(ctx).Second()%3*40)*time.Millisecond)
}

func (s sendSMS) Handle(context.Context) error {
	if strings.HasPrefix(s.To, "+000") {
		return errors.New("gateway rejected the number")
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type demo struct {
	rdb       *redis.Client
	inspector *crontab.Inspector
}

// startDemo starts a private Redis with two schedulers running the demo
// tasks, and enqueues some jobs.
func startDemo(t *testing.T) *demo {
	t.Helper()
	rdb := redistest.Start(t).Client(t)
	reg := crontab.NewRegistry()
	for _, cfg := range []crontab.TaskConfig{
		{Name: "heartbeat", Expression: "every:1s", New: func() crontab.TaskInterface { return new(heartbeat) }},
		{Name: "minute report", Expression: "cron:* * * * *", TZ: "Europe/Berlin", New: func() crontab.TaskInterface { return new(report) }},
		{Name: "clean logs", Expression: "daily:03:00", New: func() crontab.TaskInterface { return new(cleanLogs) }},
		{Name: "flaky", Expression: "every:2s", New: func() crontab.TaskInterface { return new(flaky) }},
		{Name: "send sms", New: func() crontab.TaskInterface { return new(sendSMS) }},
		{Name: "export pdf", New: func() crontab.TaskInterface { return new(exportPDF) }},
	} {
		if err := reg.Add(cfg); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i, id := range []string{"worker-a:4121", "worker-b:4188"} {
		s, err := crontab.NewScheduler(rdb, reg, crontab.WithLogger(nil), crontab.WithProcessID(id),
			crontab.WithVersion("v1.4."+string(rune('0'+i))), crontab.WithProcessTTL(time.Second), crontab.WithGracePeriod(2*time.Second),
			crontab.WithTasks("heartbeat", "minute report", "clean logs", "flaky", "send sms"))
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if err := s.Run(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
	c := crontab.NewClient(rdb, reg, crontab.WithProcessTTL(time.Second))
	bg := context.Background()
	for i, to := range []string{"+15550100", "+15550101", "+15550102"} {
		if _, err := c.Enqueue(bg, sendSMS{To: to, Text: "your code is 4711"}, crontab.In(time.Duration(10+i*25)*time.Minute),
			crontab.WithID("sms-"+to[1:])); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Enqueue(bg, sendSMS{To: "+0001", Text: "hi"}, crontab.WithID("sms-0001")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Enqueue(bg, sendSMS{To: "+15550199", Text: "your code is 0815"}, crontab.In(3*time.Hour),
		crontab.WithID("sms-15550199"), crontab.UniqueKey("otp:+15550199"), crontab.Unique(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Enqueue(bg, exportPDF{Report: "q3"}, crontab.WithID("export-q3")); err != nil {
		t.Fatal(err)
	}
	return &demo{rdb: rdb, inspector: crontab.NewInspector(rdb, crontab.WithProcessTTL(time.Second))}
}

// status is the task's status as the Inspector reads it (an active
// run-time task's hash stores none), "" when there is no such task.
func (d *demo) status(task string) string {
	ti, err := d.inspector.Task(context.Background(), task)
	if err != nil {
		return ""
	}
	return string(ti.Status)
}

type client struct {
	t    *testing.T
	base string
	hdr  map[string]string
}

func (c client) do(method, path string, hdr map[string]string) (int, http.Header, string) {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.base+path, nil)
	for k, v := range c.hdr {
		req.Header.Set(k, v)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func (c client) json(method, path string, want int, v any) {
	c.t.Helper()
	code, _, body := c.do(method, path, nil)
	if code != want {
		c.t.Fatalf("%s %s: %d %s; want %d", method, path, code, body, want)
	}
	if v != nil {
		if err := json.Unmarshal([]byte(body), v); err != nil {
			c.t.Fatalf("%s %s: %v in %s", method, path, err, body)
		}
	}
}

func TestAuth(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	open, err := dashboard.New(dashboard.Config{Inspector: crontab.NewInspector(rdb)})
	if err != nil {
		t.Fatal(err)
	}
	if open.AuthRequired() {
		t.Error("no credentials configured, yet auth required")
	}
	for host, want := range map[string]int{"127.0.0.1:8080": 200, "localhost:8080": 200, "[::1]:8080": 200, "evil.example:8080": 403, "10.0.0.1": 403} {
		req := httptest.NewRequest("GET", "/api/tasks", nil)
		req.Host = host
		w := httptest.NewRecorder()
		open.ServeHTTP(w, req)
		if w.Code != want {
			t.Errorf("no auth, Host %s: %d, want %d", host, w.Code, want)
		}
	}

	h, err := dashboard.New(dashboard.Config{Inspector: crontab.NewInspector(rdb), Token: "t0k", BasicUser: "ops", BasicPassword: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	cl := client{t: t, base: srv.URL}
	code, hdr, _ := cl.do("GET", "/api/tasks", nil)
	if code != 401 || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Basic ") {
		t.Errorf("no credentials: %d %q", code, hdr.Get("WWW-Authenticate"))
	}
	for name, hdr := range map[string]map[string]string{
		"bearer":         {"Authorization": "Bearer t0k"},
		"basic token":    {"Authorization": "Basic " + b64("anyone:t0k")},
		"basic user":     {"Authorization": "Basic " + b64("ops:pw")},
		"cookie":         {"Cookie": "crontab_token=t0k"},
		"wrong bearer":   {"Authorization": "Bearer nope"},
		"wrong basic":    {"Authorization": "Basic " + b64("ops:nope")},
		"wrong user":     {"Authorization": "Basic " + b64("root:pw")},
		"wrong cookie":   {"Cookie": "crontab_token=nope"},
		"empty password": {"Authorization": "Basic " + b64("ops:")},
	} {
		code, _, _ := cl.do("GET", "/api/tasks", hdr)
		if want := map[bool]int{true: 401, false: 200}[strings.HasPrefix(name, "wrong") || name == "empty password"]; code != want {
			t.Errorf("%s: %d, want %d", name, code, want)
		}
	}
	// Opening /?token= sets the cookie and drops the token from the address.
	code, hdr, _ = cl.do("GET", "/?token=t0k", nil)
	if code != 303 || hdr.Get("Location") != "/" || !strings.Contains(hdr.Get("Set-Cookie"), "crontab_token=t0k") ||
		!strings.Contains(hdr.Get("Set-Cookie"), "HttpOnly") || !strings.Contains(hdr.Get("Set-Cookie"), "SameSite=Strict") {
		t.Errorf("/?token=: %d %v", code, hdr)
	}
	if code, _, _ := cl.do("GET", "/?token=nope", nil); code != 401 {
		t.Errorf("/?token=wrong: %d", code)
	}

	// CSRF: a browser's POST needs the page's token; a bearer's does not.
	cookie := client{t: t, base: srv.URL, hdr: map[string]string{"Cookie": "crontab_token=t0k"}}
	var sess map[string]string
	cookie.json("GET", "/api/session", 200, &sess)
	_, _, page := cookie.do("GET", "/", nil)
	if sess["csrf_token"] == "" || !strings.Contains(page, `<meta name="csrf-token" content="`+sess["csrf_token"]+`">`) {
		t.Errorf("session %v; page lacks its token", sess)
	}
	if code, _, body := cookie.do("POST", "/api/tasks/x/pause", nil); code != 403 || !strings.Contains(body, "X-CSRF-Token") {
		t.Errorf("POST without CSRF token: %d %s", code, body)
	}
	if code, _, _ := cookie.do("POST", "/api/tasks/x/pause", map[string]string{"X-CSRF-Token": "forged"}); code != 403 {
		t.Errorf("POST with a wrong CSRF token: %d", code)
	}
	csrf := map[string]string{"X-CSRF-Token": sess["csrf_token"]}
	if code, _, _ := cookie.do("POST", "/api/tasks/x/pause", csrf); code != 404 {
		t.Errorf("POST with the CSRF token (missing task): %d, want 404", code)
	}
	if code, _, _ := cookie.do("POST", "/api/tasks/x/pause", map[string]string{"X-CSRF-Token": sess["csrf_token"], "Origin": "https://evil.example"}); code != 403 {
		t.Errorf("cross-origin POST: %d", code)
	}
	if code, _, _ := cl.do("POST", "/api/tasks/x/pause", map[string]string{"Authorization": "Bearer t0k"}); code != 404 {
		t.Errorf("bearer POST without CSRF token: %d, want 404 (let in)", code)
	}

	if _, err := dashboard.New(dashboard.Config{}); err == nil {
		t.Error("New accepted a nil Inspector")
	}
	if _, err := dashboard.New(dashboard.Config{Inspector: crontab.NewInspector(rdb), BasicUser: "u"}); err == nil {
		t.Error("New accepted a basic user without a password")
	}
}

func b64(s string) string {
	req := httptest.NewRequest("GET", "/", nil)
	u, p, _ := strings.Cut(s, ":")
	req.SetBasicAuth(u, p)
	return strings.TrimPrefix(req.Header.Get("Authorization"), "Basic ")
}

func TestAPI(t *testing.T) {
	t.Parallel()
	d := startDemo(t)
	ctx := context.Background()
	h, err := dashboard.New(dashboard.Config{Inspector: d.inspector, Namespace: "crontab", Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	cl := client{t: t, base: srv.URL, hdr: map[string]string{"Authorization": "Bearer t"}}
	var ov dashboard.Overview
	testio.WaitFor(t, 10*time.Second, "two runs of heartbeat for the sparklines", func() bool {
		ov = dashboard.Overview{}
		cl.json("GET", "/api/overview", 200, &ov)
		for _, task := range ov.Tasks {
			if task.Name == "heartbeat" {
				return len(task.Recent) >= 2
			}
		}
		return false
	})
	if ov.Counts.Tasks != 4 || ov.Counts.Processes != 2 || ov.Counts.JobsPending != 5 || ov.Counts.JobsDead != 1 || ov.Counts.Now.IsZero() {
		t.Errorf("counts %+v", ov.Counts)
	}
	if len(ov.Tasks) != 4 || ov.Tasks[2].Name != "heartbeat" || len(ov.Tasks[2].Recent) < 2 || ov.Tasks[2].Recent[0].Outcome != "ok" || ov.TasksNextCursor != "" {
		t.Errorf("tasks %+v, next cursor %q", ov.Tasks, ov.TasksNextCursor)
	}
	// A namespace of fewer than 1000 tasks comes whole from /api/tasks, as before it was paged.
	var all []dashboard.Task
	code, hdr, body := cl.do("GET", "/api/tasks", nil)
	if err := json.Unmarshal([]byte(body), &all); err != nil || code != 200 || len(all) != 4 || all[0].Name != "clean logs" ||
		hdr.Get("X-Next-Cursor") != "" || hdr.Get("Link") != "" {
		t.Errorf("GET /api/tasks: %d %v %s", code, hdr, body)
	}
	if len(ov.Jobs) != 5 || ov.Jobs[0].ID != "export-q3" || ov.Jobs[1].ID != "sms-15550100" || len(ov.Dead) != 1 || ov.Dead[0].Error != "gateway rejected the number" || len(ov.Processes) != 2 {
		t.Errorf("jobs %+v dead %+v processes %+v", ov.Jobs, ov.Dead, ov.Processes)
	}
	// Why a due job waits, only for due jobs; a job's unique identity.
	for _, j := range ov.Jobs {
		want := ""
		if j.ID == "export-q3" {
			want = "no process"
		}
		if j.Waiting != want {
			t.Errorf("overview job %s: waiting %q, want %q", j.ID, j.Waiting, want)
		}
		if (j.Unique != "") != (j.ID == "sms-15550199") {
			t.Errorf("overview job %s: unique %q", j.ID, j.Unique)
		}
	}

	var task dashboard.Task
	cl.json("GET", "/api/tasks/minute%20report", 200, &task)
	if task.Name != "minute report" || task.TZ != "Europe/Berlin" || task.NextRun.IsZero() {
		t.Errorf("task %+v", task)
	}
	cl.json("GET", "/api/tasks/nope", 404, nil)
	var runs []dashboard.Run
	cl.json("GET", "/api/tasks/heartbeat/history?limit=2", 200, &runs)
	if len(runs) != 2 || runs[0].Outcome != "ok" || runs[0].Process == "" {
		t.Errorf("history %+v", runs)
	}
	cl.json("GET", "/api/tasks/heartbeat/history?limit=x", 400, nil)

	cl.json("POST", "/api/tasks/clean%20logs/pause", 200, nil)
	if d.status("clean logs") != "paused" {
		t.Errorf("after pause: %s", d.status("clean logs"))
	}
	cl.json("POST", "/api/tasks/clean%20logs/trigger", 409, nil)
	cl.json("POST", "/api/tasks/clean%20logs/resume", 200, nil)
	var trig map[string]any
	cl.json("POST", "/api/tasks/clean%20logs/trigger", 200, &trig)
	if trig["fire"] == nil {
		t.Errorf("trigger: %v", trig)
	}
	cl.json("POST", "/api/tasks/clean%20logs/disable", 200, nil)
	cl.json("POST", "/api/tasks/clean%20logs/enable", 200, nil)
	cl.json("POST", "/api/tasks/clean%20logs/explode", 404, nil)
	if d.status("clean logs") != "active" {
		t.Errorf("after enable: %s", d.status("clean logs"))
	}

	var jobs []dashboard.Job
	cl.json("GET", "/api/jobs?state=dead", 200, &jobs)
	if len(jobs) != 1 || jobs[0].ID != "sms-0001" || jobs[0].State != "dead" {
		t.Errorf("dead jobs %+v", jobs)
	}
	jobs = nil
	cl.json("GET", "/api/jobs?state=pending&task=export%20pdf", 200, &jobs)
	if len(jobs) != 1 || jobs[0].Waiting != "no process" {
		t.Errorf("pending export pdf jobs %+v: want one waiting for no process", jobs)
	}
	cl.json("GET", "/api/jobs?state=lost", 400, nil)
	var job dashboard.Job
	cl.json("GET", "/api/jobs/sms-15550101", 200, &job)
	if job.Task != "send sms" || job.State != "pending" || !strings.Contains(string(job.Payload), "4711") {
		t.Errorf("job %+v", job)
	}
	cl.json("POST", "/api/jobs/sms-15550101/cancel", 200, nil)
	cl.json("POST", "/api/jobs/sms-15550101/cancel", 404, nil)
	cl.json("GET", "/api/jobs/sms-15550101", 404, nil)
	cl.json("POST", "/api/jobs/sms-0001/retry", 200, nil)
	cl.json("POST", "/api/jobs/sms-0001/explode", 404, nil)
	var procs []dashboard.Process
	cl.json("GET", "/api/processes", 200, &procs)
	if len(procs) != 2 || !procs[0].Alive {
		t.Errorf("processes %+v", procs)
	}

	// The page and its assets come from the binary.
	code, hdr, page := cl.do("GET", "/", nil)
	if code != 200 || !strings.Contains(hdr.Get("Content-Security-Policy"), "default-src 'self'") ||
		!strings.Contains(page, `<script src="/static/app.js" defer></script>`) || !strings.Contains(page, "<title>crontab · crontab</title>") {
		t.Errorf("page: %d %v\n%s", code, hdr, page)
	}
	if regexp.MustCompile(`https?://`).MatchString(strings.ReplaceAll(page, "http://www.w3.org", "")) {
		t.Error("the page loads something from another site")
	}
	for path, ctype := range map[string]string{"/static/app.js": "javascript", "/static/style.css": "text/css"} {
		code, hdr, body := cl.do("GET", path, nil)
		if code != 200 || !strings.Contains(hdr.Get("Content-Type"), ctype) || len(body) < 500 {
			t.Errorf("%s: %d %s (%d bytes)", path, code, hdr.Get("Content-Type"), len(body))
		}
	}
	cl.json("GET", "/metrics", 404, nil) // not configured
	_ = ctx
}
