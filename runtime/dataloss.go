package runtime

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// retakeScript takes again the lock of a run in progress that Redis lost
// (it restarted empty, or was flushed), unless the lock is held again or
// the task is concurrent.
//
// KEYS: lock, task
// ARGV: lock_value, ttl_ms
// Returns 1 when it took the lock.
var retakeScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if redis.call('HGET', KEYS[2], 'concurrent') == '1' then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`)

// retakeLocks takes again the locks of this process's runs in progress
// after Redis lost its data, so that no fire of a non-concurrent task
// starts beside a run that is still going. A run that finished meanwhile
// gives its lock back.
func (s *Scheduler) retakeLocks(ctx context.Context) {
	runs := s.runsInFlight()
	for _, r := range runs {
		n, err := retakeScript.Run(ctx, s.rdb, []string{r.lockKey, r.taskKey}, r.lockValue, r.ttl.Milliseconds()).Int()
		if err != nil {
			s.log.Warn("could not take the lock of a running task again", "lock", r.lockKey, "err", err)
			continue
		}
		// finished is set before the run's finish script is sent: if that
		// script ran before ours, the lock we just took is nobody's.
		if n == 1 && r.finished.Load() {
			_ = releaseScript.Run(ctx, s.rdb, []string{r.lockKey}, r.lockValue).Err()
		}
	}
}

// hasSchedules reports whether the registry holds a scheduled task (not
// only job types): only then does registration write the namespace's meta.
func (s *Scheduler) hasSchedules() bool {
	for _, reg := range s.reg.Entries() {
		if reg.Schedule() != nil {
			return true
		}
	}
	return false
}
