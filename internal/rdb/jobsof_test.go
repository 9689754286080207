package rdb

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

// ClaimJobsOf claims only the due jobs of its types (and those whose
// envelope names none), oldest first, and leaves the others in the queue
// as they are; its next due time passes over the others' due jobs.
func TestClaimJobsOfTakesOnlyItsTypes(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	jobs := []NewJob{
		{ID: "mine1", Envelope: `{"task":"send sms","payload":{}}`, AtMS: 1},
		{ID: "other1", Envelope: `{"task":"send mail","payload":{}}`, AtMS: 2},
		{ID: "mine2", Envelope: `{ "payload": 1, "task": "send sms" }`, AtMS: 3}, // another producer's shape
		{ID: "other2", Envelope: `{"task":"send smss"}`, AtMS: 4},
		{ID: "bad", Envelope: `not json`, AtMS: 5},
		{ID: "mine3", Envelope: `{"task":"send sms"}`, AtMS: 6},
		{ID: "later", Envelope: `{"task":"send mail"}`, Delay: time.Hour},
	}
	if _, err := r.Enqueue(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	before := map[string]string{}
	for _, id := range []string{"other1", "other2"} {
		before[id] = c.HGet(ctx, r.k.JobData(), id).Val()
	}
	c.HSet(ctx, r.k.FirstDue(), "mine2", 1) // put back before: first due at 1, queued at 3

	got, next, err := r.ClaimJobsOf(ctx, "p#1", 10, time.Minute, []string{"send sms", "other type"}, 100, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, j := range got {
		ids = append(ids, j.ID)
	}
	if want := []string{"mine1", "mine2", "bad", "mine3"}; !slices.Equal(ids, want) {
		t.Fatalf("claimed %v, want %v", ids, want)
	}
	if got[0].DueMS != 1 || got[0].FirstDueMS != 1 || got[1].DueMS != 3 || got[1].FirstDueMS != 1 {
		t.Errorf("due and first due: %+v, %+v; want 1/1 and 3/1 (the kept first due)", got[0], got[1])
	}
	queued := c.ZRangeWithScores(ctx, r.k.Jobs(), 0, -1).Val()
	var left []string
	for _, z := range queued {
		left = append(left, z.Member.(string))
	}
	if want := []string{"other1", "other2", "later"}; !slices.Equal(left, want) {
		t.Errorf("queue holds %v, want %v", left, want)
	}
	if queued[0].Score != 2 || queued[1].Score != 4 {
		t.Errorf("the others' scores moved: %v", queued)
	}
	for id, env := range before {
		if c.HGet(ctx, r.k.JobData(), id).Val() != env || c.HExists(ctx, r.k.Owners(), id).Val() {
			t.Errorf("job %s was touched", id)
		}
	}
	if owner := c.HGet(ctx, r.k.Owners(), "mine3").Val(); owner != OwnerValue("p#1", 6) {
		t.Errorf("mine3's owner = %q, want the claim and the due it was claimed at", owner)
	}
	// The next due job is the one after now, not the others' due ones.
	if d := time.Until(time.UnixMilli(next)); d < 59*time.Minute {
		t.Errorf("next due in %v, want about an hour (the others' due jobs passed over)", d)
	}

	// A scan that ends among due jobs of other types says to look again
	// after retry, not at once.
	var many []NewJob
	for i := range 20 {
		many = append(many, NewJob{ID: "o" + strings.Repeat("x", i), Envelope: `{"task":"send mail"}`, AtMS: 10})
	}
	if _, err := r.Enqueue(ctx, many); err != nil {
		t.Fatal(err)
	}
	got, next, err = r.ClaimJobsOf(ctx, "p#2", 2, time.Minute, []string{"send sms"}, 5, 50*time.Millisecond)
	if err != nil || len(got) != 0 {
		t.Fatalf("claim among the others' jobs: %d jobs, %v", len(got), err)
	}
	if d := time.Until(time.UnixMilli(next)); d < 0 || d > 100*time.Millisecond {
		t.Errorf("next in %v, want the retry (50 ms)", d)
	}
	for _, bad := range []struct {
		limit, scan int
		types       []string
	}{{MaxJobClaim + 1, MaxJobScan, []string{"a"}}, {10, 5, []string{"a"}}, {10, MaxJobScan + 1, []string{"a"}}, {10, 10, nil}} {
		if _, _, err := r.ClaimJobsOf(ctx, "p#3", bad.limit, time.Minute, bad.types, bad.scan, time.Millisecond); err == nil {
			t.Errorf("limit %d, scan %d, types %v: no error", bad.limit, bad.scan, bad.types)
		}
	}
}
