package runtime

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/redis/go-redis/v9"
)

func TestPeerShareSplit(t *testing.T) {
	fires := func(n int) []*fire {
		out := make([]*fire, n)
		for i := range out {
			out[i] = &fire{state: taskState{Member: fmt.Sprintf("t%03d", i)}}
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		share     peerShare
		n         int
		wantSplit bool
	}{
		{"no peers known", peerShare{}, 100, false},
		{"alone", peerShare{rank: 0, size: 1}, 100, false},
		{"too few tasks to split", peerShare{rank: 1, size: 3}, minSplit*3 - 1, false},
		{"just enough", peerShare{rank: 2, size: 3}, minSplit * 3, true},
		{"three peers", peerShare{rank: 1, size: 3}, 100, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			all := fires(tc.n)
			mine, split := tc.share.split(all)
			if split != tc.wantSplit {
				t.Fatalf("split = %v, want %v", split, tc.wantSplit)
			}
			if !split {
				if len(mine) != tc.n {
					t.Fatalf("not split, yet got %d of %d fires", len(mine), tc.n)
				}
				return
			}
			// Every peer's share together: each fire exactly once, and
			// no share more than one bigger than another.
			seen := map[*fire]int{}
			sizes := []int{}
			for rank := range tc.share.size {
				s, _ := peerShare{rank: rank, size: tc.share.size}.split(all)
				sizes = append(sizes, len(s))
				for _, f := range s {
					seen[f]++
				}
			}
			for _, f := range all {
				if seen[f] != 1 {
					t.Errorf("fire %s is in %d shares, want 1", f.state.Member, seen[f])
				}
			}
			if slices.Max(sizes)-slices.Min(sizes) > 1 {
				t.Errorf("share sizes %v: want them within one of each other", sizes)
			}
			if mine[0] != all[tc.share.rank] {
				t.Errorf("rank %d's share starts with %s, want %s", tc.share.rank, mine[0].state.Member, all[tc.share.rank].state.Member)
			}
		})
	}
}

func TestRegistryDigest(t *testing.T) {
	a := testRegistry(t, TaskConfig{Name: "a", Expression: "every:1s", New: probeNew(0)},
		TaskConfig{Name: "b", New: probeNew(1)})
	b := testRegistry(t, TaskConfig{Name: "b", New: probeNew(1)},
		TaskConfig{Name: "a", Expression: "every:1s", New: probeNew(0)})
	c := testRegistry(t, TaskConfig{Name: "a", Expression: "every:1s", New: probeNew(0)})
	// Names are separated: "ab" alone must not digest like "a" and "b".
	d := testRegistry(t, TaskConfig{Name: "ab", Expression: "every:1s", New: probeNew(0)})
	if registryDigest(a) != registryDigest(b) {
		t.Error("the same task types added in another order digest differently")
	}
	if registryDigest(a) == registryDigest(c) {
		t.Error("registries with different task types digest the same")
	}
	if registryDigest(a) == registryDigest(d) {
		t.Error(`a registry of "a" and "b" digests like one of "ab"`)
	}
}

// The peers of a task type are the live processes that run it: a process
// of more types is a peer for the types it shares, and a peer that stops
// leaves the split at the next heartbeat.
func TestPeersAreLiveProcessesOfEachType(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	same := testRegistry(t, TaskConfig{Name: "tick", Expression: "every:1h", New: probeNew(0)})
	other := testRegistry(t, TaskConfig{Name: "tick", Expression: "every:1h", New: probeNew(0)},
		TaskConfig{Name: "more", Expression: "every:1h", New: probeNew(1)})
	s1, _ := runScheduler(t, rdb, same, WithProcessID("p1"))
	s2, stop2 := runScheduler(t, rdb, same, WithProcessID("p2"))
	s3, _ := runScheduler(t, rdb, other, WithProcessID("p3"))

	want := map[*Scheduler]map[string]peerShare{
		s1: {"tick": {rank: 0, size: 3}},
		s2: {"tick": {rank: 1, size: 3}},
		s3: {"tick": {rank: 2, size: 3}, "more": {rank: 0, size: 1}},
	}
	waitFor(t, 5*time.Second, "every process to know its peers", func() bool {
		for s, w := range want {
			if ps := s.disp.currentShares(); ps == nil || !maps.Equal(sharesByType(ps), w) {
				return false
			}
		}
		return true
	})

	stop2()
	waitFor(t, 5*time.Second, "p1 to share tick with p3 only once p2 stopped", func() bool {
		return s1.disp.currentShares().of("tick") == peerShare{rank: 0, size: 2}
	})
}

