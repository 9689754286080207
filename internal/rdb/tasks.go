package rdb

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
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
	Interval   string        // the schedule in words (declared tasks; a run-time task's is computed when read)
	Status     string        // "" keeps the stored one (run-time tasks)
	NextMS     int64         // the first instant, if the task is new or rescheduled
	Timeout    time.Duration // a run-time task's 0: its type's, not stored
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
	// Jitter is written to FieldJitter (ms) when set, and the field
	// deleted when not: the bound of the task's stable offset (see
	// schedule.JitterOffset); NextMS already has the offset.
	Jitter time.Duration
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
// zone changes reschedule it; the status, an operator's, is kept; the
// interval (the schedule in words, schedule.Describe) is written every
// time, so a release that words it better rewords every task it declares.
//
// KEYS: task, queue, tasks, meta, declared, unqueued
// ARGV: member, now, next, status, expression, tz, interval, class, type,
// timeout_ms, concurrent, misfire, retries, source, max_running, rate_n,
// rate_per_ms, priority (the last four "0" when not set: see flowLua),
// jitter_ms ("0" when none: the field is deleted; a changed jitter
// reschedules the task as a changed expression does)
// Returns {changed (1: created or rescheduled, else 0), meta's created_at}.
var registerScript = redis.NewScript(luaLib + flowLua + `
want_type(KEYS[1], 'hash')
want_type(KEYS[2], 'zset')
want_type(KEYS[3], 'set')
want_type(KEYS[4], 'hash')
want_type(KEYS[5], 'zset')
want_type(KEYS[6], 'set')
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
    'concurrent', ARGV[11], 'misfire', ARGV[12], 'retries', ARGV[13], 'source', ARGV[14], 'interval', ARGV[7])
  -- a run-time task's hash stores no status when active: a declared task's always does
  redis.call('HSETNX', KEYS[1], 'status', 'active')
  local cur = redis.call('HMGET', KEYS[1], 'expression', 'tz', 'next_run', 'jitter')
  if cur[1] ~= ARGV[5] or cur[2] ~= ARGV[6] or not tonumber(cur[3]) or (cur[4] or '0') ~= ARGV[19] then
    redis.call('HSET', KEYS[1], 'expression', ARGV[5], 'tz', ARGV[6], 'next_run', ARGV[3])
    changed = 1
  end
end
set_flow(KEYS[1], 15)
if ARGV[19] == '0' then redis.call('HDEL', KEYS[1], 'jitter') else redis.call('HSET', KEYS[1], 'jitter', ARGV[19]) end
local st = redis.call('HGET', KEYS[1], 'status')
local nr = tonumber(redis.call('HGET', KEYS[1], 'next_run'))
if st == 'disabled' or nr == 0 then
  redis.call('ZREM', KEYS[2], member)
  redis.call('SADD', KEYS[6], member) -- indexed there while not queued
elseif changed == 1 or not redis.call('ZSCORE', KEYS[2], member) then
  redis.call('ZADD', KEYS[2], nr, member)
  redis.call('SREM', KEYS[6], member)
end
return {changed, redis.call('HGET', KEYS[4], 'created_at')}
`)

