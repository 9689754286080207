package rdb

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// claimIDs returns the ids of a claim's jobs.
func claimIDs(jobs []ClaimedJob) []string {
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	return ids
}

// A capped type's jobs wait in the queue while MaxRunning of them run;
// the others are claimed past them; an ack frees a slot, and so does the
// lease expiry of a dead claim.
func TestClaimJobsLimitedCapsRunning(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	var jobs []NewJob
	for i := range 5 {
		jobs = append(jobs, NewJob{ID: fmt.Sprintf("c%d", i), Envelope: `{"task":"capped"}`, AtMS: int64(1 + i)})
	}
	jobs = append(jobs, NewJob{ID: "free", Envelope: `{"task":"free"}`, AtMS: 10})
	if _, err := r.Enqueue(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	limits := []JobLimit{{Type: "capped", MaxRunning: 2}}
	now := c.Time(ctx).Val().UnixMilli()
	got, next, _, err := r.ClaimJobsLimited(ctx, "p#1", 10, time.Minute, nil, limits, 100, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if ids := fmt.Sprint(claimIDs(got)); ids != "[c0 c1 free]" {
		t.Fatalf("claimed %s, want [c0 c1 free]", ids)
	}
	if next < now+150 || next > now+1000 {
		t.Errorf("next due %d, want about now (%d) + 200ms: a full cap retries soon, not at once", next, now)
	}
	got, _, _, _ = r.ClaimJobsLimited(ctx, "p#2", 10, time.Minute, []string{"capped"}, limits, 100, 200*time.Millisecond)
	if len(got) != 0 {
		t.Fatalf("claimed %v over the cap", claimIDs(got))
	}
	// An ack frees c0's slot.
	if _, err := r.AckJobs(ctx, AckBatch{DeadLimit: 1, History: testHistory, Slots: map[string][]string{"capped": {"c0"}},
		Acks: []JobAck{{ID: "c0", Claim: "p#1", Action: AckOK, Type: "capped"}}}); err != nil {
		t.Fatal(err)
	}
	got, _, _, _ = r.ClaimJobsLimited(ctx, "p#3", 10, time.Minute, []string{"capped"}, limits, 100, 200*time.Millisecond)
	if ids := fmt.Sprint(claimIDs(got)); ids != "[c2]" {
		t.Fatalf("after an ack claimed %s, want [c2]", ids)
	}
	// p#1 dies: its lease expires (before the master redelivers c1), and
	// c1's slot frees.
	must(t, c.ZAdd(ctx, r.k.Slots("capped"), redis.Z{Score: 1, Member: "c1"}).Err()) // its score passed
	must(t, c.ZAdd(ctx, r.k.Leases(), redis.Z{Score: 1, Member: "p#1"}).Err())       // and so did its lease
	got, _, _, _ = r.ClaimJobsLimited(ctx, "p#4", 10, time.Minute, []string{"capped"}, limits, 100, 200*time.Millisecond)
	if ids := fmt.Sprint(claimIDs(got)); ids != "[c3]" {
		t.Fatalf("after p#1's lease expired claimed %s, want [c3]", ids)
	}
	// p#3's slot member whose score passed while its lease was renewed is
	// kept, and its score brought forward.
	must(t, c.ZAdd(ctx, r.k.Slots("capped"), redis.Z{Score: 1, Member: "c2"}).Err())
	got, _, _, _ = r.ClaimJobsLimited(ctx, "p#5", 10, time.Minute, []string{"capped"}, limits, 100, 200*time.Millisecond)
	if len(got) != 0 {
		t.Fatalf("claimed %v though c2's claim is leased", claimIDs(got))
	}
	if s := c.ZScore(ctx, r.k.Slots("capped"), "c2").Val(); s < float64(now) {
		t.Errorf("c2's slot score %v: want its claim's lease", s)
	}
	if f, _ := r.JobFlow(ctx, "capped", 0); f.Running != 2 {
		t.Errorf("JobFlow running %d, want 2", f.Running)
	}
}

// A rated type starts at most N jobs in any window; with a rate key, each
// key has a window of its own.
func TestClaimJobsLimitedRate(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	var jobs []NewJob
	for i := range 4 {
		jobs = append(jobs, NewJob{ID: fmt.Sprintf("n%d", i), Envelope: `{"task":"rated"}`, AtMS: int64(1 + i)})
		jobs = append(jobs, NewJob{ID: fmt.Sprintf("a%d", i), Envelope: `{"task":"rated","rate_key":"a"}`, AtMS: int64(1 + i)})
		jobs = append(jobs, NewJob{ID: fmt.Sprintf("b%d", i), Envelope: `{"task":"rated","payload":{},"rate_key":"b"}`, AtMS: int64(1 + i)})
	}
	if _, err := r.Enqueue(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	limits := []JobLimit{{Type: "rated", RateN: 2, RatePer: time.Second}}
	now := c.Time(ctx).Val().UnixMilli()
	got, next, _, err := r.ClaimJobsLimited(ctx, "p#1", 100, time.Minute, []string{"rated"}, limits, 100, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	count := map[byte]int{}
	for _, j := range got {
		count[j.ID[0]]++
	}
	if count['n'] != 2 || count['a'] != 2 || count['b'] != 2 {
		t.Fatalf("claimed %v: want 2 of each window", claimIDs(got))
	}
	if next < now+900 || next > now+1100 {
		t.Errorf("next due %d, want when the oldest start leaves the window: about %d", next, now+1000)
	}
	got, _, _, _ = r.ClaimJobsLimited(ctx, "p#2", 100, time.Minute, []string{"rated"}, limits, 100, 50*time.Millisecond)
	if len(got) != 0 {
		t.Fatalf("claimed %v over the rate", claimIDs(got))
	}
	if ttl := c.PTTL(ctx, r.k.RateKey("rated", "a")).Val(); ttl <= 0 || ttl > time.Second {
		t.Errorf("window key ttl %v: want at most the window", ttl)
	}
	time.Sleep(1100 * time.Millisecond)
	got, _, _, _ = r.ClaimJobsLimited(ctx, "p#3", 100, time.Minute, []string{"rated"}, limits, 100, 50*time.Millisecond)
	if len(got) != 6 {
		t.Fatalf("after the window claimed %v, want 6", claimIDs(got))
	}
}

// A rate window holding a foreign value (an operator's SET) fails no
// claim: its jobs wait, the others are claimed, the key is reported and
// left alone; moved aside, its jobs are claimed.
func TestClaimJobsLimitedForeignWindow(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	jobs := []NewJob{
		{ID: "k0", Envelope: `{"task":"rated","rate_key":"bad"}`, AtMS: 1},
		{ID: "n0", Envelope: `{"task":"rated"}`, AtMS: 2},
		{ID: "k1", Envelope: `{"task":"rated","rate_key":"bad"}`, AtMS: 3},
		{ID: "g0", Envelope: `{"task":"rated","rate_key":"good"}`, AtMS: 4},
		{ID: "f0", Envelope: `{"task":"free"}`, AtMS: 5},
	}
	if _, err := r.Enqueue(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	bad := r.k.RateKey("rated", "bad")
	must(t, c.Set(ctx, bad, "an operator's", 0).Err())
	limits := []JobLimit{{Type: "rated", RateN: 10, RatePer: time.Minute}}
	now := c.Time(ctx).Val().UnixMilli()
	got, next, foreign, err := r.ClaimJobsLimited(ctx, "p#1", 10, time.Minute, nil, limits, 100, 200*time.Millisecond)
	if err != nil {
		t.Fatalf("claim with a foreign window: %v", err)
	}
	if ids := fmt.Sprint(claimIDs(got)); ids != "[n0 g0 f0]" {
		t.Fatalf("claimed %s, want [n0 g0 f0]", ids)
	}
	if fmt.Sprint(foreign) != "["+bad+"]" {
		t.Errorf("foreign %q, want [%s]", foreign, bad)
	}
	if next < now+100 || next > now+1000 {
		t.Errorf("next due %d, want about now (%d) + 200ms", next, now)
	}
	if v := c.Get(ctx, bad).Val(); v != "an operator's" {
		t.Errorf("the foreign value is %q: the claim wrote to it", v)
	}
	if n := c.ZCard(ctx, r.k.Jobs()).Val(); n != 2 {
		t.Errorf("%d jobs queued, want k0 and k1", n)
	}
	if _, err := r.Quarantine(ctx, bad, "zset", 1); err != nil {
		t.Fatal(err)
	}
	got, _, foreign, err = r.ClaimJobsLimited(ctx, "p#2", 10, time.Minute, nil, limits, 100, 200*time.Millisecond)
	if ids := fmt.Sprint(claimIDs(got)); err != nil || ids != "[k0 k1]" || len(foreign) != 0 {
		t.Fatalf("after the key was moved aside claimed %s (foreign %q, %v), want [k0 k1]", ids, foreign, err)
	}
}
