package crontabtest_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gocrontab/crontab/crontabtest"
	crontab "github.com/gocrontab/crontab/runtime"
)

// RequireEnqueued returns the one pending job of the type, its payload
// decoded into the type, with what the Inspector knows of it.
func TestRequireEnqueued(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	rdb := crontabtest.StartRedis(t)
	reg := jobTypes(t)
	c := crontab.NewClient(rdb, reg)
	before := time.Now()
	id, err := c.Enqueue(ctx, &sms{To: "+44", Body: "hi"}, crontab.In(time.Hour), crontab.MaxRetries(2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Enqueue(ctx, reminder{Note: "other type"}); err != nil {
		t.Fatal(err)
	}
	job := crontabtest.RequireEnqueued[*sms](ctx, t, rdb, reg)
	if job.ID != id || job.Task != "send sms" || job.State != crontab.JobPending || job.Retries != 2 {
		t.Errorf("job %+v", job.JobInfo)
	}
	if job.Value.To != "+44" || job.Value.Body != "hi" {
		t.Errorf("value %+v", job.Value)
	}
	if d := job.Due.Sub(before); d < time.Hour-time.Second || d > time.Hour+5*time.Second {
		t.Errorf("due in %v, want an hour", d)
	}
	// A value type.
	if got := crontabtest.RequireEnqueued[reminder](ctx, t, rdb, reg); got.Value.Note != "other type" {
		t.Errorf("reminder %+v", got.Value)
	}
	// Filters.
	crontabtest.RequireEnqueued[*sms](ctx, t, rdb, reg, crontabtest.DueBetween(before.Add(59*time.Minute), before.Add(61*time.Minute)))
	crontabtest.RequireNotEnqueued[*sms](ctx, t, rdb, reg, crontabtest.DueBetween(before, before.Add(time.Minute)))
	crontabtest.RequireEnqueued[*sms](ctx, t, rdb, reg, crontabtest.Match(func(s *sms) bool { return s.To == "+44" }))
	crontabtest.RequireNotEnqueued[*sms](ctx, t, rdb, reg, crontabtest.Match(func(s *sms) bool { return s.To == "+1" }))
	crontabtest.RequireNotEnqueued[*sms](ctx, t, rdb, reg, crontabtest.InState(crontab.JobDead))
	crontabtest.RequireEnqueued[*sms](ctx, t, rdb, reg, crontabtest.InState(""))
}

// The assertions fail, and say what is enqueued, when the jobs are not
// what they require.
func TestRequireEnqueuedFailures(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	rdb := crontabtest.StartRedis(t)
	reg := jobTypes(t)
	c := crontab.NewClient(rdb, reg)

	out := mustFail(t, func(tb testing.TB) { crontabtest.RequireEnqueued[*sms](ctx, tb, rdb, reg) })
	wantIn(t, out, `crontabtest: RequireEnqueued: want 1 pending job of "send sms" (*crontabtest_test.sms), found 0 in namespace "crontab"`,
		"no job is enqueued, running or dead in the namespace")

	other, err := c.Enqueue(ctx, reminder{Note: "n"})
	if err != nil {
		t.Fatal(err)
	}
	out = mustFail(t, func(tb testing.TB) { crontabtest.RequireEnqueued[*sms](ctx, tb, rdb, reg) })
	wantIn(t, out, "found 0", "jobs in the namespace (* found):", "   pending "+other+` "remind" due `, `payload {"note":"n"}`)

	ids := make([]string, 2)
	for i, to := range []string{"+1", "+2"} {
		if ids[i], err = c.Enqueue(ctx, &sms{To: to}, crontab.In(time.Duration(i+1)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	out = mustFail(t, func(tb testing.TB) { crontabtest.RequireEnqueued[*sms](ctx, tb, rdb, reg) })
	wantIn(t, out, "want 1 pending job", "found 2 in namespace \"crontab\" (RequireEnqueuedMany asserts several)", " * pending "+ids[0], " * pending "+ids[1], "   pending "+other)
	out = mustFail(t, func(tb testing.TB) { crontabtest.RequireNotEnqueued[*sms](ctx, tb, rdb, reg) })
	wantIn(t, out, "crontabtest: RequireNotEnqueued: want 0 pending jobs", "found 2")
	out = mustFail(t, func(tb testing.TB) {
		crontabtest.RequireEnqueued[*sms](ctx, tb, rdb, reg, crontabtest.Match(func(s *sms) bool { return s.To == "+3" }))
	})
	wantIn(t, out, "(*crontabtest_test.sms) accepted by 1 Match func, found 0")

	many := crontabtest.RequireEnqueuedMany[*sms](ctx, t, rdb, reg, 2)
	if many[0].ID != ids[0] || many[1].ID != ids[1] || many[0].Value.To != "+1" || many[1].Value.To != "+2" {
		t.Errorf("many: %+v", many)
	}
	out = mustFail(t, func(tb testing.TB) { crontabtest.RequireEnqueuedMany[*sms](ctx, tb, rdb, reg, 3) })
	wantIn(t, out, "crontabtest: RequireEnqueuedMany: want 3 pending jobs", "found 2")

	// Other namespaces are other namespaces.
	if _, err := crontab.NewClient(rdb, reg, crontab.WithNamespace("app")).Enqueue(ctx, &sms{To: "+9"}); err != nil {
		t.Fatal(err)
	}
	if j := crontabtest.RequireEnqueued[*sms](ctx, t, rdb, reg, crontabtest.Namespace("app")); j.Value.To != "+9" {
		t.Errorf("namespace app: %+v", j.Value)
	}

	// A payload a scheduler could not decode fails the assertion.
	if _, err := c.EnqueueRaw(ctx, "remind", json.RawMessage(`{"note":5}`)); err != nil {
		t.Fatal(err)
	}
	out = mustFail(t, func(tb testing.TB) { crontabtest.RequireNotEnqueued[reminder](ctx, tb, rdb, reg) })
	wantIn(t, out, `payload {"note":5} does not decode into crontabtest_test.reminder`, "a scheduler's run of it would fail")

	// Mistakes in the test.
	wantIn(t, mustFail(t, func(tb testing.TB) { crontabtest.RequireEnqueued[*probe](ctx, tb, rdb, reg) }),
		"*crontabtest_test.probe is not a registered type")
	wantIn(t, mustFail(t, func(tb testing.TB) { crontabtest.RequireEnqueued[crontab.TaskInterface](ctx, tb, rdb, reg) }),
		"is not a registered type")
	wantIn(t, mustFail(t, func(tb testing.TB) {
		crontabtest.RequireEnqueued[*sms](ctx, tb, rdb, reg, crontabtest.Match(func(r reminder) bool { return true }))
	}), "Match takes a crontabtest_test.reminder, the jobs asserted are *crontabtest_test.sms")
	wantIn(t, mustFail(t, func(tb testing.TB) {
		crontabtest.RequireEnqueued[*sms](ctx, tb, rdb, reg, crontabtest.Namespace("{x}"))
	}),
		"crontabtest: RequireEnqueued: crontab: WithNamespace")
	wantIn(t, mustFail(t, func(tb testing.TB) { crontabtest.RequireEnqueued[*sms](ctx, tb, nil, reg) }), "nil redis client")
	wantIn(t, mustFail(t, func(tb testing.TB) { crontabtest.RequireEnqueuedMany[*sms](ctx, tb, rdb, reg, -1) }), "n is -1")
	if !strings.Contains(mustFail(t, func(tb testing.TB) { crontabtest.RequireEnqueued[*sms](ctx, tb, rdb, nil) }), "nil registry") {
		t.Error("a nil registry is not named")
	}
}
