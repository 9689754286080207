package rdb

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/redistest"
)

// TestRunTimeTaskLayout: a run-time task's hash stores only what is its
// own and not the default, in listpack; a field set away from its default
// is written, and deleted again when set back; the class goes to the
// classes hash, once per type.
func TestRunTimeTaskLayout(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t).Client(t)
	r := New(c, "ns")
	now := time.Now().UnixMilli()
	d := TaskDecl{Key: "tenant-1", Class: "app.Report", Type: "report", Expression: "every:1h", TZ: "UTC",
		Interval: "every hour", NextMS: now + 3600_000, Misfire: "once", Params: `{"tenant":1}`}
	if res, err := r.SetTask(ctx, now, d); err != nil || res != TaskCreated {
		t.Fatalf("SetTask: %v, %v", res, err)
	}
	fields := func() []string { return slices.Sorted(maps.Keys(c.HGetAll(ctx, r.k.Task("tenant-1")).Val())) }
	want := []string{"created_at", "expression", "next_run", "params", "type"} // no status (active), no source (run-time)
	if got := fields(); !slices.Equal(got, want) {
		t.Errorf("fields of a new run-time task: %v, want %v", got, want)
	}
	if enc := c.ObjectEncoding(ctx, r.k.Task("tenant-1")).Val(); enc != "listpack" {
		t.Errorf("encoding %q, want listpack", enc)
	}
	if got := c.HGet(ctx, r.k.Classes(), "report").Val(); got != "app.Report" {
		t.Errorf("class of the type in the classes hash: %q", got)
	}

	// Away from every default: each is stored.
	d.TZ, d.Timeout, d.Concurrent, d.Misfire, d.Jitter, d.MaxRunning = "Europe/Paris", time.Minute, true, "skip", time.Second, 3
	if _, err := r.SetTask(ctx, now, d); err != nil {
		t.Fatal(err)
	}
	h := c.HGetAll(ctx, r.k.Task("tenant-1")).Val()
	for f, v := range map[string]string{"tz": "Europe/Paris", "timeout": "60000", "concurrent": "1", "misfire": "skip",
		"jitter": "1000", "max_running": "3"} {
		if h[f] != v {
			t.Errorf("field %s = %q, want %q", f, h[f], v)
		}
	}
	// Back to the defaults: deleted again.
	d.TZ, d.Timeout, d.Concurrent, d.Misfire, d.Jitter, d.MaxRunning, d.Params = "UTC", 0, false, "once", 0, 0, ""
	if _, err := r.SetTask(ctx, now, d); err != nil {
		t.Fatal(err)
	}
	if got, want := fields(), []string{"created_at", "expression", "next_run", "type"}; !slices.Equal(got, want) {
		t.Errorf("fields after setting the defaults back: %v, want %v", got, want)
	}

	// What the dispatcher reads of it: the defaults.
	reads, err := r.ReadTaskStates(ctx, []string{"tenant-1"})
	if err != nil || reads[0].Err != nil {
		t.Fatalf("ReadTaskStates: %v %v", err, reads[0].Err)
	}
	if st := reads[0].State; st.TZ != "UTC" || st.Misfire != "once" || st.Params != "" || st.Type != "report" || st.Status != "active" {
		t.Errorf("state read: %+v", st)
	}
}

