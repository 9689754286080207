package redistest_test

import (
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

func TestSentinelFailover(t *testing.T) {
	t.Parallel()
	d := redistest.StartSentinel(t, redistest.WithPassword("pw"))
	ctx := ctxT(t) // after the start, which has its own timeout
	if n := len(d.SentinelAddrs()); n != 3 {
		t.Fatalf("%d sentinels, want 3", n)
	}
	for s, want := range map[*redistest.Server]string{d.Master(): "master", d.Replica(): "slave"} {
		role, err := s.Client(t).Do(ctx, "ROLE").Slice()
		if err != nil || role[0] != want {
			t.Errorf("ROLE on %s = %v, %v; want %s", s.Addr(), role, err, want)
		}
	}
	if addr, err := d.MasterAddr(ctx); err != nil || addr != d.Master().Addr() {
		t.Errorf("MasterAddr = %q, %v; want %s", addr, err, d.Master().Addr())
	}
	rdb := d.FailoverClient(t)
	mustSetGet(t, ctx, rdb, "before")

	d.Master().Kill()
	killed := time.Now()
	addr := d.WaitFailover(t, d.Master().Addr(), 20*time.Second)
	if addr != d.Replica().Addr() {
		t.Errorf("new master %s, want the replica %s", addr, d.Replica().Addr())
	}
	t.Logf("sentinels promoted the replica %v after the kill", time.Since(killed).Round(time.Millisecond))
	// The client follows the master; the data written before is there.
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, err := rdb.Get(ctx, "before").Result()
		if err == nil && v != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET through the failover client after failover: %q, %v", v, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	mustSetGet(t, ctx, rdb, "after")
}
