package runtime

import (
	"context"
	"math"
)

// maxSaneScore bounds the queue scores (unix ms) the scheduler takes at
// face value: 2^53 ms is the year 287,396, and the largest integer a
// float64 score holds exactly.
const maxSaneScore = 1 << 53

// absurdScore reports whether a queue score cannot be an instant the
// scheduler wrote: infinite, NaN, negative or beyond maxSaneScore. Such a
// score sorts last, so the task would never come due.
func absurdScore(score float64) bool {
	return math.IsInf(score, 0) || math.IsNaN(score) || score < 0 || score > maxSaneScore
}

// repairScore resets the queue score of task m from an absurd value (a
// foreign write) to the task's next_run (master duty, from requeue).
func (mt *maintainer) repairScore(ctx context.Context, m string, score float64) {
	n, err := mt.db.RepairScore(ctx, m)
	if err != nil {
		mt.log.Warn("could not repair an absurd queue score", "task", m, "score", score, "err", err)
		return
	}
	if n > 0 {
		mt.log.Warn("absurd queue score replaced by the task's next_run", "task", m, "score", score, "next", fromMS(n))
	}
}