// TestRunTimeTaskStatusField: a run-time task stores its status only when
// it is not active: absent when created, present when paused (SetStatus
// or SetTask), absent again when resumed; the hash stays listpack; a
// claim fires a task without status, and skips it paused; Trigger and
// Requeue take a task without status for an active one.
func TestRunTimeTaskStatusField(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t).Client(t)
	r := New(c, "ns")
	d := TaskDecl{Key: "a", Type: "a", Expression: "every:1s", NextMS: 1000}
	if res, err := r.SetTask(ctx, 500, d); err != nil || res != TaskCreated {
		t.Fatalf("SetTask: %v, %v", res, err)
	}
	status := func() (string, bool) {
		v, err := c.HGet(ctx, r.k.Task("a"), FieldStatus).Result()
		return v, err == nil
	}
	if v, ok := status(); ok {
		t.Errorf("a new active task stores status %q, want none", v)
	}
	if enc := c.ObjectEncoding(ctx, r.k.Task("a")).Val(); enc != "listpack" {
		t.Errorf("encoding %q, want listpack", enc)
	}
	if found, err := r.SetStatus(ctx, "a", "paused"); err != nil || !found {
		t.Fatalf("SetStatus paused: %v, %v", found, err)
	}
	if v, _ := status(); v != "paused" {
		t.Errorf("paused: status %q, want paused", v)
	}
	out, err := r.ClaimFires(ctx, r.NewFireClaim("p", testHistory, testLeases, []FireCandidate{candidate("a")}), 1)
	if err != nil || out[0].Outcome != FirePaused {
		t.Errorf("claim of the paused task: %v, %v; want paused", out, err)
	}
	if st, _, err := r.Trigger(ctx, "a"); err != nil || st != "paused" {
		t.Errorf("Trigger of the paused task: %q, %v", st, err)
	}
	if found, err := r.SetStatus(ctx, "a", "active"); err != nil || !found {
		t.Fatalf("SetStatus active: %v, %v", found, err)
	}
	if v, ok := status(); ok {
		t.Errorf("resumed: status %q stored, want none", v)
	}
	// Through SetTask: paused stored, active deleted; "" keeps it.
	d.Status = "paused"
	must(t, errOf(r.SetTask(ctx, 500, d)))
	if v, _ := status(); v != "paused" {
		t.Errorf("SetTask paused: status %q", v)
	}
	d.Status = ""
	must(t, errOf(r.SetTask(ctx, 500, d)))
	if v, _ := status(); v != "paused" {
		t.Errorf("SetTask keeping the status: %q, want paused", v)
	}
	d.Status = "active"
	must(t, errOf(r.SetTask(ctx, 500, d)))
	if v, ok := status(); ok {
		t.Errorf("SetTask active: status %q stored, want none", v)
	}
	reads, err := r.ReadTaskStates(ctx, []string{"a"})
	if err != nil || reads[0].Err != nil || reads[0].State.Status != "active" {
		t.Fatalf("ReadTaskStates: %+v, %v", reads, err)
	}

	// A claim fires it; Trigger and Requeue see an active task.
	c.HSet(ctx, r.k.Task("a"), "next_run", 1000)
	out, err = r.ClaimFires(ctx, r.NewFireClaim("p", testHistory, testLeases, []FireCandidate{candidate("a")}), 1)
	if err != nil || !out[0].Outcome.Won() {
		t.Errorf("claim of a task without status: %v, %v; want it fired", out, err)
	}
	must(t, errOf(r.SetTask(ctx, 500, TaskDecl{Key: "b", Type: "a", Expression: "every:1s", NextMS: 1000})))
	if st, _, err := r.Trigger(ctx, "b"); err != nil || (st != "ok" && st != "due") {
		t.Errorf("Trigger of a task without status: %q, %v; want ok or due", st, err)
	}
	must(t, c.ZRem(ctx, r.k.Queue(), "b").Err())
	if ok, err := r.Requeue(ctx, "b", 5000); err != nil || !ok {
		t.Errorf("Requeue of a task without status whose entry was lost: %v, %v; want requeued", ok, err)
	}
	if v, ok := c.HGet(ctx, r.k.Task("b"), FieldStatus).Result(); ok == nil {
		t.Errorf("Trigger or Requeue wrote status %q", v)
	}
}

