package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
	"github.com/gocrontab/crontab/internal/redistest"
)

// prioLog records the order in which the jobs of a priority test start.
var prioLog struct {
	sync.Mutex
	order map[string][]string // by test: the type of each start
}

func prioStart(test, typ string) {
	prioLog.Lock()
	defer prioLog.Unlock()
	if prioLog.order == nil {
		prioLog.order = map[string][]string{}
	}
	prioLog.order[test] = append(prioLog.order[test], typ)
}

func prioOrder(test string) []string {
	prioLog.Lock()
	defer prioLog.Unlock()
	return append([]string(nil), prioLog.order[test]...)
}

type prioHigh struct{ Test string }

func (j prioHigh) Handle(context.Context) error { prioStart(j.Test, "high"); return nil }

type prioLow struct{ Test string }

func (j prioLow) Handle(context.Context) error { prioStart(j.Test, "low"); return nil }

// A backlog of due jobs of priorities 10 and 0 (weights 11 and 1), the low
// ones enqueued first: one worker runs them in the ratio of the weights,
// exactly one low job in every 12 while both are due, so the high ones go
// first and the low ones are not starved; each job runs once.
func TestPriorityWeightsBacklog(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	name := unique(t)
	reg := testRegistry(t,
		TaskConfig{Name: "high", Priority: 10, New: func() TaskInterface { return new(prioHigh) }},
		TaskConfig{Name: "low", New: func() TaskInterface { return new(prioLow) }})
	c := NewClient(rdb, reg)
	ctx := context.Background()
	var jobs []Job
	// More low jobs than a claim checks for unindexed ones at the head
	// (64): the high ones are found by their index, not by their place.
	for range 200 {
		jobs = append(jobs, Job{Value: prioLow{Test: name}})
	}
	for range 240 {
		jobs = append(jobs, Job{Value: prioHigh{Test: name}})
	}
	if _, err := c.EnqueueMany(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	runScheduler(t, rdb, reg, WithWorkers(1))
	waitFor(t, 20*time.Second, "440 jobs to run", func() bool { return len(prioOrder(name)) >= 440 })
	order := prioOrder(name)
	n := map[string]int{}
	for _, typ := range order {
		n[typ]++
	}
	if n["high"] != 240 || n["low"] != 200 {
		t.Fatalf("ran %v, want high 240 and low 200 (each job once)", n)
	}
	// Both are due for the first 240 starts at least (20 low, 220 high).
	for w := 0; w+12 <= 240; w += 12 {
		low := 0
		for _, typ := range order[w : w+12] {
			if typ == "low" {
				low++
			}
		}
		if low != 1 {
			t.Fatalf("starts %d-%d: %d low, want exactly 1 in every 12 (weights 11 and 1): %v", w, w+11, low, order[w:w+12])
		}
	}
	keys := rdbOf(rdb).Keys()
	for _, p := range []int{0, 10} {
		if k := rdb.ZCard(ctx, keys.Level(p)).Val(); k != 0 {
			t.Errorf("level %d's index holds %d entries after the drain, want 0", p, k)
		}
	}
}

// More distinct priorities than a claim takes is an error (from
// NewScheduler), not a failure of every claim later.
func TestCheckLevelsBoundsPriorities(t *testing.T) {
	var ps []int
	for i := 1; i < rdb.MaxLevels; i++ {
		ps = append(ps, i, -i)
	}
	if err := checkLevels(ps[:rdb.MaxLevels-1]); err != nil {
		t.Errorf("%d priorities and 0: %v, want nil", rdb.MaxLevels-1, err)
	}
	err := checkLevels(ps[:rdb.MaxLevels])
	if err == nil || !strings.Contains(err.Error(), "65 distinct priorities") {
		t.Errorf("%d priorities and 0: %v, want an error naming 65 distinct priorities", rdb.MaxLevels, err)
	}
}