// Register writes the declared tasks, one script call each in one
// pipeline, and reports which were created or rescheduled, and epoch, the
// namespace's meta created_at as the first call found it (or wrote it):
// a process that compares it with later reads (DataEpoch) sees a loss of
// Redis's data from its first call on, even one during the pipeline.
// Failure: each call is one task's; it checks the types of its five keys
// before its first write, so a foreign value fails that task's call having
// written nothing (quarantine moves a foreign singleton aside).
func (r *RDB) Register(ctx context.Context, nowMS int64, tasks []TaskDecl) (changed []bool, epoch string, err error) {
	cmds, err := pipelined(ctx, r.c, []*redis.Script{registerScript}, func(pipe redis.Pipeliner) []*redis.Cmd {
		cmds := make([]*redis.Cmd, len(tasks))
		for i, t := range tasks {
			cmds[i] = registerScript.EvalSha(ctx, pipe,
				[]string{r.k.Task(t.Key), r.k.Queue(), r.k.Tasks(), r.k.Meta(), r.k.Declared(), r.k.Unqueued()},
				append([]any{t.Key, nowMS, t.NextMS, t.Status, t.Expression, t.TZ, t.Interval, t.Class, t.Type,
					t.Timeout.Milliseconds(), boolArg(t.Concurrent), t.Misfire, t.Retries, SourceStatic},
					append(flowArgs(t.MaxRunning, t.Rate, t.Priority), t.Jitter.Milliseconds())...)...)
		}
		return cmds
	})
	if err != nil {
		return nil, "", err
	}
	changed = make([]bool, len(cmds))
	for i, cmd := range cmds {
		res, _ := cmd.Slice()
		if len(res) != 2 {
			continue
		}
		n, _ := res[0].(int64)
		changed[i] = n == 1
		if i == 0 {
			epoch, _ = res[1].(string)
		}
	}
	return changed, epoch, nil
}

// luaTaskWrite is the prelude that writes one run-time task's hash: the
// one place that knows the layout a run-time task writes (SetTasks, and
// SetTask through it). A run-time task's hash holds only what is its own
// (RunTimeTaskFields): type, expression, next_run and created_at always;
// status, tz, timeout, concurrent, misfire, params and the flow and
// jitter fields only when they differ from the default (active, UTC, the
// type's timeout, not concurrent, once, none), deleted when set back to
// it. The counters (runs, failures, skips) and last_run appear with the
// first fire. The task's name is its key, its class is its type's
// (classes hash), and its interval is computed from the expression when
// it is read (Inspector), so none of the three is stored per task; nor is
// its source: a hash without source is a run-time task (a declared task's
// always has source static: Register writes it, as every release has). An
// update deletes name, class, interval, source dynamic and status active
// from a hash written before this layout, which stays valid as it is.
// It defines
//
// task_read, the fields to HMGET from the hash before any write, in the
// order write_task expects them (source, expression, tz, next_run,
// status, jitter);
//
// task_stride, how many ARGV each task takes: key, next, status,
// expression, tz, type, timeout_ms, concurrent, misfire, params,
// max_running, rate_n, rate_per_ms, priority, jitter_ms (tz "UTC",
// timeout "0", concurrent "0", misfire "once", params "" and the last
// five "0" are defaults: the field is not stored);
//
// write_task(hkey, cur, queued, a, i, now), which writes the task whose
// ARGV are a[i+1..i+task_stride] to hkey, given cur (its task_read
// values) and queued (its queue score, or false), at server time now (a
// string of ms). A hash with neither expression nor next_run is no task:
// the task is created. It returns the result (2 created, 1 rescheduled: a
// changed expression, zone or jitter, 0 updated in place, -1 refused: the
// key is a task declared in code, nothing written) and what the queue must
// do (-1 ZREM, and into the unqueued set: disabled or no instant left; a
// score > 0: ZADD at it; 0: nothing), and its status after the write. It
// never touches the queue or the unqueued set itself, so a caller of many
// tasks writes those once.
const luaTaskWrite = `
local task_read = {'source', 'expression', 'tz', 'next_run', 'status', 'jitter'}
local task_stride = 15
local task_opt = {'timeout', 'concurrent', 'misfire', 'params', 'max_running', 'rate_n', 'rate_per_ms', 'priority', 'jitter'}
local task_def = {'0', '0', 'once', '', '0', '0', '0', '0', '0'}
local task_legacy = {'class', 'name', 'interval', 'source'}
local function write_task(hkey, cur, queued, a, i, now)
  local src = cur[1]
  if src and src ~= 'dynamic' then return -1, 0, nil end
  local status, expr, tz = a[i + 3], a[i + 4], a[i + 5]
  local res, st, nr, f, n = 0, cur[5] or 'active', tonumber(cur[4]) or 0, nil, 0
  local del = {}
  if not (cur[2] or cur[4]) then
    -- a new task (no expression, no next_run: no task hash): its fields
    -- in one table constructor; status only when not active, no source
    st = status ~= '' and status or 'active'
    f = {'type', a[i + 6], 'expression', expr, 'next_run', a[i + 2], 'created_at', now}
    n, res, nr = 8, 2, tonumber(a[i + 2])
    if st ~= 'active' then f[9], f[10], n = 'status', st, 10 end
    if tz ~= 'UTC' then f[n + 1], f[n + 2], n = 'tz', tz, n + 2 end
  else
    f = {'type', a[i + 6]}
    n = 2
    if status ~= '' then st = status end
    if st ~= 'active' then
      if cur[5] ~= st then f[n + 1], f[n + 2], n = 'status', st, n + 2 end
    end
    if cur[2] ~= expr or (cur[3] or 'UTC') ~= tz or (cur[6] or '0') ~= a[i + 15] then
      f[n + 1], f[n + 2], f[n + 3], f[n + 4], n = 'expression', expr, 'next_run', a[i + 2], n + 4
      if tz ~= 'UTC' then f[n + 1], f[n + 2], n = 'tz', tz, n + 2 else del[#del + 1] = 'tz' end
      res, nr = 1, tonumber(a[i + 2])
    elseif not queued and nr < tonumber(now) then
      -- enabled again: continue from the next future instant
      f[n + 1], f[n + 2], n = 'next_run', a[i + 2], n + 2
      nr = tonumber(a[i + 2])
    end
    for j = 1, #task_legacy do del[#del + 1] = task_legacy[j] end
  end
  -- active is the default status: not stored (deleted from a hash that
  -- has it, as an older release wrote every task)
  if st == 'active' and cur[5] then del[#del + 1] = 'status' end
  for j = 1, #task_opt do
    local v = a[i + 6 + j]
    if v ~= task_def[j] then
      f[n + 1], f[n + 2], n = task_opt[j], v, n + 2
    elseif res ~= 2 then
      del[#del + 1] = task_opt[j]
    end
  end
  redis.call('HSET', hkey, unpack(f, 1, n))
  if #del > 0 then redis.call('HDEL', hkey, unpack(del)) end
  if st == 'disabled' or nr == 0 then return res, -1, st end
  if res > 0 or not queued then return res, nr, st end
  return res, 0, st
end
`