// TestRunTimeTaskSource: a run-time task's hash has no source, and yet is
// one: RemoveTask removes it, SetTask updates it, Prune leaves it. A
// declared task (source static, which Register always writes) still
// refuses SetTask and RemoveTask, and declaring a run-time task's key
// gives it the seed fields, status included.
func TestRunTimeTaskSource(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t).Client(t)
	r := New(c, "ns")
	declared(t, r) // "a", declared in code
	if src := c.HGet(ctx, r.k.Task("a"), "source").Val(); src != SourceStatic {
		t.Fatalf("declared task's source %q, want static", src)
	}
	if res, err := r.SetTask(ctx, 500, TaskDecl{Key: "a", Type: "a", Expression: "every:1h", NextMS: 3600_000}); err != nil || res != TaskDeclaredErr {
		t.Errorf("SetTask of a declared task: %v, %v; want refused", res, err)
	}
	if got := c.HGet(ctx, r.k.Task("a"), FieldExpression).Val(); got != "every:1s" {
		t.Errorf("the refused SetTask wrote expression %q", got)
	}
	if res, err := r.RemoveTask(ctx, "a"); err != nil || res != -1 {
		t.Errorf("RemoveTask of a declared task: %v, %v; want -1", res, err)
	}

	must(t, errOf(r.SetTask(ctx, 500, TaskDecl{Key: "rt", Type: "a", Expression: "every:1s", NextMS: 1000})))
	if n := c.HExists(ctx, r.k.Task("rt"), "source").Val(); n {
		t.Fatalf("a run-time task stores source")
	}
	if res, err := r.SetTask(ctx, 500, TaskDecl{Key: "rt", Type: "a", Expression: "every:1h", NextMS: 3600_000}); err != nil || res != TaskScheduled {
		t.Errorf("SetTask of a run-time task without source: %v, %v; want rescheduled (not created, not refused)", res, err)
	}
	if c.HGet(ctx, r.k.Task("rt"), "created_at").Val() != "500" {
		t.Errorf("the update rewrote created_at")
	}
	if pruned, err := r.Prune(ctx, "rt", 0, 1<<50); err != nil || pruned {
		t.Errorf("Prune of a run-time task: %v, %v; want left alone", pruned, err)
	}
	if res, err := r.RemoveTask(ctx, "rt"); err != nil || res != 1 {
		t.Errorf("RemoveTask of a run-time task without source: %v, %v; want removed", res, err)
	}
	if c.Exists(ctx, r.k.Task("rt")).Val() != 0 || c.ZScore(ctx, r.k.Queue(), "rt").Err() == nil {
		t.Errorf("RemoveTask left the hash or its queue entry")
	}

	// Declared over a run-time task: the declared task has every seed field.
	must(t, errOf(r.SetTask(ctx, 500, TaskDecl{Key: "b", Type: "a", Expression: "every:1s", NextMS: 1000})))
	if _, _, err := r.Register(ctx, 600, []TaskDecl{{Key: "b", Class: "A", Type: "a", Expression: "every:1s", TZ: "UTC",
		Interval: "every second", Status: "active", NextMS: 1000, Timeout: time.Minute, Misfire: "once"}}); err != nil {
		t.Fatal(err)
	}
	h := c.HGetAll(ctx, r.k.Task("b")).Val()
	if h["source"] != SourceStatic || h[FieldStatus] != "active" {
		t.Errorf("declared over a run-time task: source %q, status %q; want static, active", h["source"], h[FieldStatus])
	}
	if found, err := r.SetStatus(ctx, "b", "active"); err != nil || !found || c.HGet(ctx, r.k.Task("b"), FieldStatus).Val() != "active" {
		t.Errorf("SetStatus active of a declared task deleted its seed status field")
	}
}

// TestRunTimeTaskOldLayout: a run-time task's hash as an older release
// wrote it (status active and source dynamic stored, its name, class,
// interval) is read the same, fires, and an update takes it to the
// compact layout.
func TestRunTimeTaskOldLayout(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t).Client(t)
	r := New(c, "ns")
	must(t, c.HSet(ctx, r.k.Task("old"), "name", "old", "class", "A", "type", "a", "expression", "every:1s",
		"interval", "every second", "next_run", 1000, "status", "active", "source", "dynamic", "created_at", 100).Err())
	must(t, c.ZAdd(ctx, r.k.Queue(), redis.Z{Score: 1000, Member: "old"}).Err())
	must(t, c.SAdd(ctx, r.k.Tasks(), "old").Err())
	out, err := r.ClaimFires(ctx, r.NewFireClaim("p", testHistory, testLeases, []FireCandidate{candidate("old")}), 1)
	if err != nil || !out[0].Outcome.Won() {
		t.Errorf("claim of an old-layout task: %v, %v", out, err)
	}
	if res, err := r.SetTask(ctx, 500, TaskDecl{Key: "old", Type: "a", Expression: "every:1s", NextMS: 3000}); err != nil || res != TaskUpdated {
		t.Errorf("SetTask of an old-layout task: %v, %v; want updated in place", res, err)
	}
	got := slices.Sorted(maps.Keys(c.HGetAll(ctx, r.k.Task("old")).Val()))
	want := []string{"created_at", "expression", "last_run", "next_run", "type"}
	if !slices.Equal(got, want) {
		t.Errorf("fields after an update: %v, want %v", got, want)
	}
	// An old paused one keeps its status.
	must(t, c.HSet(ctx, r.k.Task("oldp"), "type", "a", "expression", "every:1s", "next_run", 1000,
		"status", "paused", "source", "dynamic", "created_at", 100).Err())
	must(t, errOf(r.SetTask(ctx, 500, TaskDecl{Key: "oldp", Type: "a", Expression: "every:1s", NextMS: 3000})))
	if st := c.HGet(ctx, r.k.Task("oldp"), FieldStatus).Val(); st != "paused" {
		t.Errorf("old paused task after an update: status %q", st)
	}
	if res, err := r.RemoveTask(ctx, "oldp"); err != nil || res != 1 {
		t.Errorf("RemoveTask of an old-layout task: %v, %v", res, err)
	}
}

