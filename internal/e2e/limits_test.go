package e2e

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/e2e/worker/tasks"
	rdbpkg "github.com/gocrontab/crontab/internal/rdb"
	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/gocrontab/crontab/internal/testio"
	crontab "github.com/gocrontab/crontab/runtime"
)

// span is one run of Count with Spans read back: its end is the zero time
// for a run whose process was killed.
type span struct {
	run        string // n|process|attempt
	process    string
	start, end time.Time
}

func readSpans(t *testing.T, srv *redistest.Server) []span {
	t.Helper()
	ctx := context.Background()
	rdb := srv.Client(t)
	ends := map[string]time.Time{}
	for _, r := range rdb.LRange(ctx, tasks.SpanEndsKey, 0, -1).Val() {
		i := strings.LastIndexByte(r, '|')
		us, _ := strconv.ParseInt(r[i+1:], 10, 64)
		ends[r[:i]] = time.UnixMicro(us)
	}
	var out []span
	for _, r := range rdb.LRange(ctx, tasks.SpanStartsKey, 0, -1).Val() {
		i := strings.LastIndexByte(r, '|')
		us, _ := strconv.ParseInt(r[i+1:], 10, 64)
		out = append(out, span{run: r[:i], process: strings.Split(r, "|")[1], start: time.UnixMicro(us), end: ends[r[:i]]})
	}
	return out
}

// mostAtOnce returns the most spans that overlap; a span without an end
// ends at killed.
func mostAtOnce(spans []span, killed time.Time) int {
	type edge struct {
		at time.Time
		d  int
	}
	var edges []edge
	for _, s := range spans {
		end := s.end
		if end.IsZero() {
			end = killed
		}
		edges = append(edges, edge{s.start, 1}, edge{end, -1})
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.d - b.d // an end before a start at the same instant
	})
	most, n := 0, 0
	for _, e := range edges {
		n += e.d
		most = max(most, n)
	}
	return most
}

// max_running across real processes: SIGKILLed while it runs capped jobs,
// a worker's slots free when its job lease expires, its jobs are delivered
// again and run, and the cap holds throughout. Jobs enqueued once the
// slots are free run capN at once again: the first batch alone may all
// end while the killed worker still holds its slots (one slot held of
// three leaves two, time enough for every job left), which made an
// assertion on it depend on how loaded the machine was.
func TestSIGKILLHoldingSlotsFreesThemAtLeaseExpiry(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	const jobs, capN = 24, 3
	ws := map[string]*worker{}
	for i := range 3 {
		id := fmt.Sprintf("mr%d", i)
		ws[id] = startWorker(t, srv, id, "WORKER_TASKS=count", "WORKER_MAX_RUNNING="+strconv.Itoa(capN))
	}
	c := tasks.NewClient(rdb)
	for n := range jobs {
		if _, err := c.Enqueue(ctx, tasks.Count{N: n, Sleep: 400 * time.Millisecond, Spans: true}); err != nil {
			t.Fatal(err)
		}
	}
	// Kill a process while it runs jobs (so it holds slots).
	var victim string
	testio.WaitFor(t, 20*time.Second, "a worker to run jobs", func() bool {
		running := map[string]int{}
		for _, s := range readSpans(t, srv) {
			if s.end.IsZero() {
				running[s.process]++
			}
		}
		for p, k := range running {
			if k > 0 && len(readSpans(t, srv)) >= capN {
				victim = p
				return true
			}
		}
		return false
	})
	ws[victim].kill()
	killed := time.Now()
	var heldSlots int
	for _, s := range readSpans(t, srv) {
		if s.process == victim && s.end.IsZero() {
			heldSlots++
		}
	}
	// The killed worker's slots stay held until the deadline of its field
	// in the slots hash (its job lease, in Redis time) passes.
	slotsKey := rdbpkg.NewKeys(crontab.DefaultNamespace).Slots("count")
	until := time.Now() // the field's last deadline seen (Redis time, the same clock here)
	testio.WaitFor(t, 30*time.Second, "the killed worker's slots to be freed", func() bool {
		v, err := rdb.HGet(ctx, slotsKey, victim).Result()
		if err != nil {
			return true // gone: a claim pruned the expired field
		}
		_, deadline, _ := strings.Cut(v, "|")
		ms, _ := strconv.ParseInt(deadline, 10, 64)
		until = time.UnixMilli(ms)
		now, err := rdb.Time(ctx).Result()
		return err == nil && now.After(until)
	})
	freed := time.Now()
	const extra = 2 * capN
	for n := jobs; n < jobs+extra; n++ {
		if _, err := c.Enqueue(ctx, tasks.Count{N: n, Sleep: 400 * time.Millisecond, Spans: true}); err != nil {
			t.Fatal(err)
		}
	}
	testio.WaitFor(t, 40*time.Second, "every job to end", func() bool {
		done := map[string]bool{}
		for _, r := range readJobs(t, srv, tasks.JobsKey) {
			done[strconv.Itoa(r.n)] = true
		}
		return len(done) == jobs+extra
	})
	spans := readSpans(t, srv)
	if most := mostAtOnce(spans, killed); most > capN {
		t.Errorf("%d runs at once, want at most %d (max_running)", most, capN)
	}
	// While the killed worker held its slots no more than capN - held
	// started on the others; once they were free, capN ran at once again.
	var held, after []span
	for _, s := range spans {
		switch {
		case s.start.After(freed):
			after = append(after, s)
		case s.start.After(killed) && !s.start.After(until):
			held = append(held, s)
		}
	}
	if most := mostAtOnce(held, killed); most > capN-heldSlots {
		t.Errorf("while the killed worker held %d slots %d ran at once, want at most %d", heldSlots, most, capN-heldSlots)
	}
	if most := mostAtOnce(after, killed); most != capN {
		t.Errorf("after the killed worker's slots were freed at most %d ran at once, want %d", most, capN)
	}
	redelivered := 0
	for _, r := range readJobs(t, srv, tasks.JobsKey) {
		if r.attempt > 1 {
			redelivered++
		}
	}
	// Its jobs in hand were delivered again: those running (held) and
	// those claimed ahead, waiting for one of its slots (at most
	// JobSlotsAhead per slot).
	if redelivered < heldSlots || redelivered > rdbpkg.JobSlotsAhead*capN {
		t.Errorf("%d runs ended on a redelivery, want from the %d the killed worker ran to %d (%d in hand per slot)",
			redelivered, heldSlots, rdbpkg.JobSlotsAhead*capN, rdbpkg.JobSlotsAhead)
	}
	if n := len(readJobs(t, srv, tasks.JobsKey)); n != jobs+extra {
		t.Errorf("%d runs ended, want %d (each job once)", n, jobs+extra)
	}
	t.Logf("killed %s holding %d slots, freed %v later; %d jobs done %v after the kill", victim, heldSlots,
		freed.Sub(killed).Round(time.Millisecond), jobs+extra, time.Since(killed).Round(time.Millisecond))
}
