package rdb

import (
	"context"
	"errors"
	"time"

	"github.com/gocrontab/crontab/runtime/registry"
	"github.com/redis/go-redis/v9"
)

// SourceStatic marks a task declared in code (crontabgen or Registry.Add);
// only such tasks are pruned once no live process declares them.
// SourceDynamic marks a run-time task (SetTask).
const (
	SourceStatic  = "static"
	SourceDynamic = "dynamic"
)

// TaskDecl is a task as its declaration writes it to the task hash: the
// seed fields (name = Key, class, expression, interval, status, next_run)
// and the engine's.
type TaskDecl struct {
	Key        string
	Class      string
	Type       string
	Expression string
	TZ         string
	Interval   string // the schedule in words
	Status     string // "" keeps the stored one (run-time tasks)
	NextMS     int64  // the first instant, if the task is new or rescheduled
	Timeout    time.Duration
	Concurrent bool
	Misfire    string
	Retries    int
	Params     string // run-time tasks: JSON parameters
	// MaxRunning, Rate and Priority are written to FieldMaxRunning,
	// FieldRateN and FieldRatePerMS, FieldPriority when set, and those
	// fields deleted when not, so a task without them has a hash as before.
	MaxRunning int
	Rate       registry.Rate
	Priority   int
}

// flowLua writes the flow-control fields of a task hash from four ARGV
// from index i on (max_running, rate_n, rate_per_ms, priority; "0" means
// not set): HSET when set, HDEL when not.
const flowLua = `
local function set_flow(key, i)
  local names = {'max_running', 'rate_n', 'rate_per_ms', 'priority'}
  for j = 1, 4 do
    local v = ARGV[i + j - 1]
    if v == '0' then
      redis.call('HDEL', key, names[j])
    else
      redis.call('HSET', key, names[j], v)
    end
  end
end
`

// registerScript writes one declared task: created if absent; expression or
// zone changes reschedule it; the status, an operator's, is kept.
//
// KEYS: task, queue, tasks, meta, declared
// ARGV: member, now, next, status, expression, tz, interval, class, type,
// timeout_ms, concurrent, misfire, retries, source, max_running, rate_n,
// rate_per_ms, priority (the last four "0" when not set: see flowLua)
var registerScript = redis.NewScript(luaLib + flowLua + `
want_type(KEYS[1], 'hash')
want_type(KEYS[2], 'zset')
want_type(KEYS[3], 'set')
want_type(KEYS[4], 'hash')
want_type(KEYS[5], 'zset')
local member = ARGV[1]
redis.call('HSETNX', KEYS[4], 'created_at', ARGV[2])
redis.call('ZADD', KEYS[5], ARGV[2], member)
redis.call('SADD', KEYS[3], member)
local changed = 0
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'name', member, 'class', ARGV[8], 'type', ARGV[9],
    'expression', ARGV[5], 'tz', ARGV[6], 'interval', ARGV[7], 'status', ARGV[4],
    'next_run', ARGV[3], 'last_run', 0, 'created_at', ARGV[2], 'timeout', ARGV[10],
    'concurrent', ARGV[11], 'misfire', ARGV[12], 'retries', ARGV[13], 'source', ARGV[14],
    'runs', 0, 'failures', 0, 'skips', 0)
  changed = 1
else
  redis.call('HSET', KEYS[1], 'name', member, 'class', ARGV[8], 'type', ARGV[9], 'timeout', ARGV[10],
    'concurrent', ARGV[11], 'misfire', ARGV[12], 'retries', ARGV[13], 'source', ARGV[14])
  local cur = redis.call('HMGET', KEYS[1], 'expression', 'tz', 'next_run')
  if cur[1] ~= ARGV[5] or cur[2] ~= ARGV[6] or not tonumber(cur[3]) then
    redis.call('HSET', KEYS[1], 'expression', ARGV[5], 'tz', ARGV[6], 'interval', ARGV[7], 'next_run', ARGV[3])
    changed = 1
  end
end
set_flow(KEYS[1], 15)
local st = redis.call('HGET', KEYS[1], 'status')
local nr = tonumber(redis.call('HGET', KEYS[1], 'next_run'))
if st == 'disabled' or nr == 0 then
  redis.call('ZREM', KEYS[2], member)
elseif changed == 1 or not redis.call('ZSCORE', KEYS[2], member) then
  redis.call('ZADD', KEYS[2], nr, member)
end
return changed
`)

