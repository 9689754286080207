package chaos

import (
	"slices"
	"testing"
	"time"
)

func TestPlanIsAPureFunctionOfTheSeedAndCoversEveryKind(t *testing.T) {
	a := Plan(1, time.Minute, 3, 3*time.Second)
	if b := Plan(1, time.Minute, 3, 3*time.Second); !slices.Equal(a, b) {
		t.Fatal("two plans of seed 1 differ")
	}
	if c := Plan(2, time.Minute, 3, 3*time.Second); slices.Equal(a, c) {
		t.Fatal("seeds 1 and 2 give the same plan")
	}
	seen := map[FaultKind]int{}
	var total time.Duration
	for _, f := range a {
		seen[f.Kind]++
		total += f.Gap + f.For
		if f.Kind == StallRedis && f.For >= 2*time.Second {
			t.Errorf("%v: a Redis stall must be under 2 s", f)
		}
		if f.Target >= 3 || f.Target < TargetAll {
			t.Errorf("%v: target out of range", f)
		}
	}
	for _, k := range Kinds {
		if seen[k] == 0 {
			t.Errorf("no %s fault in the 60 s plan of seed 1: %v", k, a)
		}
	}
	t.Logf("seed 1, 60 s: %d faults, %v of gaps and faults: %v", len(a), total, seen)
}