// With mixed task sets (A runs x and y, B x, C y) the fires of each type
// are split among the processes that run it only: every fire is in one
// share, and never in the share of a process that lacks its type (whose
// share would wait shareGrace for nothing).
func TestPeerSharesSplitMixedSets(t *testing.T) {
	sets := map[string][]string{"A": {"x", "y"}, "B": {"x"}, "C": {"y"}}
	peers := func(self string) map[string]peerTypes {
		out := map[string]peerTypes{}
		for id, types := range sets {
			if id != self {
				out[id] = peerTypes{}
				for _, ty := range types {
					out[id][ty] = true
				}
			}
		}
		return out
	}
	// 3*minSplit fires of each type, interleaved in queue order.
	var all []*fire
	for i := range 6 * minSplit {
		ty := []string{"x", "y"}[i%2]
		all = append(all, &fire{state: taskState{Member: fmt.Sprintf("%s%02d", ty, i), Type: ty}})
	}
	in := map[*fire][]string{}
	for id, types := range sets {
		ps := sharesOf(id, types, peers(id))
		for _, ty := range types {
			if got := ps.of(ty).size; got != 2 {
				t.Errorf("%s: %d peers of %s, want 2", id, got, ty)
			}
		}
		// What the process sees of the instant: the fires of its types.
		var view []*fire
		for _, f := range all {
			if slices.Contains(types, f.state.Type) {
				view = append(view, f)
			}
		}
		mine, split := ps.split(view)
		if !split {
			t.Errorf("%s: not split", id)
		}
		for _, f := range mine {
			in[f] = append(in[f], id)
		}
	}
	for _, f := range all {
		switch ids := in[f]; {
		case len(ids) != 1:
			t.Errorf("fire %s is in the shares of %v, want exactly one", f.state.Member, ids)
		case !slices.Contains(sets[ids[0]], f.state.Type):
			t.Errorf("fire %s of type %s is in the share of %s, which does not run it", f.state.Member, f.state.Type, ids[0])
		}
	}
	// Below minSplit fires of a type per peer, that type is not split, the
	// other one still is.
	ps := sharesOf("B", sets["B"], peers("B"))
	few := []*fire{{state: taskState{Member: "x0", Type: "x"}}}
	if mine, split := ps.split(few); split || len(mine) != 1 {
		t.Errorf("one fire of x: split %v into %d, want not split", split, len(mine))
	}
}

// Types with the same peers are split as one group: an instant of many
// tasks of one fire each (every task its own type, as crontabgen makes
// them) is split among the processes that all run them, and a type run by
// fewer processes is split among those only.
func TestPeerSharesSplitGroupsOfTypes(t *testing.T) {
	var shared []string
	for i := range 3 * minSplit * 3 {
		shared = append(shared, fmt.Sprintf("t%02d", i))
	}
	sets := map[string][]string{"A": append([]string{"solo"}, shared...), "B": shared, "C": shared}
	var all []*fire
	for _, ty := range sets["A"] {
		all = append(all, &fire{state: taskState{Member: ty, Type: ty}})
	}
	count := map[string]int{}
	in := map[*fire]int{}
	for id, types := range sets {
		peers := map[string]peerTypes{}
		for pid, pt := range sets {
			if pid != id {
				peers[pid] = peerTypes{}
				for _, ty := range pt {
					peers[pid][ty] = true
				}
			}
		}
		ps := sharesOf(id, types, peers)
		var view []*fire
		for _, f := range all {
			if slices.Contains(types, f.state.Type) {
				view = append(view, f)
			}
		}
		mine, split := ps.split(view)
		if !split {
			t.Errorf("%s: an instant of %d one-fire types with the same 3 peers is not split", id, len(shared))
		}
		count[id] = len(mine)
		for _, f := range mine {
			in[f]++
		}
	}
	for _, f := range all {
		if in[f] != 1 {
			t.Errorf("fire %s is in %d shares, want 1", f.state.Member, in[f])
		}
	}
	if want := len(shared) / 3; count["B"] != want || count["C"] != want || count["A"] != want+1 {
		t.Errorf("shares %v, want %d each, and A also the solo type's fire", count, want)
	}
}

// stampTask records each run's task, fire and start.
type stampTask struct{ log *fireLog }

