package runtime

import (
	"fmt"
	"slices"

	"github.com/gocrontab/crontab/internal/rdb"
)

// levelOf is the priority level a job of type typ is indexed at (see
// TaskConfig.Priority): in a build where some type has a priority
// (Registry.Prioritized) every job is indexed, at its type's priority, or
// 0 for a type reg lacks; in any other build none is (indexed false).
func levelOf(reg *Registry, typ string) (level int, indexed bool) {
	if !reg.Prioritized() {
		return 0, false
	}
	if e := reg.Entry(typ); e != nil {
		return e.Config().Priority, true
	}
	return 0, true
}

// claimLevels returns the priority levels this process claims jobs from,
// with their round robin state, and its types whose priority is not 0: nil
// when no type of its build has a priority, and its claims take the
// queue in due order. The levels are those of the types it runs, and 0
// when it runs every type (a job of a type it lacks is at level 0). Set at
// the first claim.
func (jr *jobRunner) claimLevels() []rdb.Level {
	jr.levelsOnce.Do(func() {
		if !jr.all.Prioritized() {
			return
		}
		var ps []int
		if jr.jobTypes() == nil {
			ps = append(ps, 0)
		}
		for _, e := range jr.reg.Entries() {
			c := e.Config()
			ps = append(ps, c.Priority)
			if c.Priority != 0 {
				if jr.typeLevels == nil {
					jr.typeLevels = map[string]int{}
				}
				jr.typeLevels[c.Name] = c.Priority
			}
		}
		slices.Sort(ps)
		for _, p := range slices.Compact(ps) {
			jr.levels = append(jr.levels, rdb.Level{Priority: p})
		}
	})
	return jr.levels
}

// ackLevel is the level index a retried or released job goes back into
// (levelOf its type); of a job released before it was decoded, the type
// is read from the envelope as the claim scripts read it.
func (jr *jobRunner) ackLevel(j *jobRun) (int, bool) {
	if !jr.all.Prioritized() {
		return 0, false
	}
	t := j.env.Task
	if t == "" {
		t = rdb.EnvelopeType(j.raw)
	}
	return levelOf(jr.all, t)
}

// checkLevels is NewScheduler's check that the priorities of the types a
// process runs, with 0, are no more distinct levels than one claim takes
// (rdb.MaxLevels).
func checkLevels(priorities []int) error {
	seen := map[int]bool{0: true}
	for _, p := range priorities {
		seen[p] = true
	}
	if len(seen) > rdb.MaxLevels {
		return fmt.Errorf("crontab: the job types run here have %d distinct priorities (with 0); at most %d: give types that share a level the same priority", len(seen), rdb.MaxLevels)
	}
	return nil
}

// priorities lists the priority of each type of reg.
func priorities(reg *Registry) []int {
	var out []int
	for _, e := range reg.Entries() {
		out = append(out, e.Config().Priority)
	}
	return out
}
