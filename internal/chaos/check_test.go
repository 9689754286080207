package chaos

import (
	"strings"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/chaos/tasks"
	crontab "github.com/gocrontab/crontab/runtime"
)

// TestCheckerFindsEachViolation feeds the checker made-up evidence with one
// broken guarantee of each kind, and evidence it must accept.
func TestCheckerFindsEachViolation(t *testing.T) {
	base := time.Unix(1_700_000_000, 0)
	at := func(s float64) time.Time { return base.Add(time.Duration(s * float64(time.Second))) }
	p1 := &instance{id: "w0.1", slot: 0, done: make(chan struct{})}
	p2 := &instance{id: "w1.1", slot: 1, done: make(chan struct{}), stops: []span{{at(10.5), at(15)}}}
	close(p1.done)
	close(p2.done)
	p1.exited, p2.exited = at(30), at(30)
	var events []tasks.Event
	add := func(task string, fire, start, end float64, proc, job string) {
		e := tasks.Event{Kind: tasks.Start, Task: task, Fire: at(fire), JobID: job, Attempt: 1, Process: proc, Wall: at(start)}
		events = append(events, e)
		if end > 0 {
			e.Kind, e.Wall = tasks.End, at(end)
			events = append(events, e)
		}
	}
	var history []crontab.Record
	for i := 0; i <= 20; i++ {
		switch i {
		case 3: // ran twice
			add("tick", 3, 3.001, 3.01, "w0.1", "")
			add("tick", 3, 3.002, 3.02, "w1.1", "")
		case 5: // neither ran nor recorded
		case 6: // recorded skipped: fine
			history = append(history, crontab.Record{Task: "tick", Fire: at(6), Outcome: crontab.OutcomeSkipped})
		case 7: // overlaps the run of 8
			add("tick", 7, 7.001, 8.5, "w0.1", "")
		case 9: // early
			add("tick", 9, 8.9, 9.1, "w0.1", "")
		case 10: // a stopped process's run, recorded abandoned, overlapping the 3 next: excused
			add("tick", 10, 10.001, 15.1, "w1.1", "")
			history = append(history, crontab.Record{Task: "tick", Fire: at(10), Outcome: crontab.OutcomeAbandoned})
		case 14: // a catch-up 6 s late: 15 to 20 are dropped by misfire=once
			add("tick", 14, 20.01, 20.02, "w0.1", "")
		case 15, 16, 17, 18, 19, 20:
		default:
			add("tick", float64(i), float64(i)+0.001, float64(i)+0.01, "w0.1", "")
		}
	}
	add("job", 1, 1.5, 1.6, "w0.1", "ok")
	add("job", 2, 2.5, 0, "w0.1", "cancelled")
	add("job", 2, 1.5, 1.6, "w0.1", "early")
	add("job", 2, 2.5, 0, "w0.1", "stranger")
	ev := evidence{
		tasks:     []crontab.TaskConfig{{Name: "tick", Expression: "every:1s"}, {Name: "job"}},
		events:    events,
		history:   map[string][]crontab.Record{"tick": history},
		instances: map[string]*instance{"w0.1": p1, "w1.1": p2},
		until:     at(20),
		jobs: []jobState{
			{id: "ok", due: at(1), enqueued: true},
			{id: "never", due: at(2), enqueued: true},
			{id: "cancelled", due: at(2), enqueued: true, cancelTried: true, cancelled: true},
			{id: "early", due: at(2), enqueued: true},
			{id: "uncertain", due: at(2)},
			{id: "cancel-uncertain", due: at(2), enqueued: true, cancelTried: true},
		},
		leftovers: []string{"{chaos}:runs: 1 left"},
	}
	c, bad := check(ev)
	want := []string{
		"instant 22:13:23.000 ran 2 times",
		"runs overlap: process w0.1 attempt 1 start 22:13:23.001", // the same two runs
		"instant 22:13:25.000 neither ran nor is recorded",
		"runs overlap: process w0.1 attempt 1 start 22:13:27.001",
		"instant 22:13:29.000 started early",
		"job never due",
		"job cancelled was cancelled (Cancel returned nil) and ran",
		"job early due 22:13:22.000 started early",
		"job stranger ran but the producer never enqueued it",
		"after the graceful stop: {chaos}:runs: 1 left",
	}
	for _, w := range want {
		found := false
		for _, b := range bad {
			found = found || strings.Contains(b, w)
		}
		if !found {
			t.Errorf("no violation %q", w)
		}
	}
	if len(bad) != len(want) {
		t.Errorf("%d violations, want %d:\n%s", len(bad), len(want), strings.Join(bad, "\n"))
	}
	if c.misfired != 6 || c.skipped != 1 || c.excused != 3 {
		t.Errorf("misfired %d, skipped %d, excused %d; want 6, 1, 3", c.misfired, c.skipped, c.excused)
	}
}