func (t stampTask) Handle(ctx context.Context) error { t.log.add(ctx); return nil }

// stampTasks sets the run-time tasks keys, every:1s, of one type that logs
// its runs in the returned log, and returns the type's registry.
func stampTasks(t *testing.T, rdb redis.UniversalClient, keys []string) (*Registry, *fireLog) {
	t.Helper()
	log := new(fireLog)
	reg := testRegistry(t, TaskConfig{Name: "stamp", New: func() TaskInterface { return stampTask{log} }})
	c := NewClient(rdb, reg)
	for _, key := range keys {
		must(t, c.SetTask(context.Background(), TaskSpec{Key: key, Type: "stamp", Expression: "every:1s"}))
	}
	return reg, log
}

// keysOf names n tasks with format (one %d verb), in queue order.
func keysOf(format string, n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf(format, i)
	}
	return keys
}

// A share no process claims at its instant (here a peer's whose heartbeat
// is fresh but which claims nothing: a process stalled, or killed less than
// a process TTL ago) is claimed by the others once shareGrace has passed:
// every instant still fires exactly once, and only that share is late.
func TestUnclaimedShareFiresAfterGrace(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	const tasks = 2 * minSplit
	members := keysOf("t%d", tasks)
	reg, log := stampTasks(t, rdb, members)
	// The ghost sorts before "p1", so it has rank 0: the tasks at even
	// places in queue order (t0, t2, ...) are its share.
	k := newKeys("crontab")
	must(t, rdb.HSet(ctx, k.Process("ghost"), "types", registryDigest(reg)).Err())
	beat := func() {
		now, err := rdb.Time(ctx).Result()
		must(t, err)
		must(t, rdb.ZAdd(ctx, k.Processes(), redis.Z{Score: float64(now.UnixMilli()), Member: "ghost"}).Err())
	}
	beat()
	ghostCtx, stopGhost := context.WithCancel(ctx)
	defer stopGhost()
	go func() {
		for ghostCtx.Err() == nil {
			time.Sleep(100 * time.Millisecond)
			now, err := rdb.Time(ghostCtx).Result()
			if err == nil {
				rdb.ZAdd(ghostCtx, k.Processes(), redis.Z{Score: float64(now.UnixMilli()), Member: "ghost"})
			}
		}
	}()

	s, stop := runScheduler(t, rdb, reg, WithProcessID("p1"))
	if got := s.disp.currentShares().of("stamp"); got != (peerShare{rank: 1, size: 2}) {
		t.Fatalf("share at start = %+v, want rank 1 of 2 (the ghost is a peer)", got)
	}
	time.Sleep(3500 * time.Millisecond)
	stop()
	stopGhost()

	byInstant := map[time.Time]map[string]seenFire{}
	for _, f := range log.snapshot() {
		if byInstant[f.fire] == nil {
			byInstant[f.fire] = map[string]seenFire{}
		}
		if _, dup := byInstant[f.fire][f.task]; dup {
			t.Errorf("task %s fired twice for %v", f.task, f.fire)
		}
		byInstant[f.fire][f.task] = f
	}
	var instants []time.Time
	for at := range byInstant {
		instants = append(instants, at)
	}
	slices.SortFunc(instants, func(a, b time.Time) int { return a.Compare(b) })
	if len(instants) < 3 {
		t.Fatalf("got %d instants in 3.5s, want at least 3", len(instants))
	}
	// The last instant may have been cut by the stop.
	for _, at := range instants[:len(instants)-1] {
		runs := byInstant[at]
		if len(runs) != tasks {
			t.Errorf("instant %v: %d of %d tasks fired", at, len(runs), tasks)
		}
		for i, m := range members {
			f, ok := runs[m]
			if !ok || i%2 != 0 {
				continue
			}
			// Claimed no sooner than shareGrace after the instant (by the
			// server clock, which this machine's clock reads within a
			// millisecond).
			if lag := f.start.Sub(f.fire); lag < shareGrace-time.Millisecond {
				t.Errorf("instant %v: %s of the ghost's share started %v after it, before the grace of %v ended",
					at, m, lag, shareGrace)
			}
		}
	}
}