// taskArgs is the number of ARGV of one task in setTasksScript
// (task_stride in luaTaskWrite).
const taskArgs = 15

// MaxTaskBatch bounds the tasks of one call of setTasksScript or
// removeTasksScript; DefaultTaskBatch is the size SetTasks and
// RemoveTasks use when given 0.
const (
	MaxTaskBatch     = 1000
	DefaultTaskBatch = 500
)

// taskBatchesPerPipeline is how many batch calls SetTasks and RemoveTasks
// send in one pipeline (one round trip).
const taskBatchesPerPipeline = 16

// setTasksScript upserts a batch of run-time tasks (write_task of
// luaTaskWrite for each). A run-time task is indexed by the queue alone
// while it has an instant, by the unqueued set when it is disabled or has
// none: it has no tasks-set entry (Keys.Unqueued).
//
// KEYS: queue, then task:<key> of each task, then unqueued (a task written
// disabled or with no instant is added to it, one queued taken out), then
// classes (each type of the batch -> its class)
// ARGV: now, wake_channel, n, then task_stride values per task, then a
// type and its class for each type of the batch
// Bounds: n <= MaxTaskBatch; the keys of the batch are distinct (the
// caller keeps the last of a key).
// Returns one result per task (see write_task). Failure: it checks the
// types of the queue, unqueued and classes and reads every task hash (a
// foreign value fails the HMGET) before its first write, so a batch with
// a foreign key fails whole, having written nothing. It publishes on the
// wake channel once when it queued any task.
var setTasksScript = redis.NewScript(luaLib + luaTaskWrite + `
want_type(KEYS[1], 'zset')
want_type(KEYS[#KEYS - 1], 'set')
want_type(KEYS[#KEYS], 'hash')
local n = tonumber(ARGV[3])
local cur, members = {}, {}
for j = 1, n do
  local r = redis.pcall('HMGET', KEYS[1 + j], unpack(task_read))
  if r.err then error({err = 'WRONGTYPE ' .. KEYS[1 + j] .. ': ' .. r.err}) end
  cur[j] = r
  members[j] = ARGV[3 + (j - 1) * task_stride + 1]
end
local queued = callk('ZMSCORE', KEYS[1], members)
local res, add, rem, on, written = {}, {}, {}, {}, false
for j = 1, n do
  local r, q = write_task(KEYS[1 + j], cur[j], queued[j], ARGV, 3 + (j - 1) * task_stride, ARGV[1])
  res[j] = r
  if r >= 0 then written = true end
  if q == -1 then
    rem[#rem + 1] = members[j]
  elseif q > 0 then
    add[#add + 1] = q; add[#add + 1] = members[j]
    on[#on + 1] = members[j]
  end
end
if written then
  local classes = {}
  for j = 4 + n * task_stride, #ARGV do classes[#classes + 1] = ARGV[j] end
  if #classes > 0 then callk('HSET', KEYS[#KEYS], classes) end
end
if #rem > 0 then
  callk('ZREM', KEYS[1], rem)
  callk('SADD', KEYS[#KEYS - 1], rem)
end
if #on > 0 then callk('SREM', KEYS[#KEYS - 1], on) end
if #add > 0 then
  callk('ZADD', KEYS[1], add)
  redis.call('PUBLISH', ARGV[2], 'task')
end
return res
`)

