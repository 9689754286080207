package rdb

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// A unique identity (UniqueKey) is held by the job its key names from the
// enqueue until max(expiry, the job's end): past the expiry only while the
// job is running (an owner field) or pending (in the queue) but not for
// the retry of a failed attempt (no jobs:failed field). So a job that a
// redelivery put back (its process died: the attempt did not fail) keeps
// its identity until it ends, as a running one does; a job that failed
// (waiting for its retry, or dead), ended or was cancelled holds it no
// longer than the expiry. luaUniqueHeld is that test, for scripts that
// have `now` and the keys jobs (kq), jobs:owner (ko) and jobs:failed (kf).
const luaUniqueHeld = `
local function unique_holder(key)
  local v = redis.call('GET', key)
  if not v then return nil end
  local id, exp = string.match(v, '^(.*)|(%d+)$')
  if not id then return nil end
  return id, tonumber(exp)
end
local function unique_held(kq, ko, kf, id, exp)
  return now < exp or redis.call('HEXISTS', ko, id) == 1 or
    (redis.call('ZSCORE', kq, id) ~= false and redis.call('HEXISTS', kf, id) == 0)
end
`

// UniqueJob is the unique part of a NewJob: the job's identity ("" for a
// job without one), how long it holds it at least (TTL), and, for a
// debounced job (Debounce >= 0), the delay from now that a replacement of
// the pending holder, or a new job, is due after.
type UniqueJob struct {
	Identity string
	TTL      time.Duration
	Debounce time.Duration // -1: not debounced
}

// The outcomes of EnqueueUnique, per job.
const (
	UniqueNew       = 0 // enqueued as a new job (ID)
	UniqueDupID     = 1 // its WithID id exists (nothing written for it)
	UniqueDuplicate = 2 // its identity is held by the job ID (nothing written for it)
	UniqueDebounced = 3 // the pending job ID that held its identity now has its envelope and due
)

// UniqueResult is what EnqueueUnique did with one job: an outcome
// (UniqueNew...), the job id it concerns (the new job's, or the holder's)
// and the job's due time (unix ms; 0 for a duplicate).
type UniqueResult struct {
	Outcome int
	ID      string
	DueMS   int64
}

