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

// claimIDs returns the ids of a claim's jobs.
func claimIDs(jobs []ClaimedJob) []string {
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	return ids
}

// claimLimited is ClaimJobsFlow without priority levels: the limits'
// claim the tests of this file take.
func (r *RDB) claimLimited(ctx context.Context, claimID string, limit int, lease time.Duration, types []string, limits []JobLimit, scan int, retry time.Duration) (FlowClaim, error) {
	return r.ClaimJobsFlow(ctx, ClaimFlow{ClaimID: claimID, Limit: limit, Lease: lease, Types: types, Limits: limits,
		Scan: scan, Retry: retry})
}

// slotFields returns a slots key's fields, "n|deadline_ms" by process.
func slotFields(t *testing.T, c *redis.Client, key string) map[string]string {
	t.Helper()
	f, err := c.HGetAll(context.Background(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// slotN returns the n of a process's field in a slots key (-1: none),
// and checks that its deadline is about now + lease.
func slotN(t *testing.T, c *redis.Client, key, process string, now int64, lease time.Duration) int64 {
	t.Helper()
	v, ok := slotFields(t, c, key)[process]
	if !ok {
		return -1
	}
	n, d, ok := parseSlotField(v)
	if !ok || d < now+lease.Milliseconds() || d > now+lease.Milliseconds()+5000 {
		t.Errorf("%s's slots field %q: want n|about now + lease (%d)", process, v, now+lease.Milliseconds())
	}
	return n
}

// A capped type's jobs wait in the queue while MaxRunning of its slots
// are held; the others are claimed past them. Each process holds a field
// of the slots hash: the slots of its jobs in flight (JobLimit.InFlight)
// and of those it just took; it holds up to JobSlotsAhead jobs per slot
// (the others wait in it for one of its slots); it gives back the rest at
// its next claim; a field past its deadline (a dead process's) is deleted
// and not counted; the live fields never sum to more than the cap, and the
// reply says how many the claimer holds (Held).
func TestClaimJobsLimitedCapsRunning(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	// k jobs per slot of 3: p takes 3k, then 2 more, q 2k, p the last 2.
	const k = JobSlotsAhead
	var jobs []NewJob
	for i := range 5*k + 4 {
		jobs = append(jobs, NewJob{ID: fmt.Sprintf("c%02d", i), Envelope: `{"task":"capped"}`, AtMS: int64(1 + i)})
	}
	jobs = append(jobs, NewJob{ID: "free", Envelope: `{"task":"free"}`, AtMS: 1000})
	ids := func(from, to int, more ...string) string {
		var out []string
		for i := from; i < to; i++ {
			out = append(out, fmt.Sprintf("c%02d", i))
		}
		return fmt.Sprint(append(out, more...))
	}
	if _, err := r.Enqueue(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	key := r.k.Slots("capped")
	limits := func(inflight int) []JobLimit { return []JobLimit{{Type: "capped", MaxRunning: 3, InFlight: inflight}} }
	claim := func(id string, inflight int, types []string) ([]string, int64, []string) {
		t.Helper()
		fc, err := r.claimLimited(ctx, id, 3*k+4, time.Minute, types, limits(inflight), 100, 200*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		process := id[:strings.LastIndexByte(id, '#')]
		want := int64(0)
		if v, ok := slotFields(t, c, key)[process]; ok {
			want, _, _ = parseSlotField(v)
		}
		if got := fc.Held["capped"]; int64(got) != want {
			t.Errorf("%s: Held %d, want its field's n, %d", id, got, want)
		}
		return claimIDs(fc.Jobs), fc.NextMS, fc.OwnFull
	}
	sum := func() (total int64) {
		for p, v := range slotFields(t, c, key) {
			n, d, _ := parseSlotField(v)
			if d > time.Now().UnixMilli() {
				total += n
			} else {
				t.Errorf("field of %s past its deadline left: %q", p, v)
			}
		}
		return total
	}
	now := c.Time(ctx).Val().UnixMilli()
	got, next, own := claim("p#1", 0, nil)
	if fmt.Sprint(got) != ids(0, 3*k, "free") {
		t.Fatalf("p claimed %v, want %s: %d jobs per slot of 3", got, ids(0, 3*k, "free"), k)
	}
	if next < now+150 || next > now+1000 {
		t.Errorf("next due %d, want about now (%d) + 200ms: a full cap retries soon, not at once", next, now)
	}
	if fmt.Sprint(own) != "[capped]" {
		t.Errorf("p passed over capped jobs holding its slots: own full %v, want [capped]", own)
	}
	if n := slotN(t, c, key, "p", now, time.Minute); n != 3 {
		t.Errorf("p holds %d slots, want 3", n)
	}
	// Another process: the cluster is full, not its own slots.
	got, _, own = claim("q#1", 0, []string{"capped"})
	if len(got) != 0 || len(own) != 0 {
		t.Fatalf("q claimed %v (own full %v) over the cap, want none (and not its own slots full)", got, own)
	}
	if _, ok := slotFields(t, c, key)["q"]; ok {
		t.Error("q holds a field for no slot")
	}
	// Two of p's jobs ended: with 3k - 2 in hand, it takes two more.
	got, _, _ = claim("p#2", 3*k-2, []string{"capped"})
	if fmt.Sprint(got) != ids(3*k, 3*k+2) {
		t.Fatalf("p with %d in hand claimed %v, want %s", 3*k-2, got, ids(3*k, 3*k+2))
	}
	// All but one ended: p's next claim, though of another type, gives
	// back the slots of jobs it no longer holds, and q takes them.
	got, _, _ = claim("p#3", 1, []string{"free"})
	if len(got) != 0 {
		t.Fatalf("p claimed %v, want nothing (no free job due)", got)
	}
	if n := slotN(t, c, key, "p", now, time.Minute); n != 1 {
		t.Errorf("p with 1 in flight holds %d slots, want 1", n)
	}
	got, _, _ = claim("q#2", 0, []string{"capped"})
	if fmt.Sprint(got) != ids(3*k+2, 5*k+2) {
		t.Fatalf("q claimed %v, want %s: %d per slot of the 2 left", got, ids(3*k+2, 5*k+2), k)
	}
	if s := sum(); s != 3 {
		t.Errorf("live fields sum to %d, want the cap, 3", s)
	}
	// p, its k jobs of its 1 slot in hand, can take none.
	got, _, own = claim("p#4", k, []string{"capped"})
	if len(got) != 0 || fmt.Sprint(own) != "[capped]" {
		t.Fatalf("p claimed %v (own full %v) over the cap, want none and its own slots full", got, own)
	}
	// q dies: its field's deadline passes; its slots are not counted and
	// the field goes.
	must(t, c.HSet(ctx, key, "q", "2|1").Err())
	got, _, _ = claim("p#5", 2, []string{"capped"})
	if fmt.Sprint(got) != ids(5*k+2, 5*k+4) {
		t.Fatalf("after q's field expired p claimed %v, want %s", got, ids(5*k+2, 5*k+4))
	}
	if _, ok := slotFields(t, c, key)["q"]; ok {
		t.Error("q's expired field is left")
	}
	if n := slotN(t, c, key, "p", now, time.Minute); n != 3 {
		t.Errorf("p holds %d slots, want 3 (2 in flight, 2 taken, cap 3)", n)
	}
	if f, _ := r.JobFlow(ctx, "capped", 0); f.Running != 3 {
		t.Errorf("JobFlow running %d, want 3", f.Running)
	}
	// The renewal moves the deadline on and keeps n; it brings no field
	// back.
	must(t, c.HSet(ctx, key, "p", "2|"+fmt.Sprint(now+1000)).Err())
	if err := r.RenewJobSlots(ctx, "p", time.Hour, []string{"capped"}); err != nil {
		t.Fatal(err)
	}
	if err := r.RenewJobSlots(ctx, "z", time.Hour, []string{"capped"}); err != nil {
		t.Fatal(err)
	}
	if n := slotN(t, c, key, "p", now, time.Hour); n != 2 {
		t.Errorf("renewed: p holds %d slots, want 2", n)
	}
	if _, ok := slotFields(t, c, key)["z"]; ok {
		t.Error("the renewal made a field for a process that held none")
	}
	if err := r.ReleaseJobSlots(ctx, "p", []string{"capped"}); err != nil {
		t.Fatal(err)
	}
	if f := slotFields(t, c, key); len(f) != 0 {
		t.Errorf("released: fields %v left", f)
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
	fc, err := r.claimLimited(ctx, "p#1", 100, time.Minute, []string{"rated"}, limits, 100, 5*time.Second)
	got, next := fc.Jobs, fc.NextMS
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
	fc, _ = r.claimLimited(ctx, "p#2", 100, time.Minute, []string{"rated"}, limits, 100, 50*time.Millisecond)
	got = fc.Jobs
	if len(got) != 0 {
		t.Fatalf("claimed %v over the rate", claimIDs(got))
	}
	if ttl := c.PTTL(ctx, r.k.RateKey("rated", "a")).Val(); ttl <= 0 || ttl > time.Second {
		t.Errorf("window key ttl %v: want at most the window", ttl)
	}
	time.Sleep(1100 * time.Millisecond)
	fc, _ = r.claimLimited(ctx, "p#3", 100, time.Minute, []string{"rated"}, limits, 100, 50*time.Millisecond)
	got = fc.Jobs
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
	if fc, err := r.claimLimited(ctx, "p#1", 1, time.Minute, nil, limits, 100, time.Second); err != nil || len(fc.Jobs) != 1 {
		t.Fatalf("claim: %v, %v", claimIDs(fc.Jobs), err)
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
	if fc, err := r.claimLimited(ctx, "p#2", 5, time.Minute, nil, limits, 100, time.Second); err != nil || len(fc.Jobs) != 1 {
		t.Fatalf("second claim: %v, %v (want 1: the rate is 2)", claimIDs(fc.Jobs), err)
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
	if _, err := r.claimLimited(ctx, "p#1", 10, time.Minute, nil, limits, 100, time.Second); err != nil {
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
	fc, err := r.claimLimited(ctx, "p#1", 10, time.Minute, nil, limits, 100, 200*time.Millisecond)
	got, next, foreign := fc.Jobs, fc.NextMS, fc.Foreign
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
	fc, err = r.claimLimited(ctx, "p#2", 10, time.Minute, nil, limits, 100, 200*time.Millisecond)
	got, foreign = fc.Jobs, fc.Foreign
	if ids := fmt.Sprint(claimIDs(got)); err != nil || ids != "[k0 k1]" || len(foreign) != 0 {
		t.Fatalf("after the key was moved aside claimed %s (foreign %q, %v), want [k0 k1]", ids, foreign, err)
	}
}