// SetTaskResult is what SetTask did to one task.
type SetTaskResult int

// The results of SetTask and SetTasks.
const (
	TaskCreated     SetTaskResult = 2  // created and queued
	TaskScheduled   SetTaskResult = 1  // rescheduled: its expression, zone or jitter changed
	TaskUpdated     SetTaskResult = 0  // updated in place, schedule kept
	TaskDeclaredErr SetTaskResult = -1 // the key is a task declared in code: nothing written
)

// SetTaskOutcome is one task's outcome in SetTasks: its result, or Err,
// the error of its batch's call (then nothing of the batch was written,
// or, for a Redis unreachable, maybe all of it: a retry is idempotent).
type SetTaskOutcome struct {
	Result SetTaskResult
	Err    error
}

// runTimeTZ is a run-time task's zone as write_task takes it: "UTC" for
// "" (the default, which is not stored).
func runTimeTZ(tz string) string {
	if tz == "" {
		return "UTC"
	}
	return tz
}

// runTimeMisfire is a run-time task's misfire policy as write_task takes
// it: "once" for "" (the default, which is not stored).
func runTimeMisfire(m string) string {
	if m == "" {
		return string(registry.MisfireOnce)
	}
	return m
}

// SetTask upserts the run-time task t at server time nowMS: SetTasks of
// one task.
func (r *RDB) SetTask(ctx context.Context, nowMS int64, t TaskDecl) (SetTaskResult, error) {
	out, err := r.SetTasks(ctx, nowMS, []TaskDecl{t}, 1)
	if err != nil {
		return 0, err
	}
	return out[0].Result, nil
}