// TestClaimLockTTLOfTheType: the lock of a fire whose hash has no timeout
// (a run-time task of its type's timeout) lasts the candidate's Timeout,
// the type's as the claiming process has it; a timeout in the hash wins.
func TestClaimLockTTLOfTheType(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t).Client(t)
	r := New(c, "ns")
	must(t, c.HSet(ctx, r.k.Task("own"), "next_run", 1000, "status", "active").Err())
	must(t, c.HSet(ctx, r.k.Task("set"), "next_run", 1000, "status", "active", "timeout", 60_000).Err())
	own, set := candidate("own"), candidate("set")
	own.Timeout, set.Timeout = 90*time.Second, 90*time.Second
	out, err := r.ClaimFires(ctx, r.NewFireClaim("p", testHistory, testLeases, []FireCandidate{own, set}), 2)
	if err != nil || !out[0].Outcome.Won() || !out[1].Outcome.Won() {
		t.Fatalf("claim: %v, %v", out, err)
	}
	if ttl := c.PTTL(ctx, r.k.Lock("own")).Val(); ttl <= 60*time.Second || ttl > 90*time.Second {
		t.Errorf("lock of a task without a timeout: TTL %v, want the type's 90s", ttl)
	}
	if ttl := c.PTTL(ctx, r.k.Lock("set")).Val(); ttl <= 30*time.Second || ttl > 60*time.Second {
		t.Errorf("lock of a task with a timeout of 60s: TTL %v", ttl)
	}
}

