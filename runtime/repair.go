package runtime

import (
	"context"
	"math"

	"github.com/redis/go-redis/v9"
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

// repairScript puts a task's queue entry back at the task's next_run, if
// its score is still absurd (see absurdScore).
//
// KEYS: queue, task
// ARGV: member, max sane score
// Returns the new score, or 0 when nothing changed.
var repairScript = redis.NewScript(`
local raw = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not raw then return 0 end
local cur = tonumber(raw)
if cur and cur == cur and cur >= 0 and cur <= tonumber(ARGV[2]) then return 0 end
local nr = tonumber(redis.call('HGET', KEYS[2], 'next_run'))
if not nr or nr <= 0 then return 0 end
redis.call('ZADD', KEYS[1], nr, ARGV[1])
return nr
`)

// repairScore resets the queue score of task m from an absurd value (a
// foreign write) to the task's next_run (master duty, from requeue).
func (s *Scheduler) repairScore(ctx context.Context, m string, score float64) {
	n, err := repairScript.Run(ctx, s.rdb, []string{s.keys.queue(), s.keys.task(m)}, m, maxSaneScore).Int64()
	if err != nil {
		s.log.Warn("could not repair an absurd queue score", "task", m, "score", score, "err", err)
		return
	}
	if n > 0 {
		s.log.Warn("absurd queue score replaced by the task's next_run", "task", m, "score", score, "next", fromMS(n))
	}
}
