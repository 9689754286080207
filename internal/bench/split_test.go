package bench

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

// Three real worker processes split each instant of 20 every:1s tasks;
// one is SIGKILLed. Until the others stop counting it (its process TTL, 1 s
// here, and a heartbeat), its share is claimed by them after the split's
// grace; every instant of every task still runs exactly once.
func TestKilledPeerShareFiresOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes for 7s")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	srv := redistest.Start(t, redistest.WithUnixSocket())
	cfg := Defaults()
	cfg.Self = self
	e := &env{cfg: cfg, srv: srv, admin: srv.Client(t), log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		report: &Report{Details: map[string]any{}, Load: map[string]string{}}}
	ctx := context.Background()
	f, err := e.newFleet()
	if err != nil {
		t.Fatal(err)
	}
	defer f.stop()
	const tasks = 20
	var victim *proc
	for range 3 {
		p, err := f.spawn(ctx, tasks, "-ttl", "1s")
		if err != nil {
			t.Fatal(err)
		}
		victim = p
	}
	ready := time.Now()
	time.Sleep(2500 * time.Millisecond)
	f.mu.Lock()
	delete(f.procs, victim.id)
	f.mu.Unlock()
	killedAt := time.Now()
	victim.kill()
	time.Sleep(4 * time.Second)

	first := ready.Truncate(time.Second).Add(time.Second).UnixMilli()
	last := time.Now().Truncate(time.Second).Add(-time.Second).UnixMilli()
	f.awaitFires(ctx, tasks, last)
	f.stop()
	fires, skips := f.snapshot()
	o := checkInstants(fires, skips, tasks, first, last)
	if o.Duplicates != 0 || o.Missed != 0 || o.Skipped != 0 {
		t.Errorf("%d instants x %d tasks: %d duplicates, %d missed, %d skipped; want none (runs by process %v)",
			o.Instants, tasks, o.Duplicates, o.Missed, o.Skipped, o.ByProcess)
	}
	// The split was on: the victim ran its share before the kill, and in
	// the second after it some runs (its share) came after the grace.
	var graced int
	for _, l := range fires {
		at := time.UnixMilli(l.fireMS)
		if at.After(killedAt) && at.Before(killedAt.Add(time.Second)) && l.lag() >= 4*time.Millisecond {
			graced++
		}
	}
	if o.ByProcess[victim.id] == 0 || graced == 0 {
		t.Errorf("victim ran %d runs before its kill, %d runs in the second after it started 4 ms late or more; want both > 0 (a split instant, its share taken after the grace)",
			o.ByProcess[victim.id], graced)
	}
	t.Logf("%d runs, by process %v; %d runs 4 ms late or more in the second after the kill", o.Executions, o.ByProcess, graced)
}
