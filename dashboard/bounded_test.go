package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gocrontab/crontab/dashboard"
	"github.com/gocrontab/crontab/internal/redistest"
	crontab "github.com/gocrontab/crontab/runtime"
)

// TestBoundedAtScale: with 3000 run-time tasks and 600 pending jobs, one
// GET of /api/tasks or /api/overview reads about a page of task hashes and
// of job data, never all of them; a limit out of 1 to 1000 is a 400 that
// names it; and following the cursors returns every task once.
func TestBoundedAtScale(t *testing.T) {
	t.Parallel()
	const n, m = 3000, 600
	srv := redistest.Start(t)
	ctx := context.Background()
	reg := crontab.NewRegistry()
	if err := reg.Add(crontab.TaskConfig{Name: "send sms", New: func() crontab.TaskInterface { return new(sendSMS) }}); err != nil {
		t.Fatal(err)
	}
	c := crontab.NewClient(srv.Client(t), reg)
	specs := make([]crontab.TaskSpec, n)
	for i := range specs {
		specs[i] = crontab.TaskSpec{Key: fmt.Sprintf("dyn-%04d", i), Type: "send sms", Params: sendSMS{To: "+1555"}, Expression: "every:1h"}
		if i%5 == 0 {
			specs[i].Status = crontab.StatusPaused
		}
	}
	if _, err := c.SetTasks(ctx, specs); err != nil {
		t.Fatal(err)
	}
	jobs := make([]crontab.Job, m)
	for i := range jobs {
		jobs[i] = crontab.Job{Value: sendSMS{To: fmt.Sprint("+1555", i)}, Options: []crontab.EnqueueOption{crontab.In(time.Duration(i+1) * time.Hour)}}
	}
	if _, err := c.EnqueueMany(ctx, jobs); err != nil {
		t.Fatal(err)
	}

	counted := srv.Client(t)
	cnt := countReads(counted)
	h, err := dashboard.New(dashboard.Config{Inspector: crontab.NewInspector(counted), Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	defer hs.Close()
	cl := client{t: t, base: hs.URL, hdr: map[string]string{"Authorization": "Bearer t"}}

	// One request: a page's task hashes (one HGETALL each), not n.
	get := func(path string, v any) (hgetall, hmget, other int64, next string) {
		t.Helper()
		cnt.Reset()
		code, hdr, body := cl.do("GET", path, nil)
		if code != 200 {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
		if err := json.Unmarshal([]byte(body), v); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		return cnt.Count("hgetall"), cnt.Count("hmget"), cnt.Count("fields"), hdr.Get("X-Next-Cursor")
	}
	var tasks []dashboard.Task
	hg, _, _, next := get("/api/tasks?limit=20", &tasks)
	t.Logf("/api/tasks?limit=20 of %d tasks: %d tasks, %d HGETALL", n, len(tasks), hg)
	if len(tasks) < 20 || len(tasks) > 40 || next == "" || hg != int64(len(tasks)) {
		t.Errorf("/api/tasks?limit=20: %d tasks, %d task hashes read, next %q; want 20 to 40, one read each, a next cursor", len(tasks), hg, next)
	}
	tasks = nil
	hg, _, _, next = get("/api/tasks", &tasks)
	t.Logf("/api/tasks (default limit) of %d tasks: %d tasks, %d HGETALL", n, len(tasks), hg)
	if len(tasks) < 1000 || len(tasks) > 2000 || next == "" || hg != int64(len(tasks)) {
		t.Errorf("/api/tasks: %d tasks, %d task hashes read, next %q; want 1000 to 2000 (the default limit, 1000), one read each, a next cursor", len(tasks), hg, next)
	}
	tasks = nil
	hg, hm, _, _ := get("/api/tasks?status=paused&limit=20", &tasks)
	t.Logf("/api/tasks?status=paused&limit=20: %d tasks, %d HGETALL, %d HMGET of task states", len(tasks), hg, hm)
	if len(tasks) < 20 || hg != int64(len(tasks)) || hm > 500 {
		t.Errorf("paused page of 20: %d tasks, %d task hashes and %d task states read; want one hash each, at most 500 states", len(tasks), hg, hm)
	}
	for _, tk := range tasks {
		if tk.Status != "paused" {
			t.Errorf("paused page holds %s (%s)", tk.Name, tk.Status)
			break
		}
	}

	var ov dashboard.Overview
	hg, _, other, _ := get("/api/overview", &ov)
	t.Logf("/api/overview of %d tasks, %d jobs: %d tasks, %d jobs, %d HGETALL, %d HMGET fields of job hashes", n, m, len(ov.Tasks), len(ov.Jobs), hg, other)
	if len(ov.Tasks) < 50 || len(ov.Tasks) > 100 || ov.TasksNextCursor == "" || hg != int64(len(ov.Tasks)) {
		t.Errorf("overview: %d tasks, %d task hashes read, next %q; want 50 to 100 (the default limit), one read each, a next cursor", len(ov.Tasks), hg, ov.TasksNextCursor)
	}
	if len(ov.Jobs) != 50 || ov.Counts.Tasks != n || ov.Counts.JobsPending != m || other > 300 {
		t.Errorf("overview: %d jobs (want the first 50), counts %+v, %d job fields read (want about 2 a job)", len(ov.Jobs), ov.Counts, other)
	}
	ov = dashboard.Overview{}
	get("/api/overview?limit=5&match=dyn-00*", &ov)
	for _, tk := range ov.Tasks {
		if !strings.HasPrefix(tk.Name, "dyn-00") {
			t.Errorf("overview match=dyn-00*: %s", tk.Name)
			break
		}
	}

	// A limit out of range is refused, naming it; so are a bad status and cursor.
	for _, path := range []string{"/api/tasks", "/api/overview", "/api/page/tasks"} {
		for _, q := range []string{"limit=0", "limit=1001", "limit=-1", "limit=x", "status=lost", "cursor=x"} {
			code, _, body := cl.do("GET", path+"?"+q, nil)
			param, _, _ := strings.Cut(q, "=")
			if code != 400 || !strings.Contains(strings.ToLower(body), param) {
				t.Errorf("GET %s?%s: %d %.200s; want 400 naming %s", path, q, code, body, param)
			}
		}
	}

	// Paging through /api/tasks by X-Next-Cursor (and once by Link) sees each task once.
	seen := map[string]int{}
	cursor, pages := "", 0
	for {
		tasks = nil
		path := "/api/tasks?limit=500"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		code, hdr, body := cl.do("GET", path, nil)
		if code != 200 || json.Unmarshal([]byte(body), &tasks) != nil {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
		for _, tk := range tasks {
			seen[tk.Name]++
		}
		pages++
		if cursor = hdr.Get("X-Next-Cursor"); cursor == "" {
			if hdr.Get("Link") != "" {
				t.Errorf("last page has a Link %q", hdr.Get("Link"))
			}
			break
		}
		if want := "<?cursor=" + cursor + "&limit=500>; rel=\"next\""; hdr.Get("Link") != want {
			t.Errorf("Link %q, want %q", hdr.Get("Link"), want)
		}
		if pages > n {
			t.Fatal("the walk does not end")
		}
	}
	if len(seen) != n {
		t.Errorf("the walk of /api/tasks in %d pages saw %d tasks, want %d", pages, len(seen), n)
	}
	for name, k := range seen {
		if k != 1 {
			t.Errorf("/api/tasks walk: %s seen %d times", name, k)
		}
	}

	// The overview's first page, then /api/page/tasks from its cursor.
	seen = map[string]int{}
	ov = dashboard.Overview{}
	get("/api/overview?limit=1000", &ov)
	for _, tk := range ov.Tasks {
		seen[tk.Name]++
	}
	for cursor = ov.TasksNextCursor; cursor != ""; {
		var p dashboard.TaskPage
		cl.json("GET", "/api/page/tasks?limit=1000&cursor="+cursor, 200, &p)
		for _, tk := range p.Tasks {
			seen[tk.Name]++
		}
		cursor = p.NextCursor
	}
	if len(seen) != n {
		t.Errorf("overview then /api/page/tasks saw %d tasks, want %d", len(seen), n)
	}
	for name, k := range seen {
		if k != 1 {
			t.Errorf("overview walk: %s seen %d times", name, k)
		}
	}
}