// TestReadQueueWindow: the window is the due entries (up to the count),
// the next instant's entries (all of it, or up to the count), the instant
// after it and the latest due, whatever else is queued.
func TestReadQueueWindow(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t).Client(t)
	r := New(c, "ns")
	add := queueAdder(t, c, r)
	add(100, "a", "b")
	add(200, "c")
	add(1000, "n1", "n2", "n3")
	add(2000, "later")
	for i := range 50 {
		add(3000+int64(i), fmt.Sprintf("far%d", i))
	}
	w, err := r.ReadQueueWindow(ctx, WindowRead{NowMS: 500, Due: 10, Next: 10, Latest: 2, SpanMS: 0, HorizonMS: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	names := func(es []Entry) string {
		var s []string
		for _, e := range es {
			s = append(s, fmt.Sprintf("%s@%d", e.Member, e.Score))
		}
		return strings.Join(s, " ")
	}
	if got := names(w.Due); got != "a@100 b@100 c@200" {
		t.Errorf("due %q", got)
	}
	if got := names(w.Next); got != "n1@1000 n2@1000 n3@1000" || !w.NextAll || w.After != 2000 {
		t.Errorf("next %q (all %v), after %d; want n1-n3 at 1000, all, after 2000", got, w.NextAll, w.After)
	}
	if got := names(w.Latest); got != "c@200 b@100" {
		t.Errorf("latest %q", got)
	}
	// Counts bound each part; none past the last instant.
	if w, err = r.ReadQueueWindow(ctx, WindowRead{NowMS: 500, Due: 2, Next: 2, Latest: 0, SpanMS: 0, HorizonMS: 1 << 40}); err != nil {
		t.Fatal(err)
	}
	if len(w.Due) != 2 || len(w.Next) != 2 || w.NextAll || len(w.Latest) != 0 {
		t.Errorf("bounded window: %+v", w)
	}
	if w, err = r.ReadQueueWindow(ctx, WindowRead{NowMS: 5000, Due: 100, Next: 10, Latest: 0, SpanMS: 0, HorizonMS: 1 << 40}); err != nil {
		t.Fatal(err)
	}
	if len(w.Due) != 57 || len(w.Next) != 0 || w.After != -1 {
		t.Errorf("all due: %d due, next %v, after %d", len(w.Due), w.Next, w.After)
	}
	// A next instant at the horizon or beyond: its first entry only, not
	// all of it, and no instant after it read; the due and latest parts as
	// before. Just inside the horizon: read whole.
	if w, err = r.ReadQueueWindow(ctx, WindowRead{NowMS: 500, Due: 10, Next: 10, Latest: 2, HorizonMS: 500}); err != nil {
		t.Fatal(err)
	}
	if got := names(w.Next); got != "n1@1000" || !w.Far || w.NextAll || w.SpanAll || w.After != -1 || w.SpanAfter != -1 ||
		names(w.Span) != got || names(w.Due) != "a@100 b@100 c@200" || names(w.Latest) != "c@200 b@100" {
		t.Errorf("beyond the horizon: next %q span %q (far %v, all %v/%v), after %d/%d, due %q, latest %q",
			got, names(w.Span), w.Far, w.NextAll, w.SpanAll, w.After, w.SpanAfter, names(w.Due), names(w.Latest))
	}
	if w, err = r.ReadQueueWindow(ctx, WindowRead{NowMS: 500, Due: 10, Next: 10, HorizonMS: 501}); err != nil {
		t.Fatal(err)
	}
	if got := names(w.Next); got != "n1@1000 n2@1000 n3@1000" || w.Far || !w.NextAll || w.After != 2000 {
		t.Errorf("inside the horizon: next %q (far %v, all %v), after %d", got, w.Far, w.NextAll, w.After)
	}
}

// TestReadQueueWindowSpan: with a span, the window also holds the entries
// of the instants from the next one to it plus the span (up to the count of
// the next instant's), whether the read holds all of its last instant, and
// the instant after that one; Next, NextAll and After are as without one.
func TestReadQueueWindowSpan(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t).Client(t)
	r := New(c, "ns")
	add := queueAdder(t, c, r)
	names := func(es []Entry) string {
		var s []string
		for _, e := range es {
			s = append(s, fmt.Sprintf("%s@%d", e.Member, e.Score))
		}
		return strings.Join(s, " ")
	}
	add(100, "due")
	add(1000, "n1", "n2")
	add(1001, "m1")
	add(1003, "k1")
	add(1004, "z")
	add(1010, "far")
	w, err := r.ReadQueueWindow(ctx, WindowRead{NowMS: 500, Due: 10, Next: 10, Latest: 0, SpanMS: 3, HorizonMS: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(w.Due); got != "due@100" {
		t.Errorf("due %q", got)
	}
	if got := names(w.Next); got != "n1@1000 n2@1000" || !w.NextAll || w.After != 1001 {
		t.Errorf("next %q (all %v), after %d; want n1, n2 at 1000, all, after 1001", got, w.NextAll, w.After)
	}
	if got := names(w.Span); got != "n1@1000 n2@1000 m1@1001 k1@1003" || !w.SpanAll || w.SpanAfter != 1004 || Instants(w.Span) != 3 {
		t.Errorf("span %q (all %v, %d instants), after %d; want 1000-1003, all, 3 instants, after 1004", got, w.SpanAll, Instants(w.Span), w.SpanAfter)
	}
	// The count of the next instant's bounds the span: it stops inside 1001.
	if w, err = r.ReadQueueWindow(ctx, WindowRead{NowMS: 500, Due: 10, Next: 3, Latest: 0, SpanMS: 3, HorizonMS: 1 << 40}); err != nil {
		t.Fatal(err)
	}
	if got := names(w.Span); got != "n1@1000 n2@1000 m1@1001" || w.SpanAll || w.SpanAfter != 1003 || !w.NextAll {
		t.Errorf("bounded span %q (all %v), after %d, next all %v", got, w.SpanAll, w.SpanAfter, w.NextAll)
	}
	// The next instant alone in its span: the span is it.
	if w, err = r.ReadQueueWindow(ctx, WindowRead{NowMS: 1004, Due: 10, Next: 10, Latest: 0, SpanMS: 3, HorizonMS: 1 << 40}); err != nil {
		t.Fatal(err)
	}
	if got := names(w.Span); got != "far@1010" || names(w.Next) != got || !w.SpanAll || w.SpanAfter != -1 || w.After != -1 {
		t.Errorf("lone instant: span %q next %q (all %v), span after %d, after %d", got, names(w.Next), w.SpanAll, w.SpanAfter, w.After)
	}
}

// TestNoHistoryKept: a history bound of 0 records writes no record, nor
// touches a list kept before, on the paths the scripts write themselves
// (a skipped fire's record in the claim).
func TestNoHistoryKept(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t).Client(t)
	r := New(c, "ns")
	must(t, c.HSet(ctx, r.k.Task("a"), "next_run", 1000, "status", "active").Err())
	must(t, c.HSet(ctx, r.k.Task("b"), "next_run", 1000, "status", "active").Err())
	must(t, c.LPush(ctx, r.k.History("b"), `{"task":"b","fire":1,"end_ms":1}`).Err())
	a, b := candidate("a"), candidate("b")
	a.Skip, b.Skip = true, true
	out, err := r.ClaimFires(ctx, r.NewFireClaim("p", HistoryBound{Records: 0, Age: time.Hour}, testLeases, []FireCandidate{a, b}), 2)
	if err != nil || out[0].Outcome != FireMisfire || out[1].Outcome != FireMisfire {
		t.Fatalf("claim: %v, %v", out, err)
	}
	if n := c.Exists(ctx, r.k.History("a")).Val(); n != 0 {
		t.Errorf("a skip record was written with no history kept: %v", c.LRange(ctx, r.k.History("a"), 0, -1).Val())
	}
	if got := c.LRange(ctx, r.k.History("b"), 0, -1).Val(); len(got) != 1 || got[0] != `{"task":"b","fire":1,"end_ms":1}` {
		t.Errorf("a list kept before: %v, want it untouched", got)
	}
	if got := c.HGet(ctx, r.k.Task("a"), "skips").Val(); got != "1" {
		t.Errorf("skips %q, want 1: the hash still counts", got)
	}
}

// TestRunLeaseInRunsHash: a run's lease is its field of the runs hash
// from the claim to the finish (no key of its own, no TTL: a renewal
// extends the lock only), and gone after; nothing is written to the older
// release's running set or run:<id> keys.
func TestRunLeaseInRunsHash(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t).Client(t)
	r := New(c, "ns")
	must(t, c.HSet(ctx, r.k.Task("a"), "next_run", 1000, "status", "active", "timeout", 1000).Err())
	a := candidate("a")
	legacy := func(when string) {
		t.Helper()
		if n := c.Exists(ctx, r.k.Running(), r.k.Run(a.RunID)).Val(); n != 0 {
			t.Errorf("%s: %d of running, run:<id> written", when, n)
		}
	}
	if out, err := r.ClaimFires(ctx, r.NewFireClaim("p", testHistory, testLeases, []FireCandidate{a}), 1); err != nil || !out[0].Outcome.Won() {
		t.Fatalf("claim: %v, %v", out, err)
	}
	if got := c.HGetAll(ctx, r.k.Runs()).Val(); !maps.Equal(got, map[string]string{a.RunID: a.Lease}) {
		t.Errorf("runs after the claim: %v, want its lease", got)
	}
	if ttl := c.PTTL(ctx, r.k.Runs()).Val(); ttl != -1 {
		t.Errorf("runs TTL %v, want none", ttl)
	}
	if ttl := c.PTTL(ctx, r.k.Lock("a")).Val(); ttl > time.Second {
		t.Errorf("lock TTL after the claim %v, want the timeout 1s", ttl)
	}
	legacy("after the claim")
	must(t, r.RenewRuns(ctx, []RunRenewal{{Task: "a", LockValue: LockValue("p", 1000), TTL: 2 * time.Second}}))
	if ttl := c.PTTL(ctx, r.k.Lock("a")).Val(); ttl <= time.Second || ttl > 2*time.Second {
		t.Errorf("lock TTL after a renewal %v, want 2s", ttl)
	}
	if got := c.HGet(ctx, r.k.Runs(), a.RunID).Val(); got != a.Lease {
		t.Errorf("lease after a renewal %q, want %q", got, a.Lease)
	}
	runs, err := r.ReadRuns(ctx)
	if err != nil || len(runs) != 1 || runs[0] != (RunRead{ID: a.RunID, Lease: a.Lease}) {
		t.Errorf("ReadRuns: %+v, %v", runs, err)
	}
	legacy("after a renewal")
	if _, err := r.FinishRuns(ctx, testHistory, []RunFinish{{RunID: a.RunID, Task: "a", LockValue: LockValue("p", 1000), Outcome: "ok"}}); err != nil {
		t.Fatal(err)
	}
	if n := c.Exists(ctx, r.k.Runs(), r.k.Lock("a")).Val(); n != 0 {
		t.Errorf("after the finish %d of runs, the lock left", n)
	}
	if runs, err := r.ReadRuns(ctx); err != nil || len(runs) != 0 {
		t.Errorf("ReadRuns after the finish: %+v, %v", runs, err)
	}
	legacy("after the finish")
}

