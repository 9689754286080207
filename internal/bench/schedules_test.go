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
	checkTenants(&o, fires, at)
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