// enqueueUniqueScript is enqueueScript for a batch in which some jobs have
// a unique identity, with the same check-and-set for each, atomically.
// A job with an identity that is held (luaUniqueHeld) is a duplicate of
// its holder, unless it is debounced and the holder is pending: then the
// holder takes the job's envelope and is due at now + debounce (its
// attempts and kept first due reset: it is the new job now). A debounced
// job whose holder is running is enqueued as a new job, which takes the
// identity. A new job with an identity sets its key to "id|now+ttl" and
// its index entry to that expiry; a debounced holder's expiry becomes the
// later of its own and now + ttl (and its jobs:failed field goes with its
// attempts). Two jobs of one batch with one identity:
// the second is the first's duplicate (or, debounced, replaces it).
//
// KEYS: jobs, jobs:data, jobs:owner, jobs:attempt, jobs:first, dead,
// unique, jobs:failed, then per job its unique:<identity> key (unique
// again for a job without an identity)
// ARGV: wake_channel, n, then n groups of id, envelope, at_ms (0: use
// delay), delay_ms, check (1: fail when the id exists), identity ("" for
// none), ttl_ms, debounce_ms (-1: not debounced); then each job's level
// ("" for none: see enqueueScript), then the prefix
// Bounds: EnqueueBatch jobs a call.
// Failure: every key it writes is type-checked before the first write.
// Returns {outcome, id, due} per job (UniqueResult).
var enqueueUniqueScript = redis.NewScript(luaNow + luaUniqueHeld + `
local n = tonumber(ARGV[2])
local prefix = ARGV[3 + 9 * n]
want_type(KEYS[1], 'zset')
want_type(KEYS[2], 'hash')
want_type(KEYS[4], 'hash')
want_type(KEYS[5], 'hash')
want_type(KEYS[7], 'zset')
want_type(KEYS[8], 'hash')
local idx = {}
for i = 1, n do
  local lv = ARGV[2 + 8 * n + i]
  if lv ~= '' and not idx[lv] then
    idx[lv] = {}
    want_type(prefix .. 'jobs:prio:' .. lv, 'zset')
  end
end
for i = 1, n do
  if ARGV[2 + 8 * (i - 1) + 6] ~= '' then want_type(KEYS[8 + i], 'string') end
end
local out, seen, fresh, repl, target, marks = {}, {}, {}, {}, {}, {}
local first
for i = 1, n do
  local o = 2 + 8 * (i - 1)
  local id, env, ident = ARGV[o + 1], ARGV[o + 2], ARGV[o + 6]
  local ttl, deb = tonumber(ARGV[o + 7]), tonumber(ARGV[o + 8])
  local due = tonumber(ARGV[o + 3])
  if due == 0 then due = now + tonumber(ARGV[o + 4]) end
  if deb >= 0 then due = now + deb end
  local code, rid, lv = 0, id, ARGV[2 + 8 * n + i]
  if seen[id] or (ARGV[o + 5] == '1' and (redis.call('HEXISTS', KEYS[2], id) == 1 or
      redis.call('HEXISTS', KEYS[3], id) == 1 or redis.call('ZSCORE', KEYS[6], id))) then
    code = 1
  elseif ident ~= '' then
    local t = target[ident]
    if not t then
      local hid, hexp = unique_holder(KEYS[8 + i])
      if hid and deb >= 0 and redis.call('ZSCORE', KEYS[1], hid) then
        t = {old = hid, exp = hexp}
      elseif hid and unique_held(KEYS[1], KEYS[3], KEYS[8], hid, hexp) and deb < 0 then
        t = {dup = hid}
      end
      if t then target[ident] = t end
    end
    if t and t.dup then
      code, rid = 2, t.dup
    elseif t and t.old then
      code, rid = 3, t.old
      repl[t.old] = {env, due, lv}
      local exp = math.max(t.exp, now + ttl)
      t.exp = exp
      marks[ident] = {KEYS[8 + i], t.old, exp}
    elseif t and t.new then
      if deb >= 0 then
        code, rid = 3, t.new.id
        t.new.env, t.new.due, t.new.lv = env, due, lv
      else
        code, rid = 2, t.new.id
      end
    else
      local j = {id = id, env = env, due = due, lv = lv}
      fresh[#fresh + 1] = j
      target[ident] = {new = j}
      marks[ident] = {KEYS[8 + i], id, now + ttl}
    end
  else
    fresh[#fresh + 1] = {id = id, env = env, due = due, lv = lv}
  end
  if code == 0 then seen[id] = true end
  out[#out + 1] = code
  out[#out + 1] = rid
  out[#out + 1] = 0
end
-- Due times, now that debounces in the batch have settled.
local data, queue, dues = {}, {}, {}
for _, j in ipairs(fresh) do
  data[#data + 1] = j.id
  data[#data + 1] = j.env
  queue[#queue + 1] = j.due
  queue[#queue + 1] = j.id
  dues[j.id] = j.due
  if idx[j.lv] then
    idx[j.lv][#idx[j.lv] + 1] = j.due
    idx[j.lv][#idx[j.lv] + 1] = j.id
  end
end
local reset = {}
for id, r in pairs(repl) do
  data[#data + 1] = id
  data[#data + 1] = r[1]
  queue[#queue + 1] = r[2]
  queue[#queue + 1] = id
  dues[id] = r[2]
  reset[#reset + 1] = id
  if idx[r[3]] then
    idx[r[3]][#idx[r[3]] + 1] = r[2]
    idx[r[3]][#idx[r[3]] + 1] = id
  end
end
for i = 1, n do
  local k = 3 * (i - 1)
  if out[k + 1] ~= 1 and out[k + 1] ~= 2 then out[k + 3] = dues[out[k + 2]] end
end
for i = 2, #queue, 2 do
  if not first or queue[i - 1] < first then first = queue[i - 1] end
end
local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if #data > 0 then
  callk('HSET', KEYS[2], data)
  callk('ZADD', KEYS[1], queue)
end
for lv, members in pairs(idx) do
  if #members > 0 then callk('ZADD', prefix .. 'jobs:prio:' .. lv, members) end
end
if #reset > 0 then
  callk('HDEL', KEYS[4], reset)
  callk('HDEL', KEYS[5], reset)
  callk('HDEL', KEYS[8], reset)
end
for ident, m in pairs(marks) do
  redis.call('SET', m[1], m[2] .. '|' .. m[3])
  redis.call('ZADD', KEYS[7], m[3], ident)
end
if first and (not head[2] or first < tonumber(head[2])) then
  redis.call('PUBLISH', ARGV[1], 'job')
end
return out
`)

