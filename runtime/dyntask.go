package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gocrontab/crontab/runtime/schedule"
	"github.com/redis/go-redis/v9"
)

// sourceDynamic marks tasks added at run time with Client.SetTask; they
// are never pruned, only removed with Client.RemoveTask.
const sourceDynamic = "dynamic"

// TaskSpec is a recurring task configured at run time: a registered type,
// its parameters, and a schedule. Every scheduler of the namespace sees it
// within a second; it survives restarts.
type TaskSpec struct {
	// Key names the task (its hash is task:<Key>). Required; it must not be
	// the name of a task declared in code.
	Key string
	// Type is the registered name of the task type that runs it. Required.
	Type string
	// Params is decoded (JSON) into a new value of the type before each
	// run. Nil means the zero value.
	Params any
	// Expression is the schedule (see Parse). Required.
	Expression string
	// TZ is the zone of the schedule. Empty means UTC.
	TZ string
	// Status is written when the task is created; an update keeps the
	// current status unless Status is set. Empty means active on create.
	Status Status
	// Timeout bounds each run. Zero means the type's timeout.
	Timeout time.Duration
	// Concurrent lets runs overlap. False skips a fire while a run is going.
	Concurrent bool
	// Misfire is the policy after downtime. Empty means once.
	Misfire Misfire
}

// SetTask adds or updates a run-time task. A changed expression or zone
// reschedules it from now; otherwise its schedule is kept.
func (c *Client) SetTask(ctx context.Context, spec TaskSpec) error {
	reg := c.reg.Entry(spec.Type)
	switch {
	case spec.Key == "":
		return errors.New("crontab: set task: empty key")
	case reg == nil:
		return fmt.Errorf("crontab: set task %q: type %q is not registered", spec.Key, spec.Type)
	case spec.Expression == "":
		return fmt.Errorf("crontab: set task %q: empty expression", spec.Key)
	case spec.Status != "" && !spec.Status.Valid():
		return fmt.Errorf("crontab: set task %q: status %q: want active, paused or disabled", spec.Key, spec.Status)
	case spec.Misfire != "" && !spec.Misfire.Valid():
		return fmt.Errorf("crontab: set task %q: misfire %q: want once or skip", spec.Key, spec.Misfire)
	}
	if spec.TZ == "" {
		spec.TZ = "UTC"
	}
	if spec.Misfire == "" {
		spec.Misfire = MisfireOnce
	}
	if spec.Timeout <= 0 {
		spec.Timeout = reg.Config().Timeout
	}
	loc, err := time.LoadLocation(spec.TZ)
	if err != nil {
		return fmt.Errorf("crontab: set task %q: tz %q: %w", spec.Key, spec.TZ, err)
	}
	sched, err := schedule.Parse(spec.Expression, loc)
	if err != nil {
		return fmt.Errorf("crontab: set task %q: expression %q: %w", spec.Key, spec.Expression, err)
	}
	params := []byte{}
	if spec.Params != nil {
		if params, err = json.Marshal(spec.Params); err != nil {
			return fmt.Errorf("crontab: set task %q: encode params: %w", spec.Key, err)
		}
		if err := json.Unmarshal(params, reg.Config().New()); err != nil {
			return fmt.Errorf("crontab: set task %q: params do not decode into %s: %w", spec.Key, reg.Config().Class, err)
		}
	}
	now, err := c.rdb.Time(ctx).Result()
	if err != nil {
		return fmt.Errorf("crontab: set task %q: %w", spec.Key, err)
	}
	res, err := setTaskScript.Run(ctx, c.rdb,
		[]string{c.keys.task(spec.Key), c.keys.queue(), c.keys.tasks()},
		spec.Key, ms(now), ms(sched.Next(now)), string(spec.Status), spec.Expression, spec.TZ, schedule.Describe(sched),
		reg.Config().Class, spec.Type, spec.Timeout.Milliseconds(), boolArg(spec.Concurrent), string(spec.Misfire),
		string(params), c.keys.wake()).Int()
	if err != nil {
		return fmt.Errorf("crontab: set task %q: %w", spec.Key, err)
	}
	if res < 0 {
		return fmt.Errorf("crontab: set task %q: a task declared in code has that name", spec.Key)
	}
	return nil
}

// RemoveTask removes a run-time task. It returns an error wrapping
// ErrNotFound when there is none; tasks declared in code cannot be removed
// (disable them instead).
func (c *Client) RemoveTask(ctx context.Context, key string) error {
	n, err := removeTaskScript.Run(ctx, c.rdb, []string{c.keys.task(key), c.keys.queue(), c.keys.tasks()}, key).Int()
	switch {
	case err != nil:
		return fmt.Errorf("crontab: remove task %q: %w", key, err)
	case n < 0:
		return fmt.Errorf("crontab: remove task %q: it is declared in code; disable it instead", key)
	case n == 0:
		return fmt.Errorf("crontab: remove task %q: %w", key, ErrNotFound)
	}
	return nil
}

// setTaskScript upserts a run-time task.
//
// KEYS: task, queue, tasks
// ARGV: key, now, next, status, expression, tz, interval, class, type,
// timeout_ms, concurrent, misfire, params, wake_channel
// Returns 1 when (re)scheduled, 0 when updated in place, -1 when the key is
// a task declared in code.
var setTaskScript = redis.NewScript(`
local src = redis.call('HGET', KEYS[1], 'source')
if src and src ~= 'dynamic' then return -1 end
local changed = 0
if not src then
  redis.call('HSET', KEYS[1], 'name', ARGV[1], 'created_at', ARGV[2], 'last_run', 0, 'runs', 0,
    'failures', 0, 'skips', 0, 'status', ARGV[4] ~= '' and ARGV[4] or 'active', 'source', 'dynamic')
  changed = 1
elseif ARGV[4] ~= '' then
  redis.call('HSET', KEYS[1], 'status', ARGV[4])
end
local cur = redis.call('HMGET', KEYS[1], 'expression', 'tz')
if changed == 1 or cur[1] ~= ARGV[5] or cur[2] ~= ARGV[6] then
  redis.call('HSET', KEYS[1], 'expression', ARGV[5], 'tz', ARGV[6], 'interval', ARGV[7], 'next_run', ARGV[3])
  changed = 1
end
redis.call('HSET', KEYS[1], 'class', ARGV[8], 'type', ARGV[9], 'timeout', ARGV[10], 'concurrent', ARGV[11],
  'misfire', ARGV[12], 'params', ARGV[13])
redis.call('SADD', KEYS[3], ARGV[1])
local st = redis.call('HGET', KEYS[1], 'status')
local nr = tonumber(redis.call('HGET', KEYS[1], 'next_run')) or 0
local queued = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not queued and nr < tonumber(ARGV[2]) then
  -- enabled again: continue from the next future instant
  nr = tonumber(ARGV[3])
  redis.call('HSET', KEYS[1], 'next_run', nr)
end
if st == 'disabled' or nr == 0 then
  redis.call('ZREM', KEYS[2], ARGV[1])
elseif changed == 1 or not queued then
  redis.call('ZADD', KEYS[2], nr, ARGV[1])
  redis.call('PUBLISH', ARGV[14], 'task')
end
return changed
`)

// removeTaskScript deletes a run-time task.
//
// KEYS: task, queue, tasks
// ARGV: key
// Returns 1 when removed, 0 when absent, -1 when declared in code.
var removeTaskScript = redis.NewScript(`
local src = redis.call('HGET', KEYS[1], 'source')
if not src then return 0 end
if src ~= 'dynamic' then return -1 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('SREM', KEYS[3], ARGV[1])
return 1
`)