// SetTasks upserts run-time tasks at server time nowMS, batch of them per
// script call (0 means DefaultTaskBatch; at most MaxTaskBatch), several
// calls per pipeline. The keys of tasks must be distinct. It returns one
// outcome per task, in order; the error is the first call's error, if any
// (its tasks' outcomes carry it too).
func (r *RDB) SetTasks(ctx context.Context, nowMS int64, tasks []TaskDecl, batch int) ([]SetTaskOutcome, error) {
	out := make([]SetTaskOutcome, len(tasks))
	wake := r.k.Wake()
	err := r.taskBatches(ctx, setTasksScript, len(tasks), batch, "tasks", func(i int) string { return tasks[i].Key },
		func(lo, hi int) scriptCall {
			part := tasks[lo:hi]
			keys := make([]string, 1, 3+len(part))
			keys[0] = r.k.Queue()
			args := make([]any, 3, 3+taskArgs*len(part))
			args[0], args[1], args[2] = nowMS, wake, len(part)
			classes := map[string]string{}
			for _, t := range part {
				keys = append(keys, r.k.Task(t.Key))
				args = append(args, t.Key, t.NextMS, t.Status, t.Expression, runTimeTZ(t.TZ), t.Type,
					t.Timeout.Milliseconds(), boolArg(t.Concurrent), runTimeMisfire(t.Misfire), t.Params,
					t.MaxRunning, t.Rate.N, t.Rate.Per.Milliseconds(), t.Priority, t.Jitter.Milliseconds())
				if t.Class != "" {
					classes[t.Type] = t.Class
				}
			}
			for _, typ := range slices.Sorted(maps.Keys(classes)) {
				args = append(args, typ, classes[typ])
			}
			return scriptCall{append(keys, r.k.Unqueued(), r.k.Classes()), args}
		},
		func(i int, res int64, err error) { out[i] = SetTaskOutcome{Result: SetTaskResult(res), Err: err} })
	return out, err
}

// taskBatches runs script over n items (tasks or keys), batch of them per
// call (0 means DefaultTaskBatch; at most MaxTaskBatch) and
// taskBatchesPerPipeline calls per pipeline (evalEach). call builds the
// call of items [lo, hi); each item's integer result, or its call's error
// (naming the batch by the items' names), goes to set. It returns the
// first call's error.
func (r *RDB) taskBatches(ctx context.Context, script *redis.Script, n, batch int, what string, name func(int) string,
	call func(lo, hi int) scriptCall, set func(i int, res int64, err error)) error {
	batch = taskBatch(batch)
	var first error
	for lo := 0; lo < n; lo += batch * taskBatchesPerPipeline {
		hi := min(lo+batch*taskBatchesPerPipeline, n)
		var calls []scriptCall
		for b := lo; b < hi; b += batch {
			calls = append(calls, call(b, min(b+batch, hi)))
		}
		for i, cmd := range evalEach(ctx, r.c, script, calls) {
			b := lo + i*batch
			e := min(b+batch, hi)
			res, err := cmd.Int64Slice()
			if err == nil && len(res) != e-b {
				err = fmt.Errorf("%d results for %d %s", len(res), e-b, what)
			}
			if err != nil {
				err = fmt.Errorf("batch of %s %d to %d (%q to %q): %w", what, b, e-1, name(b), name(e-1), err)
				if first == nil {
					first = err
				}
				for j := b; j < e; j++ {
					set(j, 0, err)
				}
				continue
			}
			for j, v := range res {
				set(b+j, v, nil)
			}
		}
	}
	return first
}

// scriptCall is the KEYS and ARGV of one call of a script.
type scriptCall struct {
	keys []string
	args []any
}

// evalEach runs script once per call in one pipeline (pipelined: after
// NOSCRIPT only the calls that found the script missing are sent again,
// so a call runs at most once). Each command carries its own reply or
// error.
func evalEach(ctx context.Context, c redis.UniversalClient, script *redis.Script, calls []scriptCall) []*redis.Cmd {
	cmds, _ := pipelined(ctx, c, []*redis.Script{script}, func(pipe redis.Pipeliner) []*redis.Cmd {
		cmds := make([]*redis.Cmd, len(calls))
		for i, call := range calls {
			cmds[i] = script.EvalSha(ctx, pipe, call.keys, call.args...)
		}
		return cmds
	})
	return cmds
}

// taskBatch is the batch size n asks for: DefaultTaskBatch for 0, at most
// MaxTaskBatch.
func taskBatch(n int) int {
	switch {
	case n <= 0:
		return DefaultTaskBatch
	case n > MaxTaskBatch:
		return MaxTaskBatch
	}
	return n
}

