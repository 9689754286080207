package rdb

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

// FinishRuns adds its batch to the current minute of stats:min (fires,
// failures, lag sum and max) in its own call; a slot an hour old is zeroed
// before it counts again; the hash stays within 60 slots.
func TestFinishRunsMinuteStats(t *testing.T) {
	c := redistest.Start(t).Client(t)
	ctx := context.Background()
	r := New(c, "ns")
	for {
		now, err := r.Time(ctx)
		must(t, err)
		m := now.UnixMilli() / 60000
		if now.Second() > 55 {
			time.Sleep(5 * time.Second) // keep the test inside one minute
			continue
		}
		// The slot of this minute an hour ago, with counts to be zeroed.
		slot := strconv.FormatInt(m%60, 10)
		must(t, c.HSet(ctx, r.k.StatsMinute(), slot, m-60, slot+":fires", 100, slot+":lag_max", 99999).Err())
		// Another slot, of 30 minutes ago: kept.
		old := strconv.FormatInt((m-30)%60, 10)
		must(t, c.HSet(ctx, r.k.StatsMinute(), old, m-30, old+":fires", 7).Err())
		runs := []RunFinish{
			{RunID: RunID("a", 1000), Task: "a", Outcome: "ok", LagMS: 10},
			{RunID: RunID("b", 1000), Task: "b", Outcome: "failed", LagMS: 30},
			{RunID: RunID("c", 1000), Task: "c", Outcome: "abandoned", LagMS: -5},
		}
		if _, err := r.FinishRuns(ctx, testHistory, runs); err != nil {
			t.Fatal(err)
		}
		if _, err := r.FinishRuns(ctx, testHistory, runs[:1]); err != nil {
			t.Fatal(err)
		}
		after, err := r.Time(ctx)
		must(t, err)
		if after.UnixMilli()/60000 != m {
			continue // the minute turned meanwhile: again
		}
		stats, err := r.ReadMinuteStats(ctx, after.UnixMilli())
		must(t, err)
		if len(stats) != 60 || stats[59].Minute != m || stats[29].Minute != m-30 {
			t.Fatalf("stats: %d minutes, last %d, want 60 ending with %d", len(stats), stats[59].Minute, m)
		}
		want := MinuteStat{Minute: m, Fires: 4, Failed: 2, LagSumMS: 50, LagMaxMS: 30}
		if stats[59] != want {
			t.Errorf("this minute: %+v, want %+v", stats[59], want)
		}
		if stats[29].Fires != 7 {
			t.Errorf("30 minutes ago: %+v, want 7 fires", stats[29])
		}
		if stats[58] != (MinuteStat{Minute: m - 1}) {
			t.Errorf("the minute before: %+v, want zeros", stats[58])
		}
		if n := c.HLen(ctx, r.k.StatsMinute()).Val(); n > 60*7 {
			t.Errorf("stats:min has %d fields", n)
		}
		// A foreign value at stats:min: the finish still records its runs.
		must(t, c.Del(ctx, r.k.StatsMinute()).Err())
		must(t, c.Set(ctx, r.k.StatsMinute(), "foreign", 0).Err())
		if _, err := r.FinishRuns(ctx, testHistory, runs[:1]); err != nil {
			t.Errorf("FinishRuns with a foreign stats:min: %v", err)
		}
		if v := c.Get(ctx, r.k.StatsMinute()).Val(); v != "foreign" {
			t.Errorf("stats:min overwritten: %q", v)
		}
		return
	}
}
