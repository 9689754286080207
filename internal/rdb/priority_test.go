package rdb

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// enqueueLevels enqueues n jobs of each type, all due at ms 1, with the
// given levels, in the order of types (so the queue, ordered by id within
// one score, holds them type by type).
func enqueueLevels(t *testing.T, r *RDB, n int, types []string, levels map[string]int) {
	t.Helper()
	var jobs []NewJob
	for _, typ := range types {
		for i := range n {
			jobs = append(jobs, NewJob{ID: fmt.Sprintf("%s-%04d", typ, i), Envelope: `{"task":"` + typ + `"}`, AtMS: 1,
				Level: levels[typ], Indexed: true})
		}
	}
	if _, err := r.Enqueue(context.Background(), jobs); err != nil {
		t.Fatal(err)
	}
}

// typeOf is the type of a claimed job of enqueueLevels.
func typeOf(j ClaimedJob) string { return j.ID[:strings.IndexByte(j.ID, '-')] }

// Claimed one at a time, due jobs of priorities 0 and 2 (weights 1 and 3)
// come in the ratio of their weights: each run of 4 claims holds exactly
// one job of priority 0, however many of priority 2 are due and although
// those are older in the queue. Within a level, the oldest first.
func TestClaimJobsFlowWeightsLevels(t *testing.T) {
	srv := redistest.Start(t)
	r := New(srv.Client(t), "ns")
	ctx := context.Background()
	enqueueLevels(t, r, 100, []string{"a", "low"}, map[string]int{"a": 2, "low": 0})
	levels := []Level{{Priority: 2}, {Priority: 0}}
	var got []string
	for i := range 40 {
		c, err := r.ClaimJobsFlow(ctx, ClaimFlow{ClaimID: fmt.Sprintf("p#%d", i), Limit: 1, Lease: time.Minute,
			Levels: levels, TypeLevels: map[string]int{"a": 2}, Scan: 100, Retry: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Jobs) != 1 {
			t.Fatalf("claim %d took %d jobs, want 1", i, len(c.Jobs))
		}
		levels = c.Levels
		got = append(got, typeOf(c.Jobs[0]))
	}
	for w := 0; w+4 <= len(got); w += 4 {
		n := 0
		for _, typ := range got[w : w+4] {
			if typ == "low" {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("claims %d-%d took %v: want exactly one of priority 0 in every 4 (weights 1 and 3); all: %v", w, w+3, got[w:w+4], got)
		}
	}
	// Priority 2's jobs were claimed oldest first.
	c, err := r.ClaimJobsFlow(ctx, ClaimFlow{ClaimID: "p#x", Limit: 3, Lease: time.Minute,
		Levels: []Level{{Priority: 2}}, TypeLevels: map[string]int{"a": 2}, Types: []string{"a"}, Scan: 100, Retry: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	jobs := c.Jobs
	if ids := fmt.Sprint(claimIDs(jobs)); ids != "[a-0030 a-0031 a-0032]" {
		t.Errorf("next of priority 2: %s, want [a-0030 a-0031 a-0032]", ids)
	}
}

// One claim of many jobs splits by weight too: priorities 10 and 0
// (weights 11 and 1) in a claim of 24 take 22 and 2.
func TestClaimJobsFlowSplitsOneClaim(t *testing.T) {
	srv := redistest.Start(t)
	r := New(srv.Client(t), "ns")
	enqueueLevels(t, r, 50, []string{"hi", "lo"}, map[string]int{"hi": 10})
	c, err := r.ClaimJobsFlow(context.Background(), ClaimFlow{ClaimID: "p#1", Limit: 24, Lease: time.Minute,
		Levels: []Level{{Priority: 10}, {Priority: 0}}, TypeLevels: map[string]int{"hi": 10}, Scan: 100, Retry: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	jobs := c.Jobs
	n := map[string]int{}
	for _, j := range jobs {
		n[typeOf(j)]++
	}
	if n["hi"] != 22 || n["lo"] != 2 {
		t.Errorf("claimed %v, want hi 22 and lo 2", n)
	}
}

// A job that no index has (put back by the raw protocol, a redelivery) is
// indexed by the claim that finds it among the oldest due jobs and claimed
// at its type's level; index entries whose job left the queue are dropped,
// and one whose job is due later is moved to that due.
func TestClaimJobsFlowHealsIndexes(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	r := New(c, "ns")
	ctx := context.Background()
	// Not indexed: enqueued without a level.
	if _, err := r.Enqueue(ctx, []NewJob{{ID: "raw", Envelope: `{"task":"hi"}`, AtMS: 1}}); err != nil {
		t.Fatal(err)
	}
	enqueueLevels(t, r, 3, []string{"lo"}, nil)
	// A stale entry (no job) and one whose job is due in an hour.
	c.ZAdd(ctx, r.k.Level(5), redis.Z{Score: 1, Member: "gone"})
	later := time.Now().Add(time.Hour).UnixMilli()
	if _, err := r.Enqueue(ctx, []NewJob{{ID: "later", Envelope: `{"task":"hi"}`, AtMS: later}}); err != nil {
		t.Fatal(err)
	}
	c.ZAdd(ctx, r.k.Level(5), redis.Z{Score: 1, Member: "later"})
	res, err := r.ClaimJobsFlow(ctx, ClaimFlow{ClaimID: "p#1", Limit: 1, Lease: time.Minute,
		Levels: []Level{{Priority: 5}, {Priority: 0}}, TypeLevels: map[string]int{"hi": 5}, Scan: 100, Retry: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	jobs := res.Jobs
	if ids := fmt.Sprint(claimIDs(jobs)); ids != "[raw]" {
		t.Fatalf("claimed %s, want [raw]: the unindexed job of priority 5 first", ids)
	}
	if n := c.ZCard(ctx, r.k.Level(5)).Val(); n != 1 {
		t.Errorf("index of 5 holds %d entries, want 1 (later): gone dropped, raw claimed", n)
	}
	if s := c.ZScore(ctx, r.k.Level(5), "later").Val(); int64(s) != later {
		t.Errorf("later's index score %v, want its due %d", s, later)
	}
	if n := c.ZCard(ctx, r.k.Level(0)).Val(); n != 3 {
		t.Errorf("index of 0 holds %d entries, want 3", n)
	}
}

// The writers index a job with a level: Enqueue, EnqueueUnique (a new job
// and a debounced one, at its new due) and an ack that retries or
// releases it; a job without one is in no index.
func TestLevelIndexWriters(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	r := New(c, "ns")
	ctx := context.Background()
	must(t, errOf(r.Enqueue(ctx, []NewJob{{ID: "e", Envelope: `{"task":"a"}`, AtMS: 5, Level: 3, Indexed: true},
		{ID: "plain", Envelope: `{"task":"a"}`, AtMS: 5}})))
	must(t, errOf(r.EnqueueUnique(ctx, []NewJob{{ID: "u", Envelope: `{"task":"a"}`, AtMS: 6, Level: -2, Indexed: true,
		Unique: UniqueJob{Identity: "a|k", TTL: time.Minute, Debounce: -1}}})))
	score := func(level int, id string) int64 {
		s, err := c.ZScore(ctx, r.k.Level(level), id).Result()
		if err != nil {
			return -1
		}
		return int64(s)
	}
	if score(3, "e") != 5 || score(-2, "u") != 6 || score(0, "plain") != -1 || score(3, "plain") != -1 {
		t.Fatalf("index scores e %d (want 5), u %d (want 6), plain %d/%d (want none)", score(3, "e"), score(-2, "u"), score(0, "plain"), score(3, "plain"))
	}
	// Debounced: the pending holder moves to its new due in the index too.
	res, err := r.EnqueueUnique(ctx, []NewJob{{ID: "u2", Envelope: `{"task":"a","payload":2}`, Level: -2, Indexed: true,
		Unique: UniqueJob{Identity: "a|k", TTL: time.Minute, Debounce: time.Hour}}})
	if err != nil || res[0].Outcome != UniqueDebounced {
		t.Fatalf("debounce: %+v, %v", res, err)
	}
	if got := score(-2, "u"); got != res[0].DueMS {
		t.Errorf("debounced holder's index score %d, want its new due %d", got, res[0].DueMS)
	}
	// A retry puts the job back in its index at its new due.
	jobs, _, err := r.ClaimJobs(ctx, "p#1", 10, time.Minute)
	if err != nil || len(jobs) != 2 {
		t.Fatalf("claimed %v, %v; want e and plain", claimIDs(jobs), err)
	}
	if _, err := r.AckJobs(ctx, AckBatch{DeadLimit: 1, History: testHistory, Acks: []JobAck{
		{ID: "e", Claim: "p#1", Action: AckRetry, DueMS: 77, Type: "a", Level: 3, Indexed: true},
		{ID: "plain", Claim: "p#1", Action: AckRelease, DueMS: 78}}}); err != nil {
		t.Fatal(err)
	}
	if score(3, "e") != 77 || score(0, "plain") != -1 {
		t.Errorf("after the acks: e %d (want 77), plain %d (want none)", score(3, "e"), score(0, "plain"))
	}
}

// errOf drops a result, keeping its error.
func errOf[T any](_ T, err error) error { return err }

// A job in two levels' indexes (its type's priority changed between
// builds) is claimed once, and leaves both.
func TestClaimJobsFlowClaimsAJobInTwoIndexesOnce(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	r := New(c, "ns")
	ctx := context.Background()
	if _, err := r.Enqueue(ctx, []NewJob{{ID: "j", Envelope: `{"task":"a"}`, AtMS: 1, Level: 3, Indexed: true}}); err != nil {
		t.Fatal(err)
	}
	must(t, c.ZAdd(ctx, r.k.Level(7), redis.Z{Score: 1, Member: "j"}).Err())
	res, err := r.ClaimJobsFlow(ctx, ClaimFlow{ClaimID: "p#1", Limit: 10, Lease: time.Minute,
		Levels: []Level{{Priority: 7}, {Priority: 3}}, TypeLevels: map[string]int{"a": 3}, Scan: 100, Retry: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if ids := fmt.Sprint(claimIDs(res.Jobs)); ids != "[j]" {
		t.Fatalf("claimed %s, want [j] once", ids)
	}
	if n := c.ZCard(ctx, r.k.Level(3)).Val() + c.ZCard(ctx, r.k.Level(7)).Val(); n != 1 {
		t.Errorf("%d index entries left, want 1 (the other level's, dropped when a claim reaches it)", n)
	}
}