// TestCompactHashReaders: every script and reader takes a hash without
// status and source (as SetTask now writes it, here written directly) for
// an active run-time task: the claim fires it, Trigger queues it, Requeue
// puts a lost entry back, ReadTaskStates reads active, SetTask updates it
// (not created anew: created_at kept), RemoveTask removes it.
func TestCompactHashReaders(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t).Client(t)
	r := New(c, "ns")
	compact := func(key string) {
		t.Helper()
		must(t, c.HSet(ctx, r.k.Task(key), "type", "a", "expression", "every:1s", "next_run", 1000, "created_at", 100).Err())
		must(t, c.ZAdd(ctx, r.k.Queue(), redis.Z{Score: 1000, Member: key}).Err())
	}
	compact("a")
	out, err := r.ClaimFires(ctx, r.NewFireClaim("p", testHistory, testLeases, []FireCandidate{candidate("a")}), 1)
	if err != nil || !out[0].Outcome.Won() {
		t.Errorf("claim: %v, %v; want it fired", out, err)
	}
	compact("b")
	if st, _, err := r.Trigger(ctx, "b"); err != nil || (st != "ok" && st != "due") {
		t.Errorf("Trigger: %q, %v; want ok or due", st, err)
	}
	must(t, c.ZRem(ctx, r.k.Queue(), "b").Err())
	if ok, err := r.Requeue(ctx, "b", 5000); err != nil || !ok {
		t.Errorf("Requeue of a lost entry: %v, %v; want requeued", ok, err)
	}
	reads, err := r.ReadTaskStates(ctx, []string{"b"})
	if err != nil || reads[0].Err != nil || reads[0].State.Status != "active" {
		t.Errorf("ReadTaskStates: %+v, %v; want active", reads, err)
	}
	compact("c")
	if res, err := r.SetTask(ctx, 500, TaskDecl{Key: "c", Type: "a", Expression: "every:1h", NextMS: 3600_000}); err != nil || res != TaskScheduled {
		t.Errorf("SetTask: %v, %v; want rescheduled", res, err)
	}
	if got := c.HGet(ctx, r.k.Task("c"), "created_at").Val(); got != "100" {
		t.Errorf("SetTask rewrote created_at: %q", got)
	}
	compact("d")
	if res, err := r.RemoveTask(ctx, "d"); err != nil || res != 1 {
		t.Errorf("RemoveTask: %v, %v; want removed", res, err)
	}
	if c.Exists(ctx, r.k.Task("d")).Val() != 0 {
		t.Errorf("RemoveTask left the hash")
	}
}

// queueAdder returns a function that queues members at score in r's queue.
func queueAdder(t *testing.T, c *redis.Client, r *RDB) func(score int64, members ...string) {
	return func(score int64, members ...string) {
		for _, m := range members {
			must(t, c.ZAdd(context.Background(), r.k.Queue(), redis.Z{Score: float64(score), Member: m}).Err())
		}
	}
}