// removeTasksScript deletes a batch of run-time tasks.
//
// KEYS: queue, tasks, then task:<key> of each key, then unqueued
// ARGV: the keys
// Bounds: at most MaxTaskBatch keys.
// Returns one result per key: 1 removed, 0 absent, -1 declared in code
// (left alone); a hash without source is a run-time task's. Failure: it
// checks the queue and the tasks set and reads every task hash's source
// (a foreign value fails the HMGET) before its
// first write, so a batch with a foreign key fails whole, having written
// nothing.
var removeTasksScript = redis.NewScript(luaLib + `
want_type(KEYS[1], 'zset')
want_type(KEYS[2], 'set')
want_type(KEYS[#KEYS], 'set')
local res, del, members = {}, {}, {}
for j = 1, #ARGV do
  local h = redis.pcall('HMGET', KEYS[2 + j], 'source', 'expression', 'next_run')
  if h.err then error({err = 'WRONGTYPE ' .. KEYS[2 + j] .. ': ' .. h.err}) end
  local src = h[1] or ((h[2] or h[3]) and 'dynamic') -- no source: a run-time task
  if not src then
    res[j] = 0
  elseif src ~= 'dynamic' then
    res[j] = -1
  else
    res[j] = 1
    del[#del + 1] = KEYS[2 + j]
    members[#members + 1] = ARGV[j]
  end
end
if #del > 0 then
  calln('DEL', del)
  callk('ZREM', KEYS[1], members)
  callk('SREM', KEYS[2], members)
  callk('SREM', KEYS[#KEYS], members)
end
return res
`)

// RemoveTask deletes the run-time task key. It returns 1 when removed, 0
// when absent, -1 when the task is declared in code (nothing written).
func (r *RDB) RemoveTask(ctx context.Context, key string) (int, error) {
	out, err := r.RemoveTasks(ctx, []string{key}, 1)
	if err != nil {
		return 0, err
	}
	return out[0].Result, nil
}

// RemoveOutcome is one key's outcome in RemoveTasks: Result 1 removed, 0
// absent, -1 declared in code (left alone); or Err, its batch's error.
type RemoveOutcome struct {
	Result int
	Err    error
}

// RemoveTasks deletes run-time tasks, batch keys per script call (0 means
// DefaultTaskBatch; at most MaxTaskBatch), several calls per pipeline. It
// returns one outcome per key, in order; the error is the first call's
// error, if any (its keys' outcomes carry it too).
func (r *RDB) RemoveTasks(ctx context.Context, keys []string, batch int) ([]RemoveOutcome, error) {
	out := make([]RemoveOutcome, len(keys))
	err := r.taskBatches(ctx, removeTasksScript, len(keys), batch, "keys", func(i int) string { return keys[i] },
		func(lo, hi int) scriptCall {
			part := keys[lo:hi]
			ks := make([]string, 2, 3+len(part))
			ks[0], ks[1] = r.k.Queue(), r.k.Tasks()
			args := make([]any, len(part))
			for i, k := range part {
				ks = append(ks, r.k.Task(k))
				args[i] = k
			}
			return scriptCall{append(ks, r.k.Unqueued()), args}
		},
		func(i int, res int64, err error) { out[i] = RemoveOutcome{Result: int(res), Err: err} })
	return out, err
}

// setStatusScript writes the status of an existing task; disabled also
// takes it out of the queue. Active, the default, is not stored in a
// run-time task's hash (no source static): the field is deleted.
//
// KEYS: task, queue, unqueued
// ARGV: member, status
// Returns 1 when written, 0 when there is no such task.
var setStatusScript = redis.NewScript(luaLib + `
want_type(KEYS[1], 'hash')
want_type(KEYS[2], 'zset')
want_type(KEYS[3], 'set')
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[2] == 'active' and redis.call('HGET', KEYS[1], 'source') ~= 'static' then
  redis.call('HDEL', KEYS[1], 'status')
else
  redis.call('HSET', KEYS[1], 'status', ARGV[2])
end
if ARGV[2] == 'disabled' then
  redis.call('ZREM', KEYS[2], ARGV[1])
  redis.call('SADD', KEYS[3], ARGV[1])
end
return 1
`)