// EnqueueUnique is Enqueue for a batch in which some jobs have a unique
// identity (NewJob.Unique; see enqueueUniqueScript), EnqueueBatch per
// script call, in one pipeline. A batch without identities should use
// Enqueue, which does less.
// Bounds: any number of jobs; one identity's jobs in different calls of
// the pipeline are checked against each other as against any other job.
// Failure: a key of the wrong type fails a call before it writes; a
// failed call writes none of its jobs (the others' calls stand).
func (r *RDB) EnqueueUnique(ctx context.Context, jobs []NewJob) ([]UniqueResult, error) {
	cmds, err := pipelined(ctx, r.c, []*redis.Script{enqueueUniqueScript}, func(pipe redis.Pipeliner) []*redis.Cmd {
		var cmds []*redis.Cmd
		for lo := 0; lo < len(jobs); lo += EnqueueBatch {
			hi := min(lo+EnqueueBatch, len(jobs))
			keys := make([]string, 0, 8+hi-lo)
			keys = append(keys, r.k.Jobs(), r.k.JobData(), r.k.Owners(), r.k.Attempts(), r.k.FirstDue(), r.k.Dead(), r.k.UniqueIndex(), r.k.Failed())
			args := make([]any, 0, 3+9*(hi-lo))
			args = append(args, r.k.Wake(), hi-lo)
			for _, j := range jobs[lo:hi] {
				deb := int64(-1)
				if j.Unique.Identity != "" && j.Unique.Debounce >= 0 {
					deb = j.Unique.Debounce.Milliseconds()
				}
				if j.Unique.Identity == "" {
					keys = append(keys, r.k.UniqueIndex())
				} else {
					keys = append(keys, r.k.UniqueKey(j.Unique.Identity))
				}
				args = append(args, j.ID, j.Envelope, j.AtMS, j.Delay.Milliseconds(), boolArg(j.Check),
					j.Unique.Identity, j.Unique.TTL.Milliseconds(), deb)
			}
			for _, j := range jobs[lo:hi] {
				args = append(args, j.levelArg())
			}
			args = append(args, r.k.Prefix())
			cmds = append(cmds, enqueueUniqueScript.EvalSha(ctx, pipe, keys, args...))
		}
		return cmds
	})
	if err != nil {
		return nil, err
	}
	out := make([]UniqueResult, 0, len(jobs))
	for _, cmd := range cmds {
		res, err := cmd.Slice()
		if err != nil {
			return nil, err
		}
		for i := 0; i+2 < len(res); i += 3 {
			code, _ := res[i].(int64)
			id, _ := res[i+1].(string)
			due, _ := res[i+2].(int64)
			out = append(out, UniqueResult{Outcome: int(code), ID: id, DueMS: due})
		}
	}
	if len(out) != len(jobs) {
		return nil, errors.New("enqueue unique: reply of the wrong length")
	}
	return out, nil
}

