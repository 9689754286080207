package runtime

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/testio"
	"github.com/redis/go-redis/v9"
)

// logCapture keeps what a scheduler logs, as text lines, so fault tests can
// check that a fault is reported clearly. With CRONTAB_TEST_LOG=1 it also
// writes to stderr.
type logCapture struct {
	testio.Buffer
}

// newLogCapture returns a capture and a debug-level logger writing to it.
func newLogCapture() (*logCapture, *slog.Logger) {
	c := &logCapture{}
	var w io.Writer = c
	if os.Getenv("CRONTAB_TEST_LOG") == "1" {
		w = io.MultiWriter(c, os.Stderr)
	}
	return c, slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// lines returns the logged lines that contain every one of subs.
func (c *logCapture) lines(subs ...string) []string {
	var out []string
	for line := range strings.Lines(c.String()) {
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(line, s)
		}
		if ok {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// expectLog fails t unless a logged line contains every one of subs.
func (c *logCapture) expectLog(t testing.TB, subs ...string) {
	t.Helper()
	if len(c.lines(subs...)) == 0 {
		t.Errorf("no log line contains %q; the log:\n%s", subs, tail(c.String(), 60))
	}
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// duplicates returns the (task, fire) pairs seen more than once.
func duplicates(fires []seenFire) []string {
	seen := map[string]int{}
	for _, f := range fires {
		seen[f.task+"@"+f.fire.UTC().Format(time.RFC3339Nano)]++
	}
	var out []string
	for k, n := range seen {
		if n > 1 {
			out = append(out, fmt.Sprintf("%s x%d", k, n))
		}
	}
	sort.Strings(out)
	return out
}

// missed counts the whole seconds between consecutive fires of an every:1s
// task that never fired.
func missed(fires []seenFire) int {
	n := 0
	for i := 1; i < len(fires); i++ {
		if gap := fires[i].fire.Sub(fires[i-1].fire); gap > time.Second {
			n += int(gap/time.Second) - 1
		}
	}
	return n
}

// firstStartAfter returns the start of the first fire that started after t
// (the zero Time if none did).
func firstStartAfter(fires []seenFire, t time.Time) time.Time {
	var first time.Time
	for _, f := range fires {
		if f.start.After(t) && (first.IsZero() || f.start.Before(first)) {
			first = f.start
		}
	}
	return first
}

// span is one run of a task with a duration, seen by its handler.
type span struct {
	task       string
	fire       time.Time
	start, end time.Time
	process    string
}

// spanLog records the spans of handlers that run for a while.
type spanLog struct {
	mu      sync.Mutex
	spans   []span
	running map[string]int // task -> handlers running now
	starts  map[string]int // task -> handlers ever started
	started chan string    // task names as handlers start (never blocks)
}

func newSpanLog() *spanLog {
	return &spanLog{running: map[string]int{}, starts: map[string]int{}, started: make(chan string, 1000)}
}

// startsOf returns how many handlers of task have started, ended or not.
func (l *spanLog) startsOf(task string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.starts[task]
}

// run is a handler body: it records its span around a sleep of d (cut
// short if ctx ends).
func (l *spanLog) run(ctx context.Context, d time.Duration) error {
	run, _ := Run(ctx)
	sp := span{task: run.Task, fire: run.Fire, start: time.Now(), process: run.Process}
	l.mu.Lock()
	l.running[run.Task]++
	l.starts[run.Task]++
	l.mu.Unlock()
	select {
	case l.started <- run.Task:
	default:
	}
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	sp.end = time.Now()
	l.mu.Lock()
	l.running[run.Task]--
	l.spans = append(l.spans, sp)
	l.mu.Unlock()
	return nil
}

func (l *spanLog) snapshot() []span {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append([]span(nil), l.spans...)
	sort.Slice(out, func(i, j int) bool { return out[i].start.Before(out[j].start) })
	return out
}

// overlaps returns a description of every pair of runs of the same task
// that overlapped in time.
func (l *spanLog) overlaps() []string {
	spans := l.snapshot()
	var out []string
	for i := range spans {
		for j := i + 1; j < len(spans); j++ {
			a, b := spans[i], spans[j]
			if a.task == b.task && b.start.Before(a.end) {
				out = append(out, fmt.Sprintf("%s: run of %v (%s, %v-%v) overlaps run of %v (%s, from %v)",
					a.task, a.fire.Format(time.TimeOnly), a.process, a.start.Format("15:04:05.000"), a.end.Format("15:04:05.000"),
					b.fire.Format(time.TimeOnly), b.process, b.start.Format("15:04:05.000")))
			}
		}
	}
	return out
}

// historyOutcomes counts the outcomes in a task's history.
func historyOutcomes(t testing.TB, s *Scheduler, task string) map[Outcome]int {
	t.Helper()
	recs, err := s.History(context.Background(), task, 0)
	if err != nil {
		t.Fatalf("history of %s: %v", task, err)
	}
	out := map[Outcome]int{}
	for _, r := range recs {
		out[r.Outcome]++
	}
	return out
}

// unique returns the test's name with a suffix unique to this run, for
// records kept in package-level maps (so -count=N runs do not mix).
func unique(t testing.TB) string {
	return t.Name() + "#" + strconv.FormatInt(time.Now().UnixNano(), 36)
}

// runFailoverPair starts two schedulers on rdb of an every:1s probe task
// named after the test and the sms job type, and waits for three fires. It
// returns the fires, the schedulers' log and their registry.
func runFailoverPair(t *testing.T, rdb redis.UniversalClient) (*fireLog, *logCapture, *Registry) {
	t.Helper()
	name := t.Name()
	fires := new(fireLog)
	behave(t, name, func(ctx context.Context) error { fires.add(ctx); return nil })
	reg := testRegistry(t,
		TaskConfig{Name: name, Expression: "every:1s", New: probeNew(0)},
		TaskConfig{Name: "sms", New: func() TaskInterface { return new(smsJob) }})
	logs, logger := newLogCapture()
	for range 2 {
		runScheduler(t, rdb, reg, WithLogger(logger))
	}
	waitFor(t, 10*time.Second, "three fires", func() bool { return len(fires.snapshot()) >= 3 })
	return fires, logs, reg
}