// Schedulers that split their instants still fire every instant of every
// task exactly once, and each runs its share.
func TestSplitInstantsFireOnceAcrossSchedulers(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	const tasks = 3 * minSplit
	reg, log := stampTasks(t, rdb, keysOf("t%02d", tasks))
	scheds, stops := runPeers(t, rdb, reg, 3, "stamp")
	from := time.Now().Truncate(time.Second).Add(time.Second)
	// Instants from to from+3s are checked; once every task ran from+4s, a
	// second run of any of them (a share claimed twice, 5 ms after its
	// instant at most) has had a second to show.
	waitFor(t, 15*time.Second, "every task to run instant from+4s", func() bool {
		ran := map[string]bool{}
		for _, f := range log.snapshot() {
			if f.fire.Equal(from.Add(4 * time.Second)) {
				ran[f.task] = true
			}
		}
		return len(ran) == tasks
	})
	for _, stop := range stops {
		stop()
	}
	count := map[string]map[time.Time]int{}
	byProcess := map[string]int{}
	for _, f := range log.snapshot() {
		if f.fire.Before(from) || f.fire.After(from.Add(3*time.Second)) {
			continue
		}
		if count[f.task] == nil {
			count[f.task] = map[time.Time]int{}
		}
		count[f.task][f.fire]++
		byProcess[f.process]++
	}
	for i := range tasks {
		task := fmt.Sprintf("t%02d", i)
		for at := from; !at.After(from.Add(3 * time.Second)); at = at.Add(time.Second) {
			if n := count[task][at]; n != 1 {
				t.Errorf("task %s, instant %v: %d runs, want 1", task, at, n)
			}
		}
	}
	for _, s := range scheds {
		if byProcess[s.id] == 0 {
			t.Errorf("process %s ran nothing in 4 split instants (runs by process: %v)", s.id, byProcess)
		}
	}
	t.Logf("runs by process: %v", byProcess)
}

// stampY is a second stamping task type.
type stampY struct{ log *fireLog }

func (t stampY) Handle(ctx context.Context) error { t.log.add(ctx); return nil }

// Processes with mixed task sets (A runs x and y, B x, C y) fire every
// instant of every task once, each type's runs only in the processes that
// run it, and split each type's instants among those: x between A and B,
// y between A and C.
func TestSplitInstantsOfMixedTaskSets(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	log := new(fireLog)
	reg := testRegistry(t, TaskConfig{Name: "x", New: func() TaskInterface { return stampTask{log} }},
		TaskConfig{Name: "y", New: func() TaskInterface { return stampY{log} }})
	c := NewClient(rdb, reg)
	const perType = 2 * minSplit
	typeOf := map[string]string{}
	for _, ty := range []string{"x", "y"} {
		for _, key := range keysOf(ty+"%02d", perType) {
			must(t, c.SetTask(ctx, TaskSpec{Key: key, Type: ty, Expression: "every:1s"}))
			typeOf[key] = ty
		}
	}
	sets := map[string][]string{"A": {"x", "y"}, "B": {"x"}, "C": {"y"}}
	scheds := map[string]*Scheduler{}
	var stops []func()
	for id, types := range sets {
		s, stop := runScheduler(t, rdb, reg, WithProcessID(id), WithTasks(types...))
		scheds[id], stops = s, append(stops, stop)
	}
	want := map[string]map[string]peerShare{
		"A": {"x": {rank: 0, size: 2}, "y": {rank: 0, size: 2}},
		"B": {"x": {rank: 1, size: 2}},
		"C": {"y": {rank: 1, size: 2}},
	}
	waitFor(t, 5*time.Second, "each process to know the peers of its types", func() bool {
		for id, w := range want {
			if ps := scheds[id].disp.currentShares(); ps == nil || !maps.Equal(sharesByType(ps), w) {
				return false
			}
		}
		return true
	})
	from := time.Now().Truncate(time.Second).Add(time.Second)
	waitFor(t, 15*time.Second, "every task to run instant from+3s", func() bool {
		ran := map[string]bool{}
		for _, f := range log.snapshot() {
			if f.fire.Equal(from.Add(3 * time.Second)) {
				ran[f.task] = true
			}
		}
		return len(ran) == len(typeOf)
	})
	for _, stop := range stops {
		stop()
	}
	count := map[string]map[time.Time]int{}
	runs := map[string]map[string]int{} // type -> process -> runs
	for _, f := range log.snapshot() {
		if f.fire.Before(from) || f.fire.After(from.Add(2*time.Second)) {
			continue
		}
		ty := typeOf[f.task]
		if !slices.Contains(sets[f.process], ty) {
			t.Errorf("task %s of type %s ran in %s, which does not run %s", f.task, ty, f.process, ty)
		}
		if count[f.task] == nil {
			count[f.task] = map[time.Time]int{}
		}
		count[f.task][f.fire]++
		if runs[ty] == nil {
			runs[ty] = map[string]int{}
		}
		runs[ty][f.process]++
	}
	for task := range typeOf {
		for at := from; !at.After(from.Add(2 * time.Second)); at = at.Add(time.Second) {
			if n := count[task][at]; n != 1 {
				t.Errorf("task %s, instant %v: %d runs, want 1", task, at, n)
			}
		}
	}
	for ty, ids := range map[string][]string{"x": {"A", "B"}, "y": {"A", "C"}} {
		for _, id := range ids {
			if runs[ty][id] == 0 {
				t.Errorf("%s ran no %s task in 3 split instants (runs of %s by process: %v)", id, ty, ty, runs[ty])
			}
		}
	}
	t.Logf("runs by type and process: %v", runs)
}

