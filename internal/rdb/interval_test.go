package rdb

import (
	"context"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

// TestIntervalRewritten: registering a declared task again with the same
// expression rewrites its interval (the words of a newer release) and
// keeps its schedule; setting a run-time task again deletes the interval,
// class and name an older layout stored.
func TestIntervalRewritten(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t).Client(t)
	r := New(c, "ns")
	declared(t, r)
	must(t, c.HSet(ctx, r.k.Task("a"), "interval", "old words").Err())
	next := c.HGet(ctx, r.k.Task("a"), "next_run").Val()
	if _, _, err := r.Register(ctx, 600, []TaskDecl{{Key: "a", Class: "A", Type: "a", Expression: "every:1s", TZ: "UTC",
		Interval: "every second, in new words", Status: "active", NextMS: 9000, Timeout: time.Minute, Misfire: "once"}}); err != nil {
		t.Fatal(err)
	}
	if got := c.HGet(ctx, r.k.Task("a"), "interval").Val(); got != "every second, in new words" {
		t.Errorf("declared task's interval after Register: %q", got)
	}
	if got := c.HGet(ctx, r.k.Task("a"), "next_run").Val(); got != next {
		t.Errorf("next_run %s, want %s kept (same expression)", got, next)
	}
	now := time.Now().UnixMilli()
	d := TaskDecl{Key: "d", Class: "D", Type: "d", Expression: "every:1h", TZ: "UTC", Interval: "old",
		NextMS: now + 3600_000, Timeout: time.Minute, Misfire: "once"}
	if _, err := r.SetTask(ctx, now, d); err != nil {
		t.Fatal(err)
	}
	// A run-time task's interval is computed when read (Inspector): a hash
	// written before that layout loses its stored words at the next SetTask.
	must(t, c.HSet(ctx, r.k.Task("d"), "interval", "old words", "class", "D", "name", "d").Err())
	d.Interval, d.NextMS = "every hour", now+7200_000
	if _, err := r.SetTask(ctx, now, d); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"interval", "class", "name"} {
		if c.HExists(ctx, r.k.Task("d"), f).Val() {
			t.Errorf("run-time task's %s still stored after SetTask: %q", f, c.HGet(ctx, r.k.Task("d"), f).Val())
		}
	}
	if got := c.HGet(ctx, r.k.Task("d"), "next_run").Val(); got == "" || got == "0" {
		t.Errorf("run-time task's next_run %q", got)
	}
}