// Register writes the declared tasks, one script call each in one
// pipeline, and reports which were created or rescheduled.
// Failure: each call is one task's; it checks the types of its five keys
// before its first write, so a foreign value fails that task's call having
// written nothing (quarantine moves a foreign singleton aside).
func (r *RDB) Register(ctx context.Context, nowMS int64, tasks []TaskDecl) ([]bool, error) {
	cmds, err := pipelined(ctx, r.c, []*redis.Script{registerScript}, func(pipe redis.Pipeliner) []*redis.Cmd {
		cmds := make([]*redis.Cmd, len(tasks))
		for i, t := range tasks {
			cmds[i] = registerScript.EvalSha(ctx, pipe,
				[]string{r.k.Task(t.Key), r.k.Queue(), r.k.Tasks(), r.k.Meta(), r.k.Declared()},
				append([]any{t.Key, nowMS, t.NextMS, t.Status, t.Expression, t.TZ, t.Interval, t.Class, t.Type,
					t.Timeout.Milliseconds(), boolArg(t.Concurrent), t.Misfire, t.Retries, SourceStatic},
					flowArgs(t.MaxRunning, t.Rate, t.Priority)...)...)
		}
		return cmds
	})
	if err != nil {
		return nil, err
	}
	changed := make([]bool, len(cmds))
	for i, cmd := range cmds {
		n, _ := cmd.Int64()
		changed[i] = n == 1
	}
	return changed, nil
}