// sharesByType is ps's share of each type it runs.
func sharesByType(ps *peerShares) map[string]peerShare {
	out := make(map[string]peerShare, len(ps.group))
	for t := range ps.group {
		out[t] = ps.of(t)
	}
	return out
}

// TestPreferOwn: a backlog larger than a claim is taken own share first,
// then the others' (so a dead peer's share is still taken), each in queue
// order; two peers' picks from the same head do not overlap while each
// has enough of its own; no split or a small backlog is the head itself.
func TestPreferOwn(t *testing.T) {
	due := make([]string, 40)
	scores := make([]int64, 40)
	for i := range due {
		due[i] = fmt.Sprintf("task-%02d", i)
		scores[i] = int64(1000 + i)
	}
	a, b := peerShare{rank: 0, size: 2}, peerShare{rank: 1, size: 2}
	pa, sa := a.preferOwn(due, scores, 8)
	pb, _ := b.preferOwn(due, scores, 8)
	if len(pa) != 8 || len(pb) != 8 {
		t.Fatalf("picked %d and %d, want 8 each", len(pa), len(pb))
	}
	seen := map[string]bool{}
	for i, m := range pa {
		if !a.ownsMember(m) {
			t.Errorf("rank 0 picked %s of rank 1's share while it had its own", m)
		}
		if want := scores[slices.Index(due, m)]; sa[i] != want {
			t.Errorf("score of %s: %d, want %d", m, sa[i], want)
		}
		seen[m] = true
	}
	for _, m := range pb {
		if seen[m] {
			t.Errorf("both peers picked %s", m)
		}
	}
	if !slices.IsSortedFunc(pa, strings.Compare) {
		t.Errorf("own share not in queue order: %v", pa)
	}
	// More free workers than the own share: the rest from the others'.
	all, _ := a.preferOwn(due, scores, 39)
	own := 0
	for _, m := range all {
		if a.ownsMember(m) {
			own++
		}
	}
	if len(all) != 39 || own == 0 || own == 39 {
		t.Errorf("picked %d, %d own; want 39 with the own share first and others' after", len(all), own)
	}
	for i := 1; i < len(all); i++ {
		if !a.ownsMember(all[i-1]) && a.ownsMember(all[i]) {
			t.Errorf("an own task %s after another's", all[i])
		}
	}
	// No split, or no more due than the limit: the head as read.
	if got, _ := (peerShare{}).preferOwn(due, scores, 5); !slices.Equal(got, due[:5]) {
		t.Errorf("no split: %v, want the first 5", got)
	}
	if got, _ := a.preferOwn(due[:5], scores[:5], 8); !slices.Equal(got, due[:5]) {
		t.Errorf("small backlog: %v, want all 5", got)
	}
}

// runPeers starts n schedulers of reg on rdb, processes p0, p1, ..., and
// waits until each splits the fires of type typ among all n. It returns
// them and their stop functions.
func runPeers(t *testing.T, rdb redis.UniversalClient, reg *Registry, n int, typ string) ([]*Scheduler, []func()) {
	t.Helper()
	var scheds []*Scheduler
	var stops []func()
	for i := range n {
		s, stop := runScheduler(t, rdb, reg, WithProcessID(fmt.Sprintf("p%d", i)))
		scheds, stops = append(scheds, s), append(stops, stop)
	}
	waitFor(t, 5*time.Second, "the schedulers to know each other", func() bool {
		for _, s := range scheds {
			if s.disp.currentShares().of(typ).size != n {
				return false
			}
		}
		return true
	})
	return scheds, stops
}
