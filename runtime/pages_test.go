package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/rdb"
	"github.com/gocrontab/crontab/internal/redistest"
)

// writeTasks declares n tasks named prefix-00000... through the register
// script, 1000 to a pipeline; every tenth is paused, every third has type
// "other".
func writeTasks(t *testing.T, cl redis.UniversalClient, prefix string, n int) {
	t.Helper()
	ctx := context.Background()
	db := rdb.New(cl, DefaultNamespace)
	next := time.Now().Add(time.Hour).UnixMilli()
	for start := 0; start < n; start += 1000 {
		var decls []rdb.TaskDecl
		for i := start; i < min(n, start+1000); i++ {
			st, typ := "active", "main"
			if i%10 == 0 {
				st = "paused"
			}
			if i%3 == 0 {
				typ = "other"
			}
			decls = append(decls, rdb.TaskDecl{Key: fmt.Sprintf("%s-%05d", prefix, i), Type: typ, Class: "x.T",
				Expression: "every:1h", TZ: "UTC", Interval: "every hour", Status: st, NextMS: next,
				Timeout: time.Minute, Misfire: "once"})
		}
		if _, _, err := db.Register(ctx, time.Now().UnixMilli(), decls); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTaskPageAtScale pages through 20000 tasks: a page of 20 reads about
// 20 task hashes (never all of them), and following the cursors visits
// every task exactly once; the filters keep what they say.
func TestTaskPageAtScale(t *testing.T) {
	t.Parallel()
	const n = 20000
	cl := redistest.Start(t).Client(t)
	writeTasks(t, cl, "task", n)
	cnt := redistest.CountCommands(cl, nil)
	in := NewInspector(cl)
	ctx := context.Background()

	start := time.Now()
	page, err := in.TaskPage(ctx, TaskQuery{Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a page of %d of %d tasks: %v, %d SSCAN steps, %d HGETALL", len(page.Tasks), n, time.Since(start), cnt.Count("sscan"), cnt.Count("hgetall"))
	if len(page.Tasks) < 20 || len(page.Tasks) > 40 || page.NextCursor == "" {
		t.Fatalf("first page of 20: %d tasks, next %q", len(page.Tasks), page.NextCursor)
	}
	if got := cnt.Count("hgetall"); got != int64(len(page.Tasks)) || got > 40 {
		t.Errorf("a page of %d tasks read %d task hashes, want one each", len(page.Tasks), got)
	}
	if !slices.IsSortedFunc(page.Tasks, func(a, b TaskInfo) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("a page is not sorted by name")
	}
	if tk := page.Tasks[0]; tk.Expression != "every:1h" || tk.Next.IsZero() || tk.Type == "" {
		t.Errorf("a task of the page: %+v", tk)
	}

	// For comparison, what a list of every task costs.
	cnt.Reset()
	start = time.Now()
	all, err := in.ListTasks(ctx)
	if err != nil || len(all) != n {
		t.Fatalf("ListTasks: %d tasks, %v", len(all), err)
	}
	t.Logf("ListTasks of %d tasks: %v, %d HGETALL", n, time.Since(start), cnt.Count("hgetall"))

	// The whole walk: every task once, never more than a step's over the limit.
	cnt.Reset()
	start = time.Now()
	seen := map[string]int{}
	pages, cursor := 0, ""
	for {
		p, err := in.TaskPage(ctx, TaskQuery{Cursor: cursor, Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(p.Tasks) > 1000 {
			t.Errorf("page %d holds %d tasks, limit 500", pages, len(p.Tasks))
		}
		for _, tk := range p.Tasks {
			seen[tk.Name]++
		}
		if cursor = p.NextCursor; cursor == "" {
			break
		}
		if pages > n {
			t.Fatal("the walk does not end")
		}
	}
	t.Logf("the walk of %d tasks by pages of 500: %d pages, %v", n, pages, time.Since(start))
	if len(seen) != n {
		t.Errorf("the walk saw %d tasks, want %d", len(seen), n)
	}
	for name, k := range seen {
		if k != 1 {
			t.Errorf("task %s seen %d times", name, k)
		}
	}
	if got := cnt.Count("hgetall"); got != n {
		t.Errorf("the walk read %d task hashes, want %d (one each)", got, n)
	}
	if pages < n/1000 {
		t.Errorf("%d pages of 500 for %d tasks", pages, n)
	}

	// MATCH: a glob on the name.
	cnt.Reset()
	start = time.Now()
	var matched []string
	for cursor = ""; ; {
		p, err := in.TaskPage(ctx, TaskQuery{Cursor: cursor, Limit: 50, Match: "task-1234*"})
		if err != nil {
			t.Fatal(err)
		}
		for _, tk := range p.Tasks {
			matched = append(matched, tk.Name)
		}
		if cursor = p.NextCursor; cursor == "" {
			break
		}
	}
	t.Logf("the walk of a match of 10 in %d: %v, %d SSCAN steps", n, time.Since(start), cnt.Count("sscan"))
	slices.Sort(matched)
	want := []string{"task-12340", "task-12341", "task-12342", "task-12343", "task-12344", "task-12345", "task-12346", "task-12347", "task-12348", "task-12349"}
	if !slices.Equal(matched, want) {
		t.Errorf("match task-1234*: %q", matched)
	}
	if got := cnt.Count("hgetall"); got != int64(len(want)) {
		t.Errorf("the match read %d task hashes, want %d", got, len(want))
	}

	// Status and type: only the tasks that pass are read in full.
	cnt.Reset()
	start = time.Now()
	p, err := in.TaskPage(ctx, TaskQuery{Limit: 30, Status: StatusPaused, Type: "other"})
	t.Logf("a filtered page (1 in 30 passes): %d tasks, %v, %d SSCAN steps, %d HMGET, %d HGETALL", len(p.Tasks), time.Since(start), cnt.Count("sscan"), cnt.Count("hmget"), cnt.Count("hgetall"))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Tasks) < 30 || p.NextCursor == "" {
		t.Errorf("paused tasks of type other: %d, next %q", len(p.Tasks), p.NextCursor)
	}
	for _, tk := range p.Tasks {
		var i int
		fmt.Sscanf(tk.Name, "task-%d", &i)
		if tk.Status != StatusPaused || tk.Type != "other" || i%30 != 0 {
			t.Errorf("filtered page holds %s (%s, %s)", tk.Name, tk.Status, tk.Type)
		}
	}
	if got := cnt.Count("hgetall"); got != int64(len(p.Tasks)) {
		t.Errorf("the filtered page read %d full hashes for %d tasks", got, len(p.Tasks))
	}
	if got := cnt.Count("hmget"); got > 20000/10 {
		t.Errorf("the filtered page read the state of %d tasks", got)
	}

	for _, q := range []TaskQuery{{Limit: -1}, {Limit: MaxPageLimit + 1}, {Cursor: "x"}, {Status: "sleeping"}, {Cursor: "13835058055282163712"}} {
		if _, err := in.TaskPage(ctx, q); err == nil {
			t.Errorf("TaskPage(%+v) accepted", q)
		} else if q.Cursor != "" && !errors.Is(err, ErrBadCursor) {
			t.Errorf("TaskPage(%+v): %v, want ErrBadCursor", q, err)
		}
	}
}

// TestTaskPageSmallSet: a set smaller than the limit comes whole in one
// page, sorted, with no next cursor.
func TestTaskPageSmallSet(t *testing.T) {
	t.Parallel()
	cl := redistest.Start(t).Client(t)
	writeTasks(t, cl, "small", 30)
	p, err := NewInspector(cl).TaskPage(context.Background(), TaskQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Tasks) != 30 || p.NextCursor != "" || p.Tasks[0].Name != "small-00000" || p.Tasks[29].Name != "small-00029" {
		t.Errorf("small set: %d tasks, next %q", len(p.Tasks), p.NextCursor)
	}
}

type pageMailJob struct{}

func (pageMailJob) Handle(context.Context) error { return nil }

// TestJobPage pages through pending jobs by rank, exactly, with and
// without a type filter.
func TestJobPage(t *testing.T) {
	t.Parallel()
	cl := redistest.Start(t).Client(t)
	ctx := context.Background()
	reg := testRegistry(t,
		TaskConfig{Name: "sms", New: func() TaskInterface { return new(smsJob) }},
		TaskConfig{Name: "mail", New: func() TaskInterface { return new(pageMailJob) }},
	)
	c := NewClient(cl, reg)
	var jobs []Job
	for i := range 250 {
		jobs = append(jobs, Job{Value: smsJob{To: fmt.Sprint(i)}, Options: []EnqueueOption{In(time.Duration(i+1) * time.Minute), WithID(fmt.Sprintf("j%03d", i))}})
	}
	if _, err := c.EnqueueMany(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	cnt := redistest.CountCommands(cl, nil)
	in := NewInspector(cl)
	var ids []string
	for cursor := ""; ; {
		p, err := in.JobPage(ctx, JobQuery{State: JobPending, Cursor: cursor, Limit: 40})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Jobs) > 40 {
			t.Errorf("page of %d jobs, limit 40", len(p.Jobs))
		}
		for _, j := range p.Jobs {
			ids = append(ids, j.ID)
		}
		if cursor = p.NextCursor; cursor == "" {
			break
		}
	}
	if len(ids) != 250 || ids[0] != "j000" || ids[249] != "j249" || !slices.IsSorted(ids) {
		t.Errorf("pending walk: %d ids, %v...", len(ids), ids[:min(3, len(ids))])
	}
	// One HMGET of the job data (and one of attempts) per page of 40.
	if got := cnt.Count("hmget"); got != 2*7 {
		t.Errorf("the walk sent %d HMGETs, want 14 (2 per page)", got)
	}
	p, err := in.JobPage(ctx, JobQuery{State: JobPending, Limit: 5, Type: "mail"})
	if err != nil || len(p.Jobs) != 0 || p.NextCursor != "" {
		t.Errorf("mail jobs: %+v, %v", p, err)
	}
	p, err = in.JobPage(ctx, JobQuery{State: JobPending, Limit: 5, Type: "sms", Cursor: "245"})
	if err != nil || len(p.Jobs) != 5 || p.Jobs[0].ID != "j245" || p.NextCursor != "" {
		t.Errorf("the last sms jobs: %+v, %v", p, err)
	}
	for _, q := range []JobQuery{{}, {State: "lost"}, {State: JobDead, Limit: -2}, {State: JobRunning, Cursor: "-1"}} {
		if _, err := in.JobPage(ctx, q); err == nil {
			t.Errorf("JobPage(%+v) accepted", q)
		}
	}
}
