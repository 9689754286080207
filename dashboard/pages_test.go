package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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

// scale is a private Redis with n run-time tasks dyn-000... of type "send
// sms" (every fifth paused), m pending jobs sms-p000... and one dead job,
// and a scheduler that runs the job types.
type scale struct {
	rdb       *redis.Client
	inspector *crontab.Inspector
	client    *crontab.Client
}

func startScale(t *testing.T, n, m int) *scale {
	t.Helper()
	rdb := redistest.Start(t).Client(t)
	reg := crontab.NewRegistry()
	for _, cfg := range []crontab.TaskConfig{
		{Name: "send sms", New: func() crontab.TaskInterface { return new(sendSMS) }},
		{Name: "export pdf", New: func() crontab.TaskInterface { return new(exportPDF) }},
	} {
		if err := reg.Add(cfg); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	c := crontab.NewClient(rdb, reg, crontab.WithProcessTTL(time.Second))
	for i := range n {
		spec := crontab.TaskSpec{Key: fmt.Sprintf("dyn-%03d", i), Type: "send sms", Params: sendSMS{To: "+1555"}, Expression: "every:1h"}
		if i%5 == 0 {
			spec.Status = crontab.StatusPaused
		}
		if err := c.SetTask(ctx, spec); err != nil {
			t.Fatal(err)
		}
	}
	var jobs []crontab.Job
	for i := range m {
		typ := crontab.TaskInterface(sendSMS{To: fmt.Sprint("+1555", i)})
		if i%4 == 3 {
			typ = exportPDF{Report: fmt.Sprint(i)}
		}
		jobs = append(jobs, crontab.Job{Value: typ, Options: []crontab.EnqueueOption{crontab.In(time.Duration(i+1) * time.Hour), crontab.WithID(fmt.Sprintf("sms-p%03d", i))}})
	}
	jobs = append(jobs, crontab.Job{Value: sendSMS{To: "+0001"}, Options: []crontab.EnqueueOption{crontab.WithID("sms-dead")}})
	if _, err := c.EnqueueMany(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	s, err := crontab.NewScheduler(rdb, reg, crontab.WithLogger(nil), crontab.WithProcessID("scale-1"), crontab.WithProcessTTL(time.Second),
		crontab.WithGracePeriod(time.Second), crontab.WithTasks("send sms"))
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := s.Run(runCtx); err != nil {
			t.Error(err)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	in := crontab.NewInspector(rdb, crontab.WithProcessTTL(time.Second))
	testio.WaitFor(t, 10*time.Second, "the failing job to die", func() bool {
		j, err := in.Job(ctx, "sms-dead")
		return err == nil && j.State == crontab.JobDead
	})
	return &scale{rdb: rdb, inspector: in, client: c}
}

func (s *scale) status(task string) string {
	t, err := s.inspector.Task(context.Background(), task)
	if err != nil {
		return err.Error()
	}
	return string(t.Status)
}

func (c client) post(path string, body any, want int, v any) {
	c.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", c.base+path, bytes.NewReader(b))
	for k, val := range c.hdr {
		req.Header.Set(k, val)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		c.t.Fatalf("POST %s: %d %s; want %d", path, resp.StatusCode, raw, want)
	}
	if v != nil {
		if err := json.Unmarshal(raw, v); err != nil {
			c.t.Fatalf("POST %s: %v in %s", path, err, raw)
		}
	}
}

// TestPageEndpoints: /api/page/tasks pages by cursor with search and
// filters and reads only the page (sparklines included), /api/page/jobs
// pages one state, /api/counts counts, and the bulk endpoints act on each
// item of a selection.
func TestPageEndpoints(t *testing.T) {
	t.Parallel()
	s := startScale(t, 200, 45)
	h, err := dashboard.New(dashboard.Config{Inspector: s.inspector, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	cl := client{t: t, base: srv.URL, hdr: map[string]string{"Authorization": "Bearer t"}}

	seen := map[string]int{}
	pages := 0
	for cursor := ""; ; pages++ {
		var p dashboard.TaskPage
		cl.json("GET", "/api/page/tasks?limit=20&cursor="+cursor, 200, &p)
		if len(p.Tasks) > 60 {
			t.Errorf("a page of 20 holds %d tasks", len(p.Tasks))
		}
		for _, tk := range p.Tasks {
			seen[tk.Name]++
		}
		if cursor = p.NextCursor; cursor == "" {
			break
		}
	}
	if len(seen) != 200 || pages < 4 {
		t.Errorf("%d pages saw %d tasks, want 200", pages+1, len(seen))
	}
	for name, k := range seen {
		if k != 1 {
			t.Errorf("%s on %d pages", name, k)
		}
	}
	var p dashboard.TaskPage
	cl.json("GET", "/api/page/tasks?limit=50&match=dyn-01*", 200, &p)
	var names []string
	for _, tk := range p.Tasks {
		names = append(names, tk.Name)
	}
	if len(p.Tasks) != 10 || p.NextCursor != "" || p.Tasks[0].Name != "dyn-010" || p.Tasks[9].Name != "dyn-019" || p.Tasks[0].Type != "send sms" {
		t.Errorf("match dyn-01*: %q next %q", names, p.NextCursor)
	}
	p = dashboard.TaskPage{}
	cl.json("GET", "/api/page/tasks?limit=1000&status=paused", 200, &p)
	if len(p.Tasks) != 40 {
		t.Errorf("status paused: %d tasks, want 40", len(p.Tasks))
	}
	for _, tk := range p.Tasks {
		if tk.Status != "paused" {
			t.Errorf("status paused lists %s (%s)", tk.Name, tk.Status)
		}
	}
	p = dashboard.TaskPage{}
	cl.json("GET", "/api/page/tasks?limit=1000&type=export%20pdf", 200, &p)
	if len(p.Tasks) != 0 {
		t.Errorf("type export pdf: %d tasks", len(p.Tasks))
	}
	cl.json("GET", "/api/page/tasks?limit=0", 400, nil)
	cl.json("GET", "/api/page/tasks?limit=1001", 400, nil)
	cl.json("GET", "/api/page/tasks?status=asleep", 400, nil)
	cl.json("GET", "/api/page/tasks?cursor=x", 400, nil)
	cl.json("GET", "/api/page/tasks?cursor=13835058055282163712", 400, nil) // 3<<62: no task index

	var jobs []string
	for cursor := ""; ; {
		var jp dashboard.JobPage
		cl.json("GET", "/api/page/jobs?state=pending&limit=10&cursor="+cursor, 200, &jp)
		if len(jp.Jobs) > 10 {
			t.Errorf("a job page of 10 holds %d", len(jp.Jobs))
		}
		for _, j := range jp.Jobs {
			jobs = append(jobs, j.ID)
		}
		if cursor = jp.NextCursor; cursor == "" {
			break
		}
	}
	if len(jobs) != 45 || jobs[0] != "sms-p000" || jobs[44] != "sms-p044" {
		t.Errorf("pending jobs walk: %d, %v", len(jobs), jobs)
	}
	var jp dashboard.JobPage
	cl.json("GET", "/api/page/jobs?state=pending&limit=5&type=export%20pdf", 200, &jp)
	if len(jp.Jobs) != 5 || jp.Jobs[0].ID != "sms-p003" || jp.Jobs[4].ID != "sms-p019" || jp.NextCursor != "20" {
		t.Errorf("export pdf jobs: %+v", jp)
	}
	jp = dashboard.JobPage{}
	cl.json("GET", "/api/page/jobs?state=dead", 200, &jp)
	if len(jp.Jobs) != 1 || jp.Jobs[0].ID != "sms-dead" || jp.Jobs[0].Error != "gateway rejected the number" {
		t.Errorf("dead page: %+v", jp)
	}
	cl.json("GET", "/api/page/jobs", 400, nil)
	cl.json("GET", "/api/page/jobs?state=pending&cursor=-3", 400, nil)

	var counts dashboard.CountsReply
	cl.json("GET", "/api/counts", 200, &counts)
	if counts.Counts.Tasks != 200 || counts.Counts.JobsPending != 45 || counts.Counts.JobsDead != 1 || len(counts.Processes) != 1 ||
		counts.Processes[0].ID != "scale-1" || !counts.Processes[0].Alive || len(counts.Processes[0].Types) != 1 || counts.Processes[0].Types[0] != "send sms" {
		t.Errorf("counts %+v", counts)
	}

	// Bulk: each item's outcome; a bad one does not stop the others.
	var br dashboard.BulkReply
	cl.post("/api/bulk/tasks/pause", map[string][]string{"names": {"dyn-001", "dyn-002", "nope"}}, 200, &br)
	if len(br.Results) != 3 || br.Results[0].Error != "" || br.Results[1].Error != "" || !strings.Contains(br.Results[2].Error, "not found") {
		t.Errorf("bulk pause: %+v", br)
	}
	if s.status("dyn-001") != "paused" || s.status("dyn-002") != "paused" {
		t.Errorf("after bulk pause: %s %s", s.status("dyn-001"), s.status("dyn-002"))
	}
	cl.post("/api/bulk/tasks/resume", map[string][]string{"names": {"dyn-000", "dyn-001", "dyn-002"}}, 200, &br)
	if s.status("dyn-000") != "active" || s.status("dyn-001") != "active" || s.status("dyn-002") != "active" {
		t.Errorf("after bulk resume: %s %s %s", s.status("dyn-000"), s.status("dyn-001"), s.status("dyn-002"))
	}
	br = dashboard.BulkReply{}
	cl.post("/api/bulk/tasks/trigger", map[string][]string{"names": {"dyn-003", "dyn-005"}}, 200, &br)
	if br.Results[0].Error != "" || !strings.Contains(br.Results[1].Error, "paused") {
		t.Errorf("bulk trigger: %+v", br)
	}
	testio.WaitFor(t, 10*time.Second, "the triggered dyn-003 to run", func() bool {
		tk, err := s.inspector.Task(context.Background(), "dyn-003")
		return err == nil && tk.Runs == 1
	})
	// The charts: the run of dyn-003 and the dead job's attempt, in the
	// last minutes (the current one, or the one before if it just turned).
	var st dashboard.StatsReply
	cl.json("GET", "/api/stats", 200, &st)
	if len(st.Minutes) != 60 || st.Minutes[59].Minute.After(time.Now().Add(time.Second)) || time.Since(st.Minutes[59].Minute) > 61*time.Second {
		t.Fatalf("stats: %d minutes, the last %v", len(st.Minutes), st.Minutes[len(st.Minutes)-1].Minute)
	}
	var fires, attempts, jobFailed int64
	for _, m := range st.Minutes {
		fires, attempts, jobFailed = fires+m.Fires, attempts+m.Jobs, jobFailed+m.JobFailed
		if m.Failed > m.Fires || m.LagAvgMS > m.LagMaxMS {
			t.Errorf("minute %+v", m)
		}
	}
	if fires != 1 || attempts != 1 || jobFailed != 1 {
		t.Errorf("the last hour: %d fires, %d job attempts (%d failed); want 1, 1 and 1", fires, attempts, jobFailed)
	}
	br = dashboard.BulkReply{}
	cl.post("/api/bulk/jobs/cancel", map[string][]string{"ids": {"sms-p000", "sms-p001", "sms-dead"}}, 200, &br)
	if br.Results[0].Error != "" || br.Results[1].Error != "" || br.Results[2].Error == "" {
		t.Errorf("bulk cancel: %+v", br)
	}
	if _, err := s.inspector.Job(context.Background(), "sms-p000"); err == nil {
		t.Error("sms-p000 still there after the bulk cancel")
	}
	br = dashboard.BulkReply{}
	cl.post("/api/bulk/jobs/retry", map[string][]string{"ids": {"sms-dead"}}, 200, &br)
	if len(br.Results) != 1 || br.Results[0].Error != "" {
		t.Errorf("bulk retry: %+v", br)
	}
	cl.post("/api/bulk/jobs/explode", map[string][]string{"ids": {"x"}}, 404, nil)
	cl.post("/api/bulk/tasks/explode", map[string][]string{"names": {"x"}}, 404, nil)
	cl.post("/api/bulk/jobs/cancel", map[string][]string{"ids": {}}, 400, nil)
	cl.post("/api/bulk/tasks/pause", map[string][]string{"ids": {"dyn-001"}}, 400, nil)
	cl.post("/api/bulk/tasks/pause", map[string][]string{"names": make([]string, 1001)}, 400, nil)
}

// TestReadOnly: a read-only dashboard answers every mutating endpoint
// with 403 and changes nothing, serves every read, and its page says so
// and has no action buttons.
func TestReadOnly(t *testing.T) {
	t.Parallel()
	s := startScale(t, 3, 2)
	h, err := dashboard.New(dashboard.Config{Inspector: s.inspector, Token: "t", ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	cl := client{t: t, base: srv.URL, hdr: map[string]string{"Authorization": "Bearer t"}}
	for _, path := range []string{"/api/tasks/dyn-001/pause", "/api/tasks/dyn-001/trigger", "/api/tasks/dyn-001/disable",
		"/api/jobs/sms-p000/cancel", "/api/jobs/sms-dead/retry", "/api/bulk/tasks/pause", "/api/bulk/jobs/cancel"} {
		code, _, body := cl.do("POST", path, nil)
		if code != 403 || !strings.Contains(body, "read-only") {
			t.Errorf("read-only POST %s: %d %s", path, code, body)
		}
	}
	// The cookie's way in too, with a good CSRF token.
	var sess map[string]string
	cl.json("GET", "/api/session", 200, &sess)
	if code, _, _ := cl.do("POST", "/api/tasks/dyn-001/resume", map[string]string{"Authorization": "", "Cookie": "crontab_token=t", "X-CSRF-Token": sess["csrf_token"]}); code != 403 {
		t.Errorf("read-only POST with cookie and CSRF token: %d", code)
	}
	if st := s.status("dyn-001"); st != "active" {
		t.Errorf("dyn-001 is %s after refused POSTs", st)
	}
	if _, err := s.inspector.Job(context.Background(), "sms-p000"); err != nil {
		t.Errorf("sms-p000 after a refused cancel: %v", err)
	}
	for _, path := range []string{"/api/page/tasks", "/api/page/jobs?state=pending", "/api/counts", "/api/overview", "/api/tasks/dyn-001"} {
		if code, _, body := cl.do("GET", path, nil); code != 200 {
			t.Errorf("read-only GET %s: %d %s", path, code, body)
		}
	}
	_, _, page := cl.do("GET", "/", nil)
	if !strings.Contains(page, `<meta name="read-only" content="true">`) || !strings.Contains(page, `id="read-only"`) ||
		strings.Contains(page, `data-bulk=`) || strings.Contains(page, `id="tasks-all"`) {
		t.Errorf("read-only page:\n%s", page)
	}

	rw, err := dashboard.New(dashboard.Config{Inspector: s.inspector, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/", nil)
	req.Header.Set("Authorization", "Bearer t")
	rw.ServeHTTP(w, req)
	if body := w.Body.String(); !strings.Contains(body, `<meta name="read-only" content="false">`) || !strings.Contains(body, `data-bulk="pause"`) {
		t.Errorf("read-write page lacks its bulk buttons:\n%s", body)
	}
}

func (c client) send(method, path, body string) (int, string) {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.base+path, strings.NewReader(body))
	for k, v := range c.hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestTaskForm: with a Client, PUT /api/tasks/NAME creates and edits a
// run-time task through SetTask, whose refusals answer 400 with the
// reason, and DELETE removes it; without a Client both answer 501, and a
// read-only dashboard refuses them.
func TestTaskForm(t *testing.T) {
	t.Parallel()
	s := startScale(t, 1, 0)
	ctx := context.Background()
	h, err := dashboard.New(dashboard.Config{Inspector: s.inspector, Client: s.client, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	cl := client{t: t, base: srv.URL, hdr: map[string]string{"Authorization": "Bearer t"}}
	code, body := cl.send("PUT", "/api/tasks/otp%20sms", `{"type": "send sms", "expression": "every:5m", "params": {"to": "+1555", "text": "hi"}, "tz": "Europe/Berlin", "timeout_ms": 7000}`)
	var tk dashboard.Task
	if code != 200 || json.Unmarshal([]byte(body), &tk) != nil || tk.Name != "otp sms" || tk.Source != "dynamic" || tk.NextRun.IsZero() {
		t.Fatalf("PUT a new task: %d %s", code, body)
	}
	got, err := s.inspector.Task(ctx, "otp sms")
	if err != nil || got.Expression != "every:5m" || got.TZ != "Europe/Berlin" || got.Timeout != 7*time.Second || !strings.Contains(string(got.Params), `"+1555"`) {
		t.Errorf("the new task in Redis: %+v, %v", got, err)
	}
	if code, body := cl.send("PUT", "/api/tasks/otp%20sms", `{"type": "send sms", "expression": "hourly:15", "status": "paused"}`); code != 200 {
		t.Errorf("PUT an edit: %d %s", code, body)
	}
	if got, _ := s.inspector.Task(ctx, "otp sms"); got.Expression != "hourly:15" || got.Status != crontab.StatusPaused {
		t.Errorf("the edited task: %s %s", got.Expression, got.Status)
	}
	for in, want := range map[string]string{
		`{"type": "send sms", "expression": "every:zz"}`:                     "expression",
		`{"type": "nope", "expression": "every:5m"}`:                         "not registered",
		`{"type": "send sms", "expression": "every:5m", "status": "sleepy"}`: "status",
		`{"type": "send sms", "expression": "every:5m", "params": [1]}`:      "params",
		`{"type": "send sms", "expression": "every:5m", "colour": "red"}`:    "colour",
		`{"type": "send sms", "expression": "every:5m", "timeout_ms": -1}`:   "timeout_ms",
	} {
		if code, body := cl.send("PUT", "/api/tasks/bad", in); code != 400 || !strings.Contains(body, want) {
			t.Errorf("PUT %s: %d %s; want 400 naming %s", in, code, body, want)
		}
	}
	if _, err := s.inspector.Task(ctx, "bad"); err == nil {
		t.Error("a refused task was written")
	}
	if code, body := cl.send("DELETE", "/api/tasks/otp%20sms", ""); code != 200 {
		t.Errorf("DELETE: %d %s", code, body)
	}
	if code, _ := cl.send("DELETE", "/api/tasks/otp%20sms", ""); code != 404 {
		t.Errorf("DELETE again: %d, want 404", code)
	}
	if _, _, page := cl.do("GET", "/", nil); !strings.Contains(page, `id="task-form"`) || !strings.Contains(page, `<meta name="editable" content="true">`) {
		t.Error("the page with a Client lacks the task form")
	}

	// Without a Client (crontab serve): the form writes through the
	// Inspector, which knows the types the live processes run.
	h2, err := dashboard.New(dashboard.Config{Inspector: s.inspector, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	srv2 := httptest.NewServer(h2)
	defer srv2.Close()
	cl2 := client{t: t, base: srv2.URL, hdr: map[string]string{"Authorization": "Bearer t"}}
	if code, body := cl2.send("PUT", "/api/tasks/no%20code", `{"type": "send sms", "expression": "every:5m", "params": {"to": "+1"}}`); code != 200 {
		t.Errorf("PUT without a Client: %d %s", code, body)
	}
	if got, err := s.inspector.Task(ctx, "no code"); err != nil || got.Expression != "every:5m" {
		t.Errorf("the task written without a Client: %+v, %v", got, err)
	}
	if code, body := cl2.send("PUT", "/api/tasks/bad", `{"type": "export pdf", "expression": "every:5m"}`); code != 400 || !strings.Contains(body, "not registered") {
		t.Errorf("PUT of a type no live process runs, without a Client: %d %s; want 400", code, body)
	}
	if code, body := cl2.send("DELETE", "/api/tasks/no%20code", ""); code != 200 {
		t.Errorf("DELETE without a Client: %d %s", code, body)
	}
	if _, _, page := cl2.do("GET", "/", nil); !strings.Contains(page, `id="task-form"`) {
		t.Error("the page without a Client lacks the task form")
	}
	// Read-only: refused, and no form.
	ro, err := dashboard.New(dashboard.Config{Inspector: s.inspector, Client: s.client, Token: "t", ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	srv3 := httptest.NewServer(ro)
	defer srv3.Close()
	cl3 := client{t: t, base: srv3.URL, hdr: map[string]string{"Authorization": "Bearer t"}}
	if code, body := cl3.send("PUT", "/api/tasks/x", `{"type": "send sms", "expression": "every:5m"}`); code != 403 {
		t.Errorf("PUT (read-only): %d %s, want 403", code, body)
	}
	if code, _ := cl3.send("DELETE", "/api/tasks/dyn-000", ""); code != 403 {
		t.Errorf("DELETE (read-only): %d, want 403", code)
	}
	if _, _, page := cl3.do("GET", "/", nil); strings.Contains(page, `id="task-form"`) {
		t.Error("the read-only page shows the task form")
	}
	if _, err := s.inspector.Task(ctx, "dyn-000"); err != nil {
		t.Errorf("dyn-000 after refused DELETEs: %v", err)
	}
}