// UniqueRecheck is how long SweepUnique waits before it looks again at an
// identity whose expiry passed but whose job still holds it.
const UniqueRecheck = 30 * time.Second

// sweepUniqueScript deletes the unique:<identity> keys that no job holds
// any more (luaUniqueHeld) among those whose index entry is due, and their
// index entries; an identity still held is looked at again after
// recheck_ms. An index entry whose key is gone, or is no "id|expiry"
// string, is removed (the key is left alone).
//
// KEYS: unique, jobs, jobs:owner, jobs:failed, then the unique key of
// each identity
// ARGV: recheck_ms, then the identities
// Bounds: the caller's page (SweepUnique: at most limit identities).
// Failure: the index of the wrong type fails it before it writes.
// Returns how many identities it freed.
var sweepUniqueScript = redis.NewScript(luaNow + luaUniqueHeld + `
want_type(KEYS[1], 'zset')
local free, keep, drop = {}, {}, {}
for i = 2, #ARGV do
  local ident, key = ARGV[i], KEYS[3 + i]
  local score = redis.call('ZSCORE', KEYS[1], ident)
  if score and tonumber(score) <= now then
    if redis.call('TYPE', key).ok ~= 'string' then
      drop[#drop + 1] = ident
    else
      local id, exp = unique_holder(key)
      if not id then
        drop[#drop + 1] = ident
      elseif unique_held(KEYS[2], KEYS[3], KEYS[4], id, exp) then
        keep[#keep + 1] = math.max(exp, now + tonumber(ARGV[1]))
        keep[#keep + 1] = ident
      else
        free[#free + 1] = key
        drop[#drop + 1] = ident
      end
    end
  end
end
if #free > 0 then calln('DEL', free) end
if #drop > 0 then callk('ZREM', KEYS[1], drop) end
if #keep > 0 then callk('ZADD', KEYS[1], keep) end
return #free
`)

// SweepUnique frees up to limit unique identities whose expiry passed
// and that no job holds any more (see sweepUniqueScript): how the
// unique:<identity> keys, which have no TTL, are cleaned up. It returns
// how many it freed.
func (r *RDB) SweepUnique(ctx context.Context, limit int) (int, error) {
	now, err := r.c.Time(ctx).Result()
	if err != nil {
		return 0, err
	}
	idents, err := r.c.ZRangeArgs(ctx, redis.ZRangeArgs{Key: r.k.UniqueIndex(), Start: "-inf",
		Stop: strconv.FormatInt(now.UnixMilli(), 10), ByScore: true, Count: int64(limit)}).Result()
	if err != nil || len(idents) == 0 {
		if IsReplyError(err) {
			return 0, nil // a foreign index: quarantined by the singleton check
		}
		return 0, err
	}
	keys := []string{r.k.UniqueIndex(), r.k.Jobs(), r.k.Owners(), r.k.Failed()}
	args := make([]any, 0, 1+len(idents))
	args = append(args, UniqueRecheck.Milliseconds())
	for _, id := range idents {
		keys = append(keys, r.k.UniqueKey(id))
		args = append(args, id)
	}
	return sweepUniqueScript.Run(ctx, r.c, keys, args...).Int()
}

// UniqueHolder returns the job id that the unique:<identity> key names
// and its expiry, for operators and tests ("" when there is none).
func (r *RDB) UniqueHolder(ctx context.Context, identity string) (id string, expiry time.Time, err error) {
	v, err := r.c.Get(ctx, r.k.UniqueKey(identity)).Result()
	if errors.Is(err, redis.Nil) {
		return "", time.Time{}, nil
	}
	if err != nil {
		return "", time.Time{}, err
	}
	i := strings.LastIndexByte(v, '|')
	if i < 0 {
		return "", time.Time{}, nil
	}
	exp, _ := strconv.ParseInt(v[i+1:], 10, 64)
	return v[:i], time.UnixMilli(exp), nil
}
