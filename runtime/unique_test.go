package runtime

import (
	"context"
	"errors"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// uniqJob is a job type whose runs a test watches and steers: a run of a
// job whose Key has a gate waits for the gate to close; Fail makes it fail.
type uniqJob struct {
	Key  string `json:"key"`
	Text string `json:"text"`
	Fail bool   `json:"fail,omitempty"`
}

var (
	uniqMu    sync.Mutex
	uniqRuns  = map[string][]uniqRun{}
	uniqGates = map[string]chan struct{}{}
)

type uniqRun struct {
	job uniqJob
	at  time.Time
	run RunInfo
}

func (j uniqJob) Handle(ctx context.Context) error {
	run, _ := Run(ctx)
	uniqMu.Lock()
	uniqRuns[j.Key] = append(uniqRuns[j.Key], uniqRun{j, time.Now(), run})
	gate := uniqGates[j.Key]
	uniqMu.Unlock()
	if gate != nil {
		<-gate
	}
	if j.Fail {
		return errors.New("failed on purpose")
	}
	return nil
}

func uniqRunsOf(key string) []uniqRun {
	uniqMu.Lock()
	defer uniqMu.Unlock()
	return append([]uniqRun(nil), uniqRuns[key]...)
}

// uniqGate makes the runs of key wait until the returned function is called.
func uniqGate(key string) (open func()) {
	ch := make(chan struct{})
	uniqMu.Lock()
	uniqGates[key] = ch
	uniqMu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

func uniqRegistry(t testing.TB, retries int) *Registry {
	return testRegistry(t, TaskConfig{Name: "uniq", Retries: retries, New: func() TaskInterface { return new(uniqJob) }})
}

// wantDuplicateOf fails unless err is a *DuplicateError naming id.
func wantDuplicateOf(t *testing.T, what string, err error, id string) {
	t.Helper()
	var de *DuplicateError
	if !errors.Is(err, ErrDuplicate) || !errors.As(err, &de) || de.ID != id {
		t.Fatalf("%s: %v, want a DuplicateError of job %q", what, err, id)
	}
}

func TestUniqueOptionsAreValidated(t *testing.T) {
	t.Parallel()
	c := NewClient(redistest.Start(t).Client(t), uniqRegistry(t, 0))
	ctx := context.Background()
	for _, tc := range []struct {
		opts []EnqueueOption
		want string
	}{
		{[]EnqueueOption{Unique(0)}, "Unique(0s)"},
		{[]EnqueueOption{Unique(31 * 24 * time.Hour)}, "Unique(744h0m0s)"},
		{[]EnqueueOption{Debounce(-time.Second)}, "Debounce(-1s)"},
		{[]EnqueueOption{Debounce(time.Second), In(time.Second)}, "Debounce(1s): cannot be combined"},
		{[]EnqueueOption{UniqueKey("k")}, `UniqueKey("k"): needs Unique`},
		{[]EnqueueOption{Unique(time.Second), UniqueKey("")}, "UniqueKey: the key is 0 bytes"},
		{[]EnqueueOption{Unique(time.Second), UniqueKey(strings.Repeat("k", 201))}, "UniqueKey: the key is 201 bytes"},
	} {
		if _, err := c.Enqueue(ctx, uniqJob{Key: "x"}, tc.opts...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Enqueue: %v, want an error with %q", err, tc.want)
		}
	}
}

// A duplicate inside the ttl fails with the first job's id and writes
// nothing; another payload, or the same payload of another key, is not a
// duplicate; UniqueKey makes payloads irrelevant; a job still pending for
// its first attempt keeps its identity past the ttl.
func TestUniqueDuplicateGivesTheExistingID(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	c := NewClient(rdb, uniqRegistry(t, 0))
	key := unique(t)
	id, err := c.Enqueue(ctx, uniqJob{Key: key, Text: "a"}, Unique(200*time.Millisecond), In(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Enqueue(ctx, uniqJob{Key: key, Text: "a"}, Unique(time.Hour), In(time.Hour))
	wantDuplicateOf(t, "second enqueue", err, id)
	if got != id {
		t.Errorf("second enqueue returned id %q, want the first's %q", got, id)
	}
	if _, err := c.Enqueue(ctx, uniqJob{Key: key, Text: "b"}, Unique(time.Hour), In(time.Hour)); err != nil {
		t.Errorf("another payload: %v", err)
	}
	k1, err := c.Enqueue(ctx, uniqJob{Key: key, Text: "c"}, Unique(time.Hour), UniqueKey("tenant-1"), In(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Enqueue(ctx, uniqJob{Key: key, Text: "d"}, Unique(time.Hour), UniqueKey("tenant-1"), In(time.Hour))
	wantDuplicateOf(t, "same UniqueKey", err, k1)
	if n := rdb.ZCard(ctx, newKeys("crontab").Jobs()).Val(); n != 3 {
		t.Errorf("%d jobs pending, want 3", n)
	}
	time.Sleep(300 * time.Millisecond)
	_, err = c.Enqueue(ctx, uniqJob{Key: key, Text: "a"}, Unique(time.Hour))
	wantDuplicateOf(t, "past the ttl, the first still pending", err, id)
	info, err := c.inspect().Job(ctx, id)
	if err != nil || info.Unique != UniqueIdentity("uniq", []byte(`{"key":"`+key+`","text":"a"}`), "") {
		t.Errorf("Job: %+v, %v: want its unique identity", info, err)
	}
}

// uniqScheduler starts a private redis-server with a scheduler of the
// uniq job type on it, and returns a client on it and a payload key of
// the test's own.
func uniqScheduler(t *testing.T) (*redis.Client, *Client, string) {
	t.Helper()
	rdb := redistest.Start(t).Client(t)
	reg := uniqRegistry(t, 0)
	runScheduler(t, rdb, reg)
	return rdb, NewClient(rdb, reg), unique(t)
}

// uniqTTL is the ttl of the tests that check an identity is held inside
// it and free after it: long enough that a run under a loaded race-built
// test binary ends well inside it.
const uniqTTL = 3 * time.Second

// inTTL fails the test when the run took so much of uniqTTL (since start)
// that "inside the ttl" can no longer be checked: a machine that slow
// fails the test, it does not skip it.
func inTTL(t *testing.T, start time.Time) {
	t.Helper()
	if d := time.Since(start); d > uniqTTL-500*time.Millisecond {
		t.Fatalf("the run ended %v after the enqueue, too late in the %v ttl to check that it holds the identity", d, uniqTTL)
	}
}

// A job that succeeded keeps its identity to the end of its ttl (a
// retried request is still a duplicate), and frees it then.
func TestUniqueSucceededJobHoldsToTheTTL(t *testing.T) {
	t.Parallel()
	_, c, key := uniqScheduler(t)
	ctx := context.Background()
	start := time.Now()
	id, err := c.Enqueue(ctx, uniqJob{Key: key}, Unique(uniqTTL))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the job to run", func() bool { return len(uniqRunsOf(key)) == 1 })
	waitFor(t, 5*time.Second, "the job to end", func() bool { _, err := c.inspect().Job(ctx, id); return errors.Is(err, ErrNotFound) })
	inTTL(t, start)
	_, err = c.Enqueue(ctx, uniqJob{Key: key}, Unique(uniqTTL))
	wantDuplicateOf(t, "a retried request after success, inside the ttl", err, id)
	time.Sleep(time.Until(start.Add(uniqTTL + 100*time.Millisecond)))
	if _, err := c.Enqueue(ctx, uniqJob{Key: key}, Unique(time.Hour)); err != nil {
		t.Errorf("after the ttl: %v", err)
	}
}

// A running job keeps its identity past the ttl until it finishes.
func TestUniqueRunningJobHoldsPastTheTTL(t *testing.T) {
	t.Parallel()
	_, c, key := uniqScheduler(t)
	ctx := context.Background()
	open := uniqGate(key)
	defer open()
	id, err := c.Enqueue(ctx, uniqJob{Key: key}, Unique(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the job to run", func() bool { return len(uniqRunsOf(key)) == 1 })
	time.Sleep(300 * time.Millisecond)
	_, err = c.Enqueue(ctx, uniqJob{Key: key}, Unique(100*time.Millisecond))
	wantDuplicateOf(t, "while it runs past the ttl", err, id)
	open()
	waitFor(t, 5*time.Second, "the identity to be free", func() bool {
		_, err := c.Enqueue(ctx, uniqJob{Key: key}, Unique(time.Hour), In(time.Hour))
		return err == nil
	})
}

// A dead job, and a failed one waiting for its retry, hold their identity
// to the end of the ttl, not longer.
func TestUniqueFailedJobFreesAtTheTTL(t *testing.T) {
	t.Parallel()
	for _, retries := range []int{0, 3} {
		rdb := redistest.Start(t).Client(t)
		ctx := context.Background()
		reg := uniqRegistry(t, retries)
		runScheduler(t, rdb, reg, WithRetryBackoff(time.Hour))
		c := NewClient(rdb, reg)
		key := unique(t)
		start := time.Now()
		id, err := c.Enqueue(ctx, uniqJob{Key: key, Fail: true}, Unique(uniqTTL))
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, 5*time.Second, "the job to fail", func() bool {
			j, err := c.inspect().Job(ctx, id)
			return err == nil && j.Attempts >= 1 && (j.State == JobDead || j.State == JobPending)
		})
		inTTL(t, start)
		_, err = c.Enqueue(ctx, uniqJob{Key: key, Fail: true}, Unique(time.Hour))
		wantDuplicateOf(t, "failed, inside the ttl", err, id)
		time.Sleep(time.Until(start.Add(uniqTTL + 100*time.Millisecond)))
		if _, err := c.Enqueue(ctx, uniqJob{Key: key, Fail: true}, Unique(time.Hour), In(time.Hour)); err != nil {
			t.Errorf("retries %d: after the ttl: %v", retries, err)
		}
	}
}

func TestUniqueCancelFreesTheIdentity(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	c := NewClient(rdb, uniqRegistry(t, 0))
	key := unique(t)
	id, err := c.Enqueue(ctx, uniqJob{Key: key}, Unique(time.Hour), In(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Cancel(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Enqueue(ctx, uniqJob{Key: key}, Unique(time.Hour), In(time.Hour)); err != nil {
		t.Errorf("after cancel: %v", err)
	}
}

// Eight producers enqueue one identity at once: one job, seven duplicates
// of it.
func TestUniqueConcurrentEnqueuesMakeOneJob(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	key := unique(t)
	var wg sync.WaitGroup
	ids := make([]string, 8)
	errs := make([]error, 8)
	for i := range 8 {
		c := NewClient(rdb, uniqRegistry(t, 0))
		wg.Go(func() { ids[i], errs[i] = c.Enqueue(ctx, uniqJob{Key: key}, Unique(time.Hour), In(time.Hour)) })
	}
	wg.Wait()
	var winner string
	for i, err := range errs {
		if err == nil {
			if winner != "" {
				t.Fatalf("two jobs enqueued: %q and %q", winner, ids[i])
			}
			winner = ids[i]
		}
	}
	for i, err := range errs {
		if err != nil {
			wantDuplicateOf(t, "a concurrent enqueue", err, winner)
		} else if ids[i] != winner {
			t.Errorf("id %q", ids[i])
		}
	}
	if n := rdb.ZCard(ctx, newKeys("crontab").Jobs()).Val(); n != 1 {
		t.Errorf("%d jobs pending, want 1", n)
	}
}

// Debounce replaces the pending job's payload and moves its due: a burst
// runs once, with the last payload, d after the last enqueue.
func TestDebounceRunsOnceWithTheLastPayload(t *testing.T) {
	t.Parallel()
	_, c, key := uniqScheduler(t)
	ctx := context.Background()
	var id string
	var last time.Time
	for i, text := range []string{"a", "b", "c"} {
		if i > 0 {
			time.Sleep(150 * time.Millisecond)
		}
		last = time.Now()
		got, err := c.Enqueue(ctx, uniqJob{Key: key, Text: text}, Debounce(400*time.Millisecond), UniqueKey("doc-1"))
		if err != nil {
			t.Fatalf("enqueue %s: %v", text, err)
		}
		if i == 0 {
			id = got
		} else if got != id {
			t.Fatalf("enqueue %s: id %q, want the pending job's %q", text, got, id)
		}
	}
	waitFor(t, 5*time.Second, "the job to run", func() bool { return len(uniqRunsOf(key)) > 0 })
	time.Sleep(500 * time.Millisecond)
	runs := uniqRunsOf(key)
	if len(runs) != 1 || runs[0].job.Text != "c" || runs[0].run.JobID != id {
		t.Fatalf("runs %+v, want one of job %q with the last payload", runs, id)
	}
	if early := last.Add(400 * time.Millisecond).Sub(runs[0].at); early > 20*time.Millisecond {
		t.Errorf("ran %v before the last enqueue + d", early)
	}
}

// Debounce while the job runs (it cannot be replaced) enqueues a new job.
func TestDebounceWhileRunningEnqueuesANewJob(t *testing.T) {
	t.Parallel()
	_, c, key := uniqScheduler(t)
	ctx := context.Background()
	open := uniqGate(key)
	defer open()
	first, err := c.Enqueue(ctx, uniqJob{Key: key, Text: "a"}, Debounce(0), UniqueKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the job to run", func() bool { return len(uniqRunsOf(key)) == 1 })
	second, err := c.Enqueue(ctx, uniqJob{Key: key, Text: "b"}, Debounce(time.Hour), UniqueKey("k"))
	if err != nil || second == first {
		t.Fatalf("debounce while running: %q, %v; want a new job", second, err)
	}
	third, err := c.Enqueue(ctx, uniqJob{Key: key, Text: "c"}, Debounce(time.Hour), UniqueKey("k"))
	if err != nil || third != second {
		t.Fatalf("debounce again: %q, %v; want the new pending job %q", third, err, second)
	}
	if j, err := c.inspect().Job(ctx, second); err != nil || string(j.Payload) != `{"key":"`+key+`","text":"c"}` {
		t.Errorf("the pending job: %+v, %v", j, err)
	}
}

// In EnqueueMany each duplicate is its job's error; the other jobs are
// enqueued; a second job of the batch with an earlier one's identity is
// its duplicate.
func TestEnqueueManyReportsUniqueDuplicatesPerJob(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	c := NewClient(rdb, uniqRegistry(t, 0))
	key := unique(t)
	old, err := c.Enqueue(ctx, uniqJob{Key: key, Text: "old"}, Unique(time.Hour), In(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	u := []EnqueueOption{Unique(time.Hour), In(time.Hour)}
	ids, err := c.EnqueueMany(ctx, []Job{
		{Value: uniqJob{Key: key, Text: "a"}, Options: u},
		{Value: uniqJob{Key: key, Text: "old"}, Options: u},
		{Value: uniqJob{Key: key, Text: "b"}, Options: []EnqueueOption{In(time.Hour)}},
		{Value: uniqJob{Key: key, Text: "a"}, Options: u},
	})
	var me *EnqueueManyError
	if !errors.As(err, &me) || len(me.Errs) != 4 || me.Errs[0] != nil || me.Errs[2] != nil {
		t.Fatalf("EnqueueMany: %v, want errors for jobs 1 and 3", err)
	}
	wantDuplicateOf(t, "job 1", me.Errs[1], old)
	wantDuplicateOf(t, "job 3", me.Errs[3], ids[0])
	if ids[1] != old || ids[3] != ids[0] || ids[0] == ids[2] {
		t.Errorf("ids %q", ids)
	}
	if n := rdb.ZCard(ctx, newKeys("crontab").Jobs()).Val(); n != 3 {
		t.Errorf("%d jobs pending, want 3", n)
	}
}

// rawUniqueScript is the script of "Enqueueing from other languages" in
// doc.go, read from there, so the documentation is what is tested.
func rawUniqueScript(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)//\t-- BEGIN unique enqueue\n(.*?)//\t-- END unique enqueue`).FindSubmatch(b)
	if m == nil {
		t.Fatal("doc.go has no unique script")
	}
	var lines []string
	for _, l := range strings.Split(string(m[1]), "\n") {
		lines = append(lines, strings.TrimPrefix(strings.TrimPrefix(l, "//"), "\t"))
	}
	return strings.Join(lines, "\n")
}

// A producer in another language that follows the package doc is
// deduplicated against a Go producer, both ways.
func TestUniqueRawProducerFollowingTheDoc(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	c := NewClient(rdb, uniqRegistry(t, 0))
	script := redis.NewScript(rawUniqueScript(t))
	key := unique(t)
	payload := `{"key":"` + key + `","text":"raw"}`
	ident := UniqueIdentity("uniq", []byte(payload), "")
	raw := func(id string) (string, error) {
		return script.Run(ctx, rdb, []string{"{crontab}:jobs", "{crontab}:jobs:data", "{crontab}:jobs:owner",
			"{crontab}:jobs:failed", "{crontab}:unique", "{crontab}:unique:" + ident},
			id, `{"task":"uniq","payload":`+payload+`,"unique":"`+ident+`"}`, 3_600_000, 60_000, ident).Text()
	}
	got, err := raw("raw-1")
	if err != nil || got != "raw-1" {
		t.Fatalf("raw enqueue: %q, %v", got, err)
	}
	_, err = c.Enqueue(ctx, uniqJob{Key: key, Text: "raw"}, Unique(time.Hour))
	wantDuplicateOf(t, "Go after raw", err, "raw-1")
	if j, err := c.inspect().Job(ctx, "raw-1"); err != nil || j.Unique != ident || j.Task != "uniq" {
		t.Errorf("the raw job: %+v, %v", j, err)
	}

	key2 := unique(t) + "/2"
	id, err := c.Enqueue(ctx, uniqJob{Key: key2, Text: "raw"}, Unique(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	payload = `{"key":"` + key2 + `","text":"raw"}`
	ident = UniqueIdentity("uniq", []byte(payload), "")
	if got, err := raw("raw-2"); err != nil || got != id {
		t.Errorf("raw after Go: %q, %v; want the Go job's id %q", got, err, id)
	}
	if n := rdb.ZCard(ctx, newKeys("crontab").Jobs()).Val(); n != 2 {
		t.Errorf("%d jobs pending, want 2", n)
	}
}

// The master frees the identities whose ttl ended and whose job ended:
// their keys do not accumulate.
func TestUniqueKeysAreSweptAway(t *testing.T) {
	t.Parallel()
	rdb, c, key := uniqScheduler(t)
	ctx := context.Background()
	for i := range 20 {
		if _, err := c.Enqueue(ctx, uniqJob{Key: key, Text: strings.Repeat("x", i)}, Unique(200*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 10*time.Second, "the unique keys to go", func() bool {
		n, _ := rdb.Keys(ctx, "{crontab}:unique*").Result()
		return len(uniqRunsOf(key)) == 20 && len(n) == 0
	})
}

// A dead unique job retried from the dead letters takes its identity
// again when it is free (a duplicate is refused while it runs again), and
// runs without it when another job holds it.
func TestUniqueRetryDeadTakesItsIdentityBack(t *testing.T) {
	t.Parallel()
	rdb, c, key := uniqScheduler(t)
	ctx := context.Background()
	in := c.inspect()
	ident := UniqueIdentity("uniq", nil, key)
	dead := func(id string, runs int) {
		t.Helper()
		waitFor(t, 10*time.Second, "the job to be dead", func() bool {
			j, err := in.Job(ctx, id)
			return err == nil && j.State == JobDead && len(uniqRunsOf(key)) == runs
		})
	}
	id, err := c.Enqueue(ctx, uniqJob{Key: key, Fail: true}, UniqueKey(key), Unique(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	dead(id, 1)
	waitFor(t, 10*time.Second, "the master to free the identity", func() bool {
		return rdb.Exists(ctx, newKeys("crontab").UniqueKey(ident)).Val() == 0
	})

	open := uniqGate(key)
	defer open()
	if err := in.RetryDead(ctx, id); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the retried job to run", func() bool { return len(uniqRunsOf(key)) == 2 })
	_, err = c.Enqueue(ctx, uniqJob{Key: key, Text: "2"}, UniqueKey(key), Unique(time.Hour))
	wantDuplicateOf(t, "while the retried job runs", err, id)
	open()
	dead(id, 2)

	// It ended: the identity is free (its ttl is not counted again), and
	// a new job takes it; the dead job is retried without it.
	other, err := c.Enqueue(ctx, uniqJob{Key: key, Text: "3"}, UniqueKey(key), Unique(time.Hour), In(time.Hour))
	if err != nil {
		t.Fatalf("after the retried job ended: %v", err)
	}
	if err := in.RetryDead(ctx, id); err != nil {
		t.Fatal(err)
	}
	if j, err := in.Job(ctx, id); err != nil || j.Unique != "" {
		t.Errorf("the job retried while another holds its identity: %+v, %v; want no identity", j, err)
	}
	_, err = c.Enqueue(ctx, uniqJob{Key: key, Text: "4"}, UniqueKey(key), Unique(time.Hour))
	wantDuplicateOf(t, "after the second retry", err, other)
	dead(id, 3)
}