// setTaskScript upserts a run-time task.
//
// KEYS: task, queue, tasks
// ARGV: key, now, next, status, expression, tz, interval, class, type,
// timeout_ms, concurrent, misfire, params, wake_channel, max_running,
// rate_n, rate_per_ms, priority (the last four "0" when not set: see
// flowLua)
// Returns 1 when (re)scheduled, 0 when updated in place, -1 when the key is
// a task declared in code.
var setTaskScript = redis.NewScript(luaLib + flowLua + `
want_type(KEYS[1], 'hash')
want_type(KEYS[2], 'zset')
want_type(KEYS[3], 'set')
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
set_flow(KEYS[1], 15)
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

// SetTaskResult is what SetTask did.
type SetTaskResult int

// The results of SetTask.
const (
	TaskUpdated     SetTaskResult = 0  // updated in place, schedule kept
	TaskScheduled   SetTaskResult = 1  // created, or rescheduled
	TaskDeclaredErr SetTaskResult = -1 // the key is a task declared in code: nothing written
)

// SetTask upserts the run-time task t at server time nowMS.
func (r *RDB) SetTask(ctx context.Context, nowMS int64, t TaskDecl) (SetTaskResult, error) {
	n, err := setTaskScript.Run(ctx, r.c, []string{r.k.Task(t.Key), r.k.Queue(), r.k.Tasks()},
		append([]any{t.Key, nowMS, t.NextMS, t.Status, t.Expression, t.TZ, t.Interval, t.Class, t.Type,
			t.Timeout.Milliseconds(), boolArg(t.Concurrent), t.Misfire, t.Params, r.k.Wake()},
			flowArgs(t.MaxRunning, t.Rate, t.Priority)...)...).Int()
	return SetTaskResult(n), err
}

// removeTaskScript deletes a run-time task.
//
// KEYS: task, queue, tasks
// ARGV: key
// Returns 1 when removed, 0 when absent, -1 when declared in code.
var removeTaskScript = redis.NewScript(luaLib + `
want_type(KEYS[1], 'hash')
want_type(KEYS[2], 'zset')
want_type(KEYS[3], 'set')
local src = redis.call('HGET', KEYS[1], 'source')
if not src then return 0 end
if src ~= 'dynamic' then return -1 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('SREM', KEYS[3], ARGV[1])
return 1
`)

// RemoveTask deletes the run-time task key. It returns 1 when removed, 0
// when absent, -1 when the task is declared in code (nothing written).
func (r *RDB) RemoveTask(ctx context.Context, key string) (int, error) {
	return removeTaskScript.Run(ctx, r.c, []string{r.k.Task(key), r.k.Queue(), r.k.Tasks()}, key).Int()
}

// setStatusScript writes the status of an existing task; disabled also
// takes it out of the queue.
//
// KEYS: task, queue
// ARGV: member, status
// Returns 1 when written, 0 when there is no such task.
var setStatusScript = redis.NewScript(luaLib + `
want_type(KEYS[1], 'hash')
want_type(KEYS[2], 'zset')
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[2])
if ARGV[2] == 'disabled' then redis.call('ZREM', KEYS[2], ARGV[1]) end
return 1
`)

// SetStatus writes the status of an existing task (disabled also takes it
// out of the queue) and reports whether the task exists.
func (r *RDB) SetStatus(ctx context.Context, key, status string) (bool, error) {
	n, err := setStatusScript.Run(ctx, r.c, []string{r.k.Task(key), r.k.Queue()}, key, status).Int()
	return n == 1, err
}

// triggerScript makes an active task due now without moving its schedule:
// next_run becomes now, so the claim's compare-and-set fires it at now and
// moves next_run to the instant after now, which is the one it replaced.
//
// KEYS: task, queue, lock
// ARGV: member, wake_channel
// Returns {state, instant_ms}: ok (queued now), due (already due at
// instant), missing, paused, disabled, running, done (no instant left).
var triggerScript = redis.NewScript(luaNow + `
want_type(KEYS[1], 'hash')
want_type(KEYS[2], 'zset')
local h = redis.call('HMGET', KEYS[1], 'status', 'next_run', 'concurrent')
if not h[1] then return {'missing', 0} end
if h[1] ~= 'active' then return {h[1] == 'paused' and 'paused' or 'disabled', 0} end
if h[3] ~= '1' and redis.call('EXISTS', KEYS[3]) == 1 then return {'running', 0} end
local nr = tonumber(h[2]) or 0
if nr == 0 then return {'done', 0} end
if nr <= now and redis.call('ZSCORE', KEYS[2], ARGV[1]) then return {'due', nr} end
redis.call('HSET', KEYS[1], 'next_run', now)
redis.call('ZADD', KEYS[2], now, ARGV[1])
redis.call('PUBLISH', ARGV[2], 'trigger')
return {'ok', now}
`)

// Trigger makes an active task due now without moving its schedule. It
// returns the script's state (ok, due, missing, paused, disabled, running,
// done) and the instant it is due at.
func (r *RDB) Trigger(ctx context.Context, key string) (state string, atMS int64, err error) {
	res, err := triggerScript.Run(ctx, r.c, []string{r.k.Task(key), r.k.Queue(), r.k.Lock(key)}, key, r.k.Wake()).Slice()
	if err != nil {
		return "", 0, err
	}
	if len(res) != 2 {
		return "", 0, errors.New("trigger: unexpected reply")
	}
	state, _ = res[0].(string)
	atMS, _ = res[1].(int64)
	return state, atMS, nil
}

// requeueScript puts an active or paused task that is not queued (it was
// disabled, or its entry was lost) back in the queue at next.
//
// KEYS: task, queue
// ARGV: member, next
var requeueScript = redis.NewScript(luaLib + `
want_type(KEYS[1], 'hash')
want_type(KEYS[2], 'zset')
local st = redis.call('HGET', KEYS[1], 'status')
if st ~= 'active' and st ~= 'paused' then return 0 end
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'next_run', ARGV[2])
if ARGV[2] ~= '0' then redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1]) end
return 1
`)

// Requeue puts an active or paused task that is not queued back at nextMS
// and reports whether it did.
func (r *RDB) Requeue(ctx context.Context, key string, nextMS int64) (bool, error) {
	n, err := requeueScript.Run(ctx, r.c, []string{r.k.Task(key), r.k.Queue()}, key, nextMS).Int()
	return n == 1, err
}

// pruneScript removes a declared (static) task that no live process has
// declared within the grace window.
//
// KEYS: task, queue, tasks, declared
// ARGV: member, grace_ms, not_after_ms (it does nothing when run later)
var pruneScript = redis.NewScript(luaNow + `
want_type(KEYS[1], 'hash')
want_type(KEYS[2], 'zset')
want_type(KEYS[3], 'set')
want_type(KEYS[4], 'zset')
if ARGV[3] and now > tonumber(ARGV[3]) then return 0 end
local seen = tonumber(redis.call('ZSCORE', KEYS[4], ARGV[1]))
if seen and seen >= now - tonumber(ARGV[2]) then return 0 end
if redis.call('HGET', KEYS[1], 'source') ~= 'static' then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('SREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
return 1
`)

// Prune removes a static task no live process declared within grace, and
// reports whether it did; run later than notAfterMS it does nothing.
func (r *RDB) Prune(ctx context.Context, key string, grace time.Duration, notAfterMS int64) (bool, error) {
	n, err := pruneScript.Run(ctx, r.c, []string{r.k.Task(key), r.k.Queue(), r.k.Tasks(), r.k.Declared()},
		key, grace.Milliseconds(), notAfterMS).Int()
	return n == 1, err
}

// MaxSaneScore bounds the queue scores (unix ms) taken at face value: 2^53
// ms is the year 287,396, and the largest integer a float64 score holds
// exactly.
const MaxSaneScore = 1 << 53

// repairScript puts a task's queue entry back at the task's next_run, if
// its score is still absurd (see absurdScore).
//
// KEYS: queue, task
// ARGV: member, max sane score
// Returns the new score, or 0 when nothing changed.
var repairScript = redis.NewScript(luaLib + `
want_type(KEYS[1], 'zset')
local raw = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not raw then return 0 end
local cur = tonumber(raw)
if cur and cur == cur and cur >= 0 and cur <= tonumber(ARGV[2]) then return 0 end
local nr = tonumber(redis.call('HGET', KEYS[2], 'next_run'))
if not nr or nr <= 0 then return 0 end
redis.call('ZADD', KEYS[1], nr, ARGV[1])
return nr
`)

// RepairScore resets an absurd queue score of key to its next_run and
// returns the new score, or 0 when nothing changed.
func (r *RDB) RepairScore(ctx context.Context, key string) (int64, error) {
	return repairScript.Run(ctx, r.c, []string{r.k.Queue(), r.k.Task(key)}, key, MaxSaneScore).Int64()
}

// quarantineScript renames a key aside if it still holds a type other
// than the one expected.
//
// KEYS: key, quarantine key
// ARGV: expected type
// Returns the type found when it moved the key, else "".
var quarantineScript = redis.NewScript(`
local t = redis.call('TYPE', KEYS[1]).ok
if t == ARGV[1] or t == 'none' then return '' end
redis.call('RENAME', KEYS[1], KEYS[2])
return t
`)

// Quarantine moves key aside to its quarantine key at atMS if it still
// holds a type other than want, and returns the type it found ("" when it
// moved nothing).
func (r *RDB) Quarantine(ctx context.Context, key, want string, atMS int64) (string, error) {
	return quarantineScript.Run(ctx, r.c, []string{key, r.k.Quarantine(key, atMS)}, want).Text()
}

// LimitKeyTypes maps the flow-control keys of the given types to the Redis
// type each holds: the running slots (Slots) of job types with a
// max_running cap, the rate windows (Rate) of job types with a rate, and
// the fire slots (FireSlots) of scheduled types with a cap. A process
// checks those of its own types as it checks SingletonTypes: a foreign
// value in a slots key would fail every limited claim. (The windows of
// RateKey keys and the fire slots of run-time tasks with a cap of their
// own are not listed: their names come with the jobs and tasks. The claims
// that read a window or a fire slot key tolerate a foreign value and
// report it, and the caller moves it aside: ClaimJobsFlow, ClaimFires.)
func (k Keys) LimitKeyTypes(cappedJobs, ratedJobs, cappedFires []string) map[string]string {
	out := make(map[string]string, len(cappedJobs)+len(ratedJobs)+len(cappedFires))
	for _, t := range cappedJobs {
		out[k.Slots(t)] = "hash"
	}
	for _, t := range ratedJobs {
		out[k.Rate(t)] = "zset"
	}
	for _, t := range cappedFires {
		out[k.FireSlots(t)] = "zset"
	}
	return out
}

// SingletonTypes maps each key of the namespace that is not per task or per
// run to the Redis type it holds.
func (k Keys) SingletonTypes() map[string]string {
	return map[string]string{
		k.Queue():       "zset",
		k.Master():      "string",
		k.Running():     "set",
		k.Alive():       "zset",
		k.Pulse():       "hash",
		k.Tasks():       "set",
		k.Processes():   "zset",
		k.Declared():    "zset",
		k.Jobs():        "zset",
		k.JobData():     "hash",
		k.Attempts():    "hash",
		k.FirstDue():    "hash",
		k.Failed():      "hash",
		k.Leases():      "zset",
		k.Owners():      "hash",
		k.Dead():        "zset",
		k.DeadData():    "hash",
		k.Stats():       "hash",
		k.StatsMinute(): "hash",
		k.Sweep():       "hash",
		k.Meta():        "hash",
		k.UniqueIndex(): "zset",
	}
}
