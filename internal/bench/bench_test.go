package bench

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestCheckInstantsCountsDuplicatesAndMisses(t *testing.T) {
	const t0 = int64(1_700_000_000_000)
	at := func(task string, sec int64, lagMS int64, proc string) fireLine {
		fire := t0 + sec*1000
		return fireLine{task: task, fireMS: fire, startNS: (fire + lagMS) * int64(time.Millisecond), proc: proc}
	}
	fires := []fireLine{
		at("tick-000", 0, 1, "w0"), at("tick-000", 1, 2, "w1"), at("tick-000", 1, 3, "w2"), // 1 doubled
		at("tick-000", 3, 7, "w0"), // 2 missed; instant 3 is slow (7 ms > 5 ms)
		at("tick-001", 0, 1, "w0"), at("tick-001", 1, 1, "w0"), at("tick-001", 2, 1, "w0"), at("tick-001", 3, 1, "w0"),
		at("tick-000", 9, 1, "w0"), // outside the window
	}
	skips := []skipLine{{task: "tick-000", fireMS: t0 + 2000, reason: "running", proc: "w1"}}
	o := checkInstants(fires, skips, 2, t0, t0+3000)
	if o.Instants != 4 || o.Expected != 8 || o.Executions != 8 || o.Duplicates != 1 || o.Missed != 1 || o.Skipped != 1 {
		t.Errorf("got %+v", o)
	}
	if o.ByProcess["w0"] != 6 || o.Lag.N != 8 || o.Lag.Max != 7 {
		t.Errorf("by process %v, lag %+v", o.ByProcess, o.Lag)
	}
	// The latest run of instants 0..3 started 1, 3, 1 and 7 ms late.
	if w := o.WorstPerInstant; w.N != 4 || w.Min != 1 || w.Max != 7 || o.SlowInstants != 1 {
		t.Errorf("worst per instant %+v, slow instants %d; want 4 instants, 1..7 ms, 1 slow", w, o.SlowInstants)
	}
}

func TestPercentilesAreNearestRank(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	d := summarize(ds)
	if d.N != 100 || d.P50 != 50 || d.P99 != 99 || d.Max != 100 || d.Min != 1 {
		t.Errorf("summarize = %+v", d)
	}
	if d := summarize(nil); d.N != 0 {
		t.Errorf("summarize(nil) = %+v", d)
	}
}

func TestTableRatiosAndTargets(t *testing.T) {
	e := &env{report: &Report{Load: map[string]string{"s1": "1 1 1", "end": "1 1 1"}}}
	e.add("S1", "drain rate", "jobs/s", 30000, ptr(6000), false, &target{100000, ">= 100000"})
	e.add("S2", "lag p99", "ms", 4, ptr(1000), true, &target{5, "<= 5 ms"})
	if r := e.report.Rows[0]; *r.Ratio != 5 || *r.Pass {
		t.Errorf("drain row %+v", r)
	}
	if r := e.report.Rows[1]; *r.Ratio != 250 || !*r.Pass {
		t.Errorf("lag row %+v", r)
	}
	var b bytes.Buffer
	WriteTable(&b, e.report)
	for _, want := range []string{"30000 jobs/s", "5.0x", "SHORT", "4.00 ms", "250.0x", "| ok"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

func TestTickFactoriesAreDistinctTypes(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range tickFactories {
		name := strings.TrimPrefix(typeName(f()), "*")
		if seen[name] {
			t.Fatalf("type %s twice", name)
		}
		seen[name] = true
	}
	if len(seen) != 1000 {
		t.Errorf("%d distinct tick types, want 1000", len(seen))
	}
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }
