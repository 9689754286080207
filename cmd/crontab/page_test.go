package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	crontab "github.com/gocrontab/crontab/runtime"
)

// TestListPages: list -limit pages through the tasks by cursor, each page
// printing its next cursor, and visits every task once; -match, -status
// and -type filter; jobs -cursor pages one state's jobs.
func TestListPages(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	const n = 140
	for i := range n {
		spec := crontab.TaskSpec{Key: fmt.Sprintf("dyn-%03d", i), Type: "mail", Params: mailJob{To: "x"}, Expression: "every:1h"}
		if i%7 == 0 {
			spec.Status = crontab.StatusPaused
		}
		if err := e.client.SetTask(ctx, spec); err != nil {
			t.Fatal(err)
		}
	}

	seen := map[string]int{}
	next := regexp.MustCompile(`\(more: next cursor (\d+); crontab list -cursor \d+ \.\.\.\)`)
	cursor, pages := "", 0
	for {
		args := []string{"list", "-limit", "25", "-match", "dyn-*"}
		if cursor != "" {
			args = append(args, "-cursor", cursor)
		}
		out := e.ok(t, args...)
		pages++
		ls := lines(out)
		if !strings.HasPrefix(ls[0], "TASK | STATUS") {
			t.Fatalf("page %d:\n%s", pages, out)
		}
		for _, l := range ls[1 : len(ls)-1] {
			name, _, _ := strings.Cut(l, " | ")
			if !strings.HasPrefix(name, "dyn-") {
				t.Errorf("page %d lists %q, not matching dyn-*", pages, l)
			}
			seen[name]++
		}
		m := next.FindStringSubmatch(ls[len(ls)-1])
		if m == nil {
			if ls[len(ls)-1] != "(last page)" {
				t.Fatalf("page %d ends with %q", pages, ls[len(ls)-1])
			}
			break
		}
		cursor = m[1]
		if pages > n {
			t.Fatal("the pages do not end")
		}
	}
	if len(seen) != n || pages < 2 {
		t.Errorf("%d pages saw %d tasks, want %d", pages, len(seen), n)
	}
	for name, k := range seen {
		if k != 1 {
			t.Errorf("%s listed %d times", name, k)
		}
	}
	// A continuation that finds nothing more (the cursor of the unqueued
	// set's walk, 2<<62, which is empty here) says so, not that the
	// namespace has no tasks; a filter that keeps none says that.
	if out := e.ok(t, "list", "-cursor", "9223372036854775808"); !strings.Contains(out, "(no more tasks)") {
		t.Errorf("an empty last page:\n%s", out)
	}
	if out := e.ok(t, "list", "-match", "nothing-*"); !strings.Contains(out, `(no task in namespace "crontab" matches)`) {
		t.Errorf("a filter that keeps none:\n%s", out)
	}

	var page struct {
		Tasks []struct {
			Name, Status, Type string
		} `json:"tasks"`
		NextCursor *string `json:"next_cursor"`
	}
	if err := json.Unmarshal([]byte(e.ok(t, "list", "-status", "paused", "-limit", "1000", "-o", "json")), &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Tasks) != n/7 || page.NextCursor == nil || *page.NextCursor != "" {
		t.Errorf("list -status paused: %d tasks, next %v; want %d", len(page.Tasks), page.NextCursor, n/7)
	}
	for _, tk := range page.Tasks {
		if tk.Status != "paused" || tk.Type != "mail" {
			t.Errorf("list -status paused lists %+v", tk)
		}
	}
	if ls := lines(e.ok(t, "list", "-type", "tick")); len(ls) != 3 || !strings.HasPrefix(ls[1], "tick | ") || ls[2] != "(last page)" {
		t.Errorf("list -type tick:\n%s", strings.Join(ls, "\n"))
	}
	for _, bad := range [][]string{{"list", "-limit", "-1"}, {"list", "-limit", "1001"}, {"list", "-status", "asleep"}, {"jobs", "-cursor", "0"}} {
		if _, errs, code := e.crontab(t, bad...); code != 2 {
			t.Errorf("crontab %q: exit %d, want 2 (%s)", bad, code, errs)
		}
	}
	if _, errs, code := e.crontab(t, "list", "-cursor", "nope"); code != 1 || !strings.Contains(errs, "Cursor") {
		t.Errorf("list -cursor nope: exit %d %s", code, errs)
	}

	for i := range 5 {
		if _, err := e.client.Enqueue(ctx, mailJob{To: fmt.Sprint(i)}, crontab.In(time.Duration(i+1)*time.Hour), crontab.WithID(fmt.Sprintf("m-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	out := e.ok(t, "jobs", "-state", "pending", "-cursor", "0", "-limit", "2")
	if ls := lines(out); len(ls) != 4 || !strings.HasPrefix(ls[1], "m-0 |") || !strings.HasPrefix(ls[2], "m-1 |") || ls[3] != "(more: next cursor 2)" {
		t.Errorf("jobs page 1:\n%s", out)
	}
	var jp struct {
		Jobs []struct {
			ID string `json:"id"`
		} `json:"jobs"`
		NextCursor string `json:"next_cursor"`
	}
	json.Unmarshal([]byte(e.ok(t, "jobs", "-state", "pending", "-cursor", "4", "-limit", "2", "-o", "json")), &jp)
	if len(jp.Jobs) != 1 || jp.Jobs[0].ID != "m-4" || jp.NextCursor != "" {
		t.Errorf("jobs last page: %+v", jp)
	}
}

// TestServeReadOnly: serve -read-only refuses every POST with 403 and
// changes nothing; reads work.
func TestServeReadOnly(t *testing.T) {
	t.Parallel()
	e := setup(t)
	base, stop := e.serve(t, "-read-only")
	for _, path := range []string{"api/tasks/nightly/pause", "api/bulk/tasks/pause", "api/jobs/x/cancel"} {
		resp, err := http.Post(base+path, "application/json", strings.NewReader(`{"names":["nightly"]}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 403 || !strings.Contains(string(body), "read-only") {
			t.Errorf("POST %s: %d %s", path, resp.StatusCode, body)
		}
	}
	if tk, err := e.inspector.Task(context.Background(), "nightly"); err != nil || tk.Status != crontab.StatusActive {
		t.Errorf("nightly after refused POSTs: %+v, %v", tk.Status, err)
	}
	resp, err := http.Get(base + "api/page/tasks?limit=10")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"name":"nightly"`) {
		t.Errorf("GET /api/page/tasks: %d %s", resp.StatusCode, body)
	}
	if code := stop(); code != 0 {
		t.Errorf("serve exited %d", code)
	}
}
