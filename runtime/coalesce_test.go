package runtime

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/redistest"
)

// spreadTasks registers n every:1h stamp tasks and moves task i to the
// instant at + i ms (its next_run and queue score, as the top of an hour
// with jitter would have them). It returns the tasks' keys and the log of
// their runs.
func spreadTasks(t *testing.T, rdb redis.UniversalClient, n int, at time.Time) ([]string, *Registry, *fireLog) {
	t.Helper()
	ctx := context.Background()
	keys := keysOf("sp%03d", n)
	log := new(fireLog)
	reg := testRegistry(t, TaskConfig{Name: "stamp", New: func() TaskInterface { return stampTask{log} }})
	specs := make([]TaskSpec, n)
	for i, key := range keys {
		specs[i] = TaskSpec{Key: key, Type: "stamp", Expression: "every:1h"}
	}
	if _, err := NewClient(rdb, reg).SetTasks(ctx, specs); err != nil {
		t.Fatal(err)
	}
	k := newKeys("crontab")
	pipe := rdb.Pipeline()
	for i, key := range keys {
		ms := at.UnixMilli() + int64(i)
		pipe.HSet(ctx, k.Task(key), "next_run", ms)
		pipe.ZAdd(ctx, k.Queue(), redis.Z{Score: float64(ms), Member: key})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return keys, reg, log
}

// claimTries parses the claim script calls MONITOR saw: for each
// "task@fire" candidate, the processes whose claims tried it.
func claimTries(t *testing.T, lines []monitorLine) map[string]map[string]bool {
	t.Helper()
	quoted := regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	claim := `"evalsha" "` + claimFiresHash + `"`
	tries := map[string]map[string]bool{}
	for _, l := range lines {
		if l.fromLua || !strings.HasPrefix(l.args, claim) {
			continue
		}
		var args []string
		for _, q := range quoted.FindAllString(l.args, -1) {
			s, err := strconv.Unquote(q)
			if err != nil {
				t.Fatalf("monitor line %q: %v", l.args, err)
			}
			args = append(args, s)
		}
		nkeys, err := strconv.Atoi(args[2])
		if err != nil {
			t.Fatalf("monitor line %q: numkeys: %v", l.args, err)
		}
		argv := args[3+nkeys:]
		// ARGV: process, 6 more, then 8 per candidate: member, fire, ...
		// (no fire slot keys: the stamp type has no cap).
		for i := claimArgsBefore; i+claimArgsPer <= len(argv); i += claimArgsPer {
			c := argv[i] + "@" + argv[i+1]
			if tries[c] == nil {
				tries[c] = map[string]bool{}
			}
			tries[c][argv[0]] = true
		}
	}
	return tries
}

// claimArgsBefore and claimArgsPer are the claim script's argument layout
// (rdb.NewFireClaim).
const (
	claimArgsBefore = 7
	claimArgsPer    = 8
)

// Instants a millisecond apart (100,000 tasks with a minute's jitter are
// 1.7 a millisecond) are claimed a span at a time (coalesceSpan), each
// process claiming its share of the span's fires by member: across two
// schedulers every instant fires exactly once, none starts before it is
// due, and both processes run some. (How many fires both processes try is
// logged, not checked: on a loaded machine a process that wakes late
// claims what it finds due, the peer's share too, and so did the claims
// before spans.)
func TestCoalescedInstantsFireOnceNeverEarly(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	seen := monitor(t, srv)
	const n = 120
	now, err := rdb.Time(context.Background()).Result()
	must(t, err)
	at := now.Add(2500 * time.Millisecond).Truncate(time.Millisecond)
	keys, reg, log := spreadTasks(t, rdb, n, at)
	scheds, stops := runPeers(t, rdb, reg, 2, "stamp")
	if time.Now().After(at) {
		t.Fatalf("the schedulers took until after the instants to start: the test needs them running before")
	}
	waitFor(t, 15*time.Second, "every task to run", func() bool { return len(log.snapshot()) >= n })
	time.Sleep(500 * time.Millisecond) // a second run would come now
	for _, stop := range stops {
		stop()
	}

	runs := map[string]int{}
	byProcess := map[string]int{}
	var worst time.Duration
	for _, f := range log.snapshot() {
		runs[f.task]++
		byProcess[f.process]++
		i, _ := strconv.Atoi(strings.TrimPrefix(f.task, "sp"))
		if want := at.Add(time.Duration(i) * time.Millisecond); !f.fire.Equal(want) {
			t.Errorf("task %s fired for %v, want %v", f.task, f.fire, want)
		}
		// The server's clock is this machine's (a local redis-server).
		if f.start.Before(f.fire) {
			t.Errorf("task %s started %v before its instant %v", f.task, f.fire.Sub(f.start), f.fire)
		}
		worst = max(worst, f.start.Sub(f.fire))
	}
	for _, key := range keys {
		if runs[key] != 1 {
			t.Errorf("task %s ran %d times, want 1", key, runs[key])
		}
	}
	tries := claimTries(t, seen())
	both, tried := 0, 0
	for i, key := range keys {
		// A claim may also try a task's next instant, an hour on: a due
		// read that a peer's claim overtook before the hash read.
		procs := tries[key+"@"+strconv.FormatInt(at.UnixMilli()+int64(i), 10)]
		if len(procs) > 0 {
			tried++
		}
		if len(procs) > 1 {
			both++
		}
	}
	t.Logf("runs by process %v; %d of %d fires tried by both processes; largest lag %v", byProcess, both, tried, worst)
	if tried < n {
		t.Fatalf("MONITOR saw %d of the %d fires tried, want all", tried, n)
	}
	for _, s := range scheds {
		if byProcess[s.id] == 0 {
			t.Errorf("process %s ran none of %d spread fires (runs by process: %v)", s.id, n, byProcess)
		}
	}
}

// A peer's share of a span that the peer does not claim (its heartbeat is
// fresh but it claims nothing: stalled, or killed less than a process TTL
// ago) is claimed by the others a grace after the span: every instant still
// fires once, and none before it is due.
func TestCoalescedShareOfStalledPeerFires(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	const n = 60
	now, err := rdb.Time(ctx).Result()
	must(t, err)
	at := now.Add(2500 * time.Millisecond).Truncate(time.Millisecond)
	keys, reg, log := spreadTasks(t, rdb, n, at)
	k := newKeys("crontab")
	must(t, rdb.HSet(ctx, k.Process("ghost"), "types", registryDigest(reg)).Err())
	ghostCtx, stopGhost := context.WithCancel(ctx)
	defer stopGhost()
	beat := func(ctx context.Context) error {
		now, err := rdb.Time(ctx).Result()
		if err != nil {
			return err
		}
		return rdb.ZAdd(ctx, k.Processes(), redis.Z{Score: float64(now.UnixMilli()), Member: "ghost"}).Err()
	}
	must(t, beat(ctx))
	go func() {
		for ghostCtx.Err() == nil {
			time.Sleep(100 * time.Millisecond)
			_ = beat(ghostCtx)
		}
	}()
	s, stop := runScheduler(t, rdb, reg, WithProcessID("p1"))
	share := s.disp.currentShares().backlogShare()
	if share.size != 2 {
		t.Fatalf("share at start = %+v, want one of 2 (the ghost is a peer)", share)
	}
	ghosts := 0
	for _, key := range keys {
		if !share.ownsMember(key) {
			ghosts++
		}
	}
	if ghosts == 0 || ghosts == n {
		t.Fatalf("the ghost's share is %d of %d tasks: pick other keys", ghosts, n)
	}
	waitFor(t, 15*time.Second, "every task to run", func() bool { return len(log.snapshot()) >= n })
	time.Sleep(300 * time.Millisecond)
	stop()
	stopGhost()
	runs := map[string]int{}
	for _, f := range log.snapshot() {
		runs[f.task]++
		if f.start.Before(f.fire) {
			t.Errorf("task %s started %v before its instant %v", f.task, f.fire.Sub(f.start), f.fire)
		}
	}
	for _, key := range keys {
		if runs[key] != 1 {
			t.Errorf("task %s ran %d times, want 1", key, runs[key])
		}
	}
}

// The queue read of a claim (claimTasks) takes the next instant with the
// instants within coalesceSpan of it when at least coalesceInstants fall
// there, to be claimed at the last of them, and never otherwise: a lone
// task, or two instants in the span, are claimed each at its own instant.
// No instant read is claimed before it is due, nor later than coalesceSpan
// after it.
func TestClaimReadCoalescesCloseInstants(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	log := new(fireLog)
	reg := testRegistry(t, TaskConfig{Name: "stamp", New: func() TaskInterface { return stampTask{log} }})
	s, err := NewScheduler(rdb, reg, WithLogger(testLogger()))
	must(t, err)
	dp := s.disp
	k := newKeys("crontab")
	span := coalesceSpan.Milliseconds()
	cases := []struct {
		name    string
		offsets []int64 // instants after the first, ms
		at      int64   // want: the instant claimed at, after the first
		read    int     // want: tasks read to be claimed then
	}{
		{"lone task", nil, 0, 1},
		{"two instants in the span", []int64{span}, 0, 1},
		{"instants a millisecond apart", []int64{1, 2, 3, 4, 5}, span, 4},
		{"three instants, the last at the span's end", []int64{1, span}, span, 3},
		{"the third instant past the span", []int64{1, span + 1}, 0, 1},
	}
	for i, c := range cases {
		must(t, rdb.Del(ctx, k.Queue()).Err())
		now, err := rdb.Time(ctx).Result()
		must(t, err)
		first := now.UnixMilli() + 500
		var members []string
		for j, off := range append([]int64{0}, c.offsets...) {
			m := fmt.Sprintf("c%d-%d", i, j)
			members = append(members, m)
			must(t, rdb.HSet(ctx, k.Task(m), "type", "stamp", "expression", "every:1h", "next_run", first+off, "status", "active").Err())
			must(t, rdb.ZAdd(ctx, k.Queue(), redis.Z{Score: float64(first + off), Member: m}).Err())
		}
		next, started, tied, err := dp.claimTasks(ctx, now, 64)
		must(t, err)
		if started != 0 {
			t.Errorf("%s: %d started, want none (nothing due)", c.name, started)
		}
		if next != first+c.at || tied.at != next || len(tied.members) != c.read {
			t.Errorf("%s: claim at first+%d ms with %d tasks %v, want first+%d ms with %d", c.name, next-first, len(tied.members), tied.members, c.at, c.read)
			continue
		}
		for j, score := range tied.scores {
			if score > tied.at || tied.at-score > span {
				t.Errorf("%s: %s due at first+%d ms is claimed at first+%d ms", c.name, tied.members[j], score-first, tied.at-first)
			}
		}
	}
}
