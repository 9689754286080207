package bench

import (
	"testing"
	"time"
)

// TestCheckTenants counts S6's fires of one instant: a task fired twice is
// a duplicate, one that did not fire is missed, fires of other instants
// and of other tasks do not count, and the drain ends at the last start.
func TestCheckTenants(t *testing.T) {
	at := int64(1_000_000)
	ns := func(ms int64) int64 { return ms * int64(time.Millisecond) }
	fires := []fireLine{
		{task: "s-0", fireMS: at, startNS: ns(at + 10), proc: "w0"},
		{task: "s-1", fireMS: at, startNS: ns(at + 20), proc: "w1"},
		{task: "s-1", fireMS: at, startNS: ns(at + 30), proc: "w0"},         // a duplicate
		{task: "s-2", fireMS: at - 1000, startNS: ns(at - 999), proc: "w0"}, // another instant
		{task: "s-9", fireMS: at, startNS: ns(at + 40), proc: "w0"},         // not a task of the run
		{task: "tick-000", fireMS: at + 1000, startNS: ns(at + 1002), proc: "w1"},
	}
	o := schedulesOutcome{Tasks: 3, ByProcess: map[string]int{}}
	checkTenants(&o, fires, at, []int64{at, at, at})
	if o.Fired != 2 || o.Missed != 1 || o.Duplicates != 1 {
		t.Errorf("fired %d, missed %d, duplicates %d; want 2, 1, 1", o.Fired, o.Missed, o.Duplicates)
	}
	if o.Drain != 30 {
		t.Errorf("drain %v ms, want 30 (the last start)", o.Drain)
	}
	if o.Probe.N != 1 || o.Probe.Max != 2 {
		t.Errorf("probe %+v, want one fire 2 ms late", o.Probe)
	}
	if o.ByProcess["w0"] != 2 || o.ByProcess["w1"] != 1 {
		t.Errorf("by process %v", o.ByProcess)
	}
}

// TestCheckTenantsJittered: with a jitter each task is counted at its own
// instant (the shared one plus its key's offset), and a fire at the shared
// instant of a task whose instant is later is not its fire.
func TestCheckTenantsJittered(t *testing.T) {
	at := int64(1_000_000)
	due := tenantInstants(3, at, time.Minute)
	if due[0] == due[1] && due[1] == due[2] {
		t.Fatalf("offsets of 3 keys in a minute all equal: %v", due)
	}
	for i, d := range due {
		if d < at || d >= at+60_000 {
			t.Fatalf("task %d due at %d, outside [at, at+1m)", i, d)
		}
	}
	ns := func(ms int64) int64 { return ms * int64(time.Millisecond) }
	fires := []fireLine{
		{task: "s-0", fireMS: due[0], startNS: ns(due[0] + 5), proc: "w0"},
		{task: "s-1", fireMS: due[1], startNS: ns(due[1] + 7), proc: "w1"},
	}
	if due[2] != at {
		fires = append(fires, fireLine{task: "s-2", fireMS: at, startNS: ns(at + 1), proc: "w0"}) // not its instant
	}
	o := schedulesOutcome{Tasks: 3, ByProcess: map[string]int{}}
	checkTenants(&o, fires, at, due)
	if o.Fired != 2 || o.Missed != 1 || o.Duplicates != 0 {
		t.Errorf("fired %d, missed %d, duplicates %d; want 2, 1, 0", o.Fired, o.Missed, o.Duplicates)
	}
	if o.Lag.Max != 7 {
		t.Errorf("lag max %v ms, want 7 (from each task's own instant)", o.Lag.Max)
	}
	if want := float64(max(due[0]+5, due[1]+7) - at); o.Drain != want {
		t.Errorf("drain %v ms, want %v (the instant to the last start)", o.Drain, want)
	}
}

// TestTenantSpecParams: S6's tasks have no params unless -schedule-params
// (its memory figure is the bytes beyond params), and the handler finds
// the task's index from its key alone.
func TestTenantSpecParams(t *testing.T) {
	spec := tenantSpec(7, "every:1h", nil, 0, false)
	if spec.Params != nil {
		t.Errorf("without -schedule-params: params %v, want none", spec.Params)
	}
	if i, ok := tenantIndex(spec.Key, 10); !ok || i != 7 {
		t.Errorf("tenantIndex(%q) = %d, %v; want 7 from the key", spec.Key, i, ok)
	}
	spec = tenantSpec(7, "every:1h", []string{"UTC", "Europe/Paris"}, 0, true)
	if p, ok := spec.Params.(map[string]int); !ok || p["tenant"] != 7 || len(p) != 1 {
		t.Errorf("with -schedule-params: params %#v, want {tenant: 7}", spec.Params)
	}
	if spec.TZ != "Europe/Paris" {
		t.Errorf("zone %q, want zone 7 mod 2", spec.TZ)
	}
}
