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
	for _, key := range []string{"", "a", "b"} {
		w, _, err := r.RateStarts(ctx, "rated", key, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(w) != 2 || w[0].Member == w[1].Member {
			t.Fatalf("window %q holds %+v: want the 2 starts of claim p#1", key, w)
		}
		for _, s := range w {
			if ms := s.AtMS; ms < now || ms > now+1000 {
				t.Errorf("window %q: start %+v at %d, want the claim's server time (about %d)", key, s, ms, now)
			}
		}
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

// RateStarts reads each start the rated claim counted, scored with the
// claim's server time, from the given score on, and the server time of the
// read; a claim after the read scores its starts at that time or later.
func TestRateStartsReadsTheClaimsStarts(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	var jobs []NewJob
	for i := range 3 {
		jobs = append(jobs, NewJob{ID: fmt.Sprintf("n%d", i), Envelope: `{"task":"rated"}`, AtMS: int64(1 + i)})
	}
	if _, err := r.Enqueue(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	limits := []JobLimit{{Type: "rated", RateN: 2, RatePer: time.Minute}}
	before := c.Time(ctx).Val().UnixMilli()
	if got, _, _, err := r.ClaimJobsLimited(ctx, "p#1", 1, time.Minute, nil, limits, 100, time.Second); err != nil || len(got) != 1 {
		t.Fatalf("claim: %v, %v", claimIDs(got), err)
	}
	time.Sleep(3 * time.Millisecond) // the read from now1 on is inclusive: keep the first start out of it
	first, now1, err := r.RateStarts(ctx, "rated", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 1 || first[0].Member == "" || first[0].AtMS < before || first[0].AtMS > now1 {
		t.Fatalf("starts %+v read at %d: want one start scored from %d to the read", first, now1, before)
	}
	time.Sleep(5 * time.Millisecond)
	if got, _, _, err := r.ClaimJobsLimited(ctx, "p#2", 5, time.Minute, nil, limits, 100, time.Second); err != nil || len(got) != 1 {
		t.Fatalf("second claim: %v, %v (want 1: the rate is 2)", claimIDs(got), err)
	}
	next, now2, err := r.RateStarts(ctx, "rated", "", now1)
	if err != nil {
		t.Fatal(err)
	}
	if len(next) != 1 || next[0].Member == first[0].Member || next[0].AtMS < now1 || next[0].AtMS > now2 {
		t.Fatalf("starts from %d: %+v read at %d; want only the second claim's, scored from %d to the read", now1, next, now2, now1)
	}
	if all, _, _ := r.RateStarts(ctx, "rated", "", 0); len(all) != 2 {
		t.Errorf("all starts %+v, want 2", all)
	}
}

// RateKeyStarts counts the starts the claim made in a rate key's window,
// apart from the type's window and other keys', and only those in the
// window.
func TestRateKeyStarts(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	jobs := []NewJob{
		{ID: "a0", Envelope: `{"task":"rated","rate_key":"tenant-7"}`, AtMS: 1},
		{ID: "a1", Envelope: `{"task":"rated","rate_key":"tenant-7"}`, AtMS: 2},
		{ID: "b0", Envelope: `{"task":"rated","rate_key":"tenant-8"}`, AtMS: 3},
		{ID: "n0", Envelope: `{"task":"rated"}`, AtMS: 4},
	}
	if _, err := r.Enqueue(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	limits := []JobLimit{{Type: "rated", RateN: 5, RatePer: time.Minute}}
	if _, _, _, err := r.ClaimJobsLimited(ctx, "p#1", 10, time.Minute, nil, limits, 100, time.Second); err != nil {
		t.Fatal(err)
	}
	now := c.Time(ctx).Val().UnixMilli()
	ws := []RateWindow{
		{"rated", "tenant-7", time.Minute},
		{"rated", "tenant-8", time.Minute},
		{"rated", "tenant-9", time.Minute},      // no such window
		{"rated", "tenant-7", time.Millisecond}, // the starts left this window
	}
	got, err := r.RateKeyStarts(ctx, ws, now+10)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[2 1 0 0]" {
		t.Errorf("RateKeyStarts: %v, want [2 1 0 0]", got)
	}
	if got, err := r.RateKeyStarts(ctx, nil, now); err != nil || len(got) != 0 {
		t.Errorf("RateKeyStarts of none: %v, %v", got, err)
	}
	if f, _ := r.JobFlow(ctx, "rated", time.Minute); f.Starts != 1 {
		t.Errorf("JobFlow starts %d, want 1 (the job without a key)", f.Starts)
	}
	must(t, c.Set(ctx, r.k.RateKey("rated", "bad"), "x", 0).Err())
	if _, err := r.RateKeyStarts(ctx, []RateWindow{{"rated", "bad", time.Minute}}, now); err == nil {
		t.Error("RateKeyStarts of a foreign value: no error")
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