// SetStatus writes the status of an existing task (disabled also takes it
// out of the queue) and reports whether the task exists.
func (r *RDB) SetStatus(ctx context.Context, key, status string) (bool, error) {
	n, err := setStatusScript.Run(ctx, r.c, []string{r.k.Task(key), r.k.Queue(), r.k.Unqueued()}, key, status).Int()
	return n == 1, err
}

// triggerScript makes an active task due now without moving its schedule:
// next_run becomes now, so the claim's compare-and-set fires it at now and
// moves next_run to the instant after now, which is the one it replaced.
//
// KEYS: task, queue, lock
// ARGV: member, wake_channel
// Returns {state, instant_ms}: ok (queued now), due (already due at
// instant), missing (neither status nor next_run), paused, disabled,
// running, done (no instant left). No status is active.
var triggerScript = redis.NewScript(luaNow + `
want_type(KEYS[1], 'hash')
want_type(KEYS[2], 'zset')
local h = redis.call('HMGET', KEYS[1], 'status', 'next_run', 'concurrent')
if not h[1] and not h[2] then return {'missing', 0} end
if h[1] and h[1] ~= 'active' then return {h[1] == 'paused' and 'paused' or 'disabled', 0} end -- absent: active
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
// It takes the task out of the unqueued set when it queues it, when it
// finds it queued already, and when there is no task hash. A task hash
// with an expression and no status is active.
//
// KEYS: task, queue, unqueued
// ARGV: member, next
var requeueScript = redis.NewScript(luaLib + `
want_type(KEYS[1], 'hash')
want_type(KEYS[2], 'zset')
want_type(KEYS[3], 'set')
local h = redis.call('HMGET', KEYS[1], 'status', 'expression')
local st = h[1] or (h[2] and 'active') -- a task without status is active
if st ~= 'active' and st ~= 'paused' then
  if not st and redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SREM', KEYS[3], ARGV[1]) end
  return 0
end
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  redis.call('SREM', KEYS[3], ARGV[1])
  return 0
end
if ARGV[2] == '0' then return 0 end -- no instant left: it stays unqueued
redis.call('HSET', KEYS[1], 'next_run', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('SREM', KEYS[3], ARGV[1])
return 1
`)

// Requeue puts an active or paused task that is not queued back at nextMS
// and reports whether it did.
func (r *RDB) Requeue(ctx context.Context, key string, nextMS int64) (bool, error) {
	n, err := requeueScript.Run(ctx, r.c, []string{r.k.Task(key), r.k.Queue(), r.k.Unqueued()}, key, nextMS).Int()
	return n == 1, err
}

// pruneScript removes a declared (static) task that no live process has
// declared within the grace window.
//
// KEYS: task, queue, tasks, declared, unqueued
// ARGV: member, grace_ms, not_after_ms (it does nothing when run later)
var pruneScript = redis.NewScript(luaNow + `
want_type(KEYS[1], 'hash')
want_type(KEYS[2], 'zset')
want_type(KEYS[3], 'set')
want_type(KEYS[4], 'zset')
want_type(KEYS[5], 'set')
if ARGV[3] and now > tonumber(ARGV[3]) then return 0 end
local seen = tonumber(redis.call('ZSCORE', KEYS[4], ARGV[1]))
if seen and seen >= now - tonumber(ARGV[2]) then return 0 end
if redis.call('HGET', KEYS[1], 'source') ~= 'static' then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('SREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('SREM', KEYS[5], ARGV[1])
return 1
`)

// Prune removes a static task no live process declared within grace, and
// reports whether it did; run later than notAfterMS it does nothing.
func (r *RDB) Prune(ctx context.Context, key string, grace time.Duration, notAfterMS int64) (bool, error) {
	n, err := pruneScript.Run(ctx, r.c, []string{r.k.Task(key), r.k.Queue(), r.k.Tasks(), r.k.Declared(), r.k.Unqueued()},
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
		k.Runs():        "hash",
		k.Running():     "set",
		k.Alive():       "zset",
		k.Pulse():       "hash",
		k.Tasks():       "set",
		k.Unqueued():    "set",
		k.Classes():     "hash",
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
