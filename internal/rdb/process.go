package rdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// The plain commands of a scheduler process: its heartbeat, the peers and
// tasks it declares, the queue's head, and the wake channel. Each writes a
// whole value or adds a member, so none can half-apply.

// Heartbeat is what a process says of itself each beat (the process:<id>
// hash): who it is, since when, and what it runs.
type Heartbeat struct {
	ID, Host, Version string
	PID               int
	StartedMS, NowMS  int64
	Running, Tasks    int
	Types             string      // the digest of the task names it runs
	Names             []string    // the task and job type names it runs (its WithTasks set, or all it registers)
	Limits            []TypeLimit // the flow-control limits of its job types that have any
}

// TypeLimit is the flow-control limit of a job type as a process runs it
// (its registry's TaskConfig.MaxRunning, Rate and Priority), published in its
// process hash (field limits, a JSON array) for operators: the limits
// themselves are passed to the claim scripts by each process.
type TypeLimit struct {
	Type       string `json:"type"`
	MaxRunning int    `json:"max_running,omitempty"`
	RateN      int    `json:"rate_n,omitempty"`
	RatePerMS  int64  `json:"rate_per_ms,omitempty"`
	Priority   int    `json:"priority,omitempty"`
}

// FieldLimits is the process hash's field with its TypeLimits, written
// only by a process that has any.
const FieldLimits = "limits"

// ParseLimits reads a process hash's limits field ("" is none).
func ParseLimits(v string) ([]TypeLimit, error) {
	if v == "" {
		return nil, nil
	}
	var out []TypeLimit
	if err := json.Unmarshal([]byte(v), &out); err != nil {
		return nil, errors.New("process field " + FieldLimits + ": " + err.Error())
	}
	return out, nil
}

// Beat writes the heartbeat (the processes ZSET and the process hash, which
// expires after 3 ttl) and returns the processes that beat within ttl.
func (r *RDB) Beat(ctx context.Context, h Heartbeat, ttl time.Duration) ([]string, error) {
	pipe := r.c.Pipeline()
	pipe.ZAdd(ctx, r.k.Processes(), redis.Z{Score: float64(h.NowMS), Member: h.ID})
	pipe.HSet(ctx, r.k.Process(h.ID), "host", h.Host, "pid", h.PID, "version", h.Version,
		"started", h.StartedMS, "beat", h.NowMS, "running", h.Running, "tasks", h.Tasks, "types", h.Types,
		FieldTaskNames, encodeNames(h.Names))
	if len(h.Limits) > 0 {
		b, _ := json.Marshal(h.Limits) // a slice of plain structs always encodes
		pipe.HSet(ctx, r.k.Process(h.ID), FieldLimits, b)
	}
	pipe.PExpire(ctx, r.k.Process(h.ID), 3*ttl)
	live := pipe.ZRangeByScore(ctx, r.k.Processes(), &redis.ZRangeBy{
		Min: strconv.FormatInt(h.NowMS-ttl.Milliseconds(), 10), Max: "+inf"})
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, err
	}
	return live.Val(), nil
}

// Leave removes a stopping process's heartbeat.
func (r *RDB) Leave(ctx context.Context, id string) error {
	pipe := r.c.Pipeline()
	pipe.ZRem(ctx, r.k.Processes(), id)
	pipe.Del(ctx, r.k.Process(id))
	_, err := pipe.Exec(ctx)
	return err
}

// ForgetProcesses drops the processes silent since before beforeMS.
func (r *RDB) ForgetProcesses(ctx context.Context, beforeMS int64) error {
	return r.c.ZRemRangeByScore(ctx, r.k.Processes(), "-inf", "("+strconv.FormatInt(beforeMS, 10)).Err()
}

// ProcessBeats returns the last beat (unix ms) of every process not yet
// forgotten.
func (r *RDB) ProcessBeats(ctx context.Context) (map[string]int64, error) {
	zs, err := r.c.ZRangeWithScores(ctx, r.k.Processes(), 0, -1).Result()
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(zs))
	for _, z := range zs {
		id, _ := z.Member.(string)
		out[id] = int64(z.Score)
	}
	return out, nil
}

// FieldTaskNames is the process hash's field with the names of the task
// and job types the process runs, a JSON array of strings.
const FieldTaskNames = "task_names"

func encodeNames(names []string) string {
	if names == nil {
		names = []string{}
	}
	b, _ := json.Marshal(names) // strings always encode
	return string(b)
}

// ParseTaskNames reads a process hash's task_names field (FieldTaskNames):
// the names of the task and job types the process runs, and false when
// the value does not parse (a process of a version that does not publish
// them: "" included).
func ParseTaskNames(v string) ([]string, bool) {
	var names []string
	if json.Unmarshal([]byte(v), &names) != nil {
		return nil, false
	}
	return names, true
}

// ProcessTypes is what a process's hash says of the task types it runs:
// the digest of their names, and the names (Known false when the hash has
// none, or none that parse: a process gone, not beaten yet, or of a
// version that does not publish them).
type ProcessTypes struct {
	Digest string
	Names  []string
	Known  bool
}

// TaskTypes returns what the hash of each process says of the task types
// it runs, in one pipeline.
func (r *RDB) TaskTypes(ctx context.Context, ids []string) ([]ProcessTypes, error) {
	cmds, err := pipelined(ctx, r.c, nil, func(pipe redis.Pipeliner) []*redis.SliceCmd {
		cmds := make([]*redis.SliceCmd, len(ids))
		for i, id := range ids {
			cmds[i] = pipe.HMGet(ctx, r.k.Process(id), "types", FieldTaskNames)
		}
		return cmds
	})
	if err != nil && !errors.Is(err, redis.Nil) && !IsReplyError(err) {
		return nil, err
	}
	out := make([]ProcessTypes, len(ids))
	for i, c := range cmds {
		vals := c.Val()
		if len(vals) != 2 {
			continue // a foreign value where the hash should be
		}
		out[i].Digest, _ = vals[0].(string)
		if s, ok := vals[1].(string); ok {
			out[i].Names, out[i].Known = ParseTaskNames(s)
		}
	}
	return out, nil
}

// Declare marks tasks as declared by a live process at nowMS (so
// maintenance does not prune them).
func (r *RDB) Declare(ctx context.Context, nowMS int64, tasks []string) error {
	if len(tasks) == 0 {
		return nil
	}
	zs := make([]redis.Z, len(tasks))
	for i, t := range tasks {
		zs[i] = redis.Z{Score: float64(nowMS), Member: t}
	}
	return r.c.ZAdd(ctx, r.k.Declared(), zs...).Err()
}

// UndeclaredSince returns the tasks no live process declared since
// beforeMS.
func (r *RDB) UndeclaredSince(ctx context.Context, beforeMS int64) ([]string, error) {
	return r.c.ZRangeByScore(ctx, r.k.Declared(), &redis.ZRangeBy{Min: "-inf", Max: "(" + strconv.FormatInt(beforeMS, 10)}).Result()
}

// DataEpoch returns the created_at of the namespace's meta hash: "" when
// Redis lost the namespace's data (or it was never registered).
func (r *RDB) DataEpoch(ctx context.Context) (string, error) {
	v, err := r.c.HGet(ctx, r.k.Meta(), "created_at").Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	return v, err
}

// Entry is a member of a sorted set with its score (unix ms).
type Entry struct {
	Member string
	Score  int64
}

// QueueWindow is what a claim reads of the task queue at nowMS (see
// ReadQueueWindow): Due, the due entries, soonest first; Next, the entries
// of the next instant after nowMS; NextAll, whether Next holds all of that
// instant's; After, the instant after Next's (-1: none); Latest, the
// latest due entries, newest first.
//
// With a span, Span holds the entries of the instants from Next's to
// Next's plus the span, soonest first (Next is its first part), up to the
// count of Next; SpanAll, whether it holds all of its last instant's (the
// read did not stop inside it); SpanAfter, the instant after its last one
// (-1: none). Without a span, or when Span holds one instant only, Span is
// Next, SpanAll is NextAll and SpanAfter is After.
//
// Far reports a next instant at or beyond the read's horizon: Next and
// Span hold its first entry only, NextAll and SpanAll are false, and After
// and SpanAfter are -1 (not read).
type QueueWindow struct {
	Due, Next, Latest []Entry
	NextAll           bool
	After             int64
	Span              []Entry
	SpanAll           bool
	SpanAfter         int64
	Far               bool
}

// Instants counts the distinct scores of entries sorted by score.
func Instants(entries []Entry) int {
	n := 0
	for i, e := range entries {
		if i == 0 || e.Score != entries[i-1].Score {
			n++
		}
	}
	return n
}

// queueWindowScript reads a claim's window of the queue, and writes
// nothing.
//
// KEYS: queue
// ARGV: now_ms, due_n, next_n, latest_n, span_ms, horizon_ms
// Returns {due, next, after, latest, span_after, far}, the first five a
// ZRANGE WITHSCORES reply each: up to due_n entries with a score <= now_ms, soonest first; up to
// next_n of the scores from the first after now_ms to it plus span_ms
// (span_ms 0: of the first score only), soonest first; the first entry
// after that first score (none or one); up to latest_n entries <= now_ms,
// newest first (none when 0); the first entry after the last score of next
// when next holds more than one score (else none). When the first score
// after now_ms is horizon_ms or more after it, next is its first entry
// only, after and span_after are empty (not read), and far is 1 (else 0):
// the caller prepares no instant that far ahead, and a drain of every:1h
// tenants would otherwise read a batch of the next hour's at each claim.
// Each is a ZRANGE BYSCORE with a LIMIT: O(log N) plus what it returns.
var queueWindowScript = redis.NewScript(`#!lua flags=no-writes
local q, now = KEYS[1], ARGV[1]
local due = redis.call('ZRANGE', q, '-inf', now, 'BYSCORE', 'LIMIT', 0, tonumber(ARGV[2]), 'WITHSCORES')
local latest = {}
if tonumber(ARGV[4]) > 0 then
  latest = redis.call('ZRANGE', q, now, '-inf', 'BYSCORE', 'REV', 'LIMIT', 0, tonumber(ARGV[4]), 'WITHSCORES')
end
local nxt, after, span_after = {}, {}, {}
local first = redis.call('ZRANGE', q, '(' .. now, '+inf', 'BYSCORE', 'LIMIT', 0, 1, 'WITHSCORES')
local f0 = #first > 0 and tonumber(first[2])
local far = f0 and f0 - tonumber(now) >= tonumber(ARGV[6])
if far then
  nxt = first -- beyond the horizon: its instant only
elseif #first > 0 then
  local hi = first[2]
  local span, f = tonumber(ARGV[5]), tonumber(first[2])
  -- An absurd score (not an integer a Lua number holds exactly): no span.
  if span > 0 and f and f == math.floor(f) and math.abs(f) < 2^52 then hi = string.format('%d', f + span) end
  nxt = redis.call('ZRANGE', q, first[2], hi, 'BYSCORE', 'LIMIT', 0, tonumber(ARGV[3]), 'WITHSCORES')
  after = redis.call('ZRANGE', q, '(' .. first[2], '+inf', 'BYSCORE', 'LIMIT', 0, 1, 'WITHSCORES')
  local last = nxt[#nxt]
  if last and last ~= first[2] then
    span_after = redis.call('ZRANGE', q, '(' .. last, '+inf', 'BYSCORE', 'LIMIT', 0, 1, 'WITHSCORES')
  end
end
return {due, nxt, after, latest, span_after, far and 1 or 0}
`)

// WindowRead is what ReadQueueWindow reads of the queue at NowMS: up to
// Due due entries, up to Next entries of the next instant (with SpanMS > 0:
// of the instants from it to it plus SpanMS), the instant after it, and up
// to Latest of the latest due. A next instant HorizonMS or more after
// NowMS is read as its first entry only (QueueWindow.Far).
type WindowRead struct {
	NowMS             int64
	Due, Next, Latest int
	SpanMS, HorizonMS int64
}

// ReadQueueWindow reads, in one call, the window of the queue a claim
// uses (WindowRead).
// Its cost is what it returns, however many tasks are queued: a claim
// reads no entries it will not use (instants a millisecond apart, as
// jittered tenants have them, put a batch of the head over many instants;
// a next instant beyond the horizon is not prepared).
func (r *RDB) ReadQueueWindow(ctx context.Context, rd WindowRead) (QueueWindow, error) {
	res, err := queueWindowScript.Run(ctx, r.c, []string{r.k.Queue()}, rd.NowMS, rd.Due, rd.Next, rd.Latest, rd.SpanMS, rd.HorizonMS).Slice()
	if err != nil {
		return QueueWindow{}, err
	}
	if len(res) != 6 {
		return QueueWindow{}, errors.New("queue window: reply of the wrong length")
	}
	part := func(i int) ([]Entry, error) {
		flat, _ := res[i].([]any)
		if len(flat)%2 != 0 {
			return nil, errors.New("queue window: odd ZRANGE WITHSCORES reply")
		}
		out := make([]Entry, len(flat)/2)
		for j := range out {
			out[j].Member, _ = flat[2*j].(string)
			s, _ := flat[2*j+1].(string)
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, fmt.Errorf("queue window: score %q of %q: %w", s, out[j].Member, err)
			}
			out[j].Score = int64(f)
		}
		return out, nil
	}
	var w QueueWindow
	if w.Due, err = part(0); err != nil {
		return QueueWindow{}, err
	}
	if w.Span, err = part(1); err != nil {
		return QueueWindow{}, err
	}
	after, err := part(2)
	if err != nil {
		return QueueWindow{}, err
	}
	if w.Latest, err = part(3); err != nil {
		return QueueWindow{}, err
	}
	spanAfter, err := part(4)
	if err != nil {
		return QueueWindow{}, err
	}
	w.After, w.SpanAfter = -1, -1
	if far, _ := res[5].(int64); far == 1 {
		w.Next, w.Far = w.Span, true
		return w, nil
	}
	w.Next = w.Span
	for i, e := range w.Span {
		if e.Score != w.Span[0].Score {
			w.Next = w.Span[:i]
			break
		}
	}
	w.NextAll = len(w.Next) < len(w.Span) || len(w.Span) < rd.Next
	w.SpanAll = len(w.Span) < rd.Next
	if len(after) > 0 {
		w.After = after[0].Score
	}
	switch {
	case len(w.Next) == len(w.Span):
		w.SpanAll, w.SpanAfter = w.NextAll, w.After
	case len(spanAfter) > 0:
		w.SpanAfter = spanAfter[0].Score
	}
	return w, nil
}

// QueueScore returns a task's queue score; ok is false when it is not
// queued.
func (r *RDB) QueueScore(ctx context.Context, task string) (score int64, ok bool, err error) {
	s, err := r.c.ZScore(ctx, r.k.Queue(), task).Result()
	if errors.Is(err, redis.Nil) {
		return 0, false, nil
	}
	return int64(s), err == nil, err
}

// QueueScores returns the queue score of each task (ZMSCORE, a command per
// thousand tasks) and whether it is queued. A score may be absurd (see
// MaxSaneScore); one that does not parse is NaN.
func (r *RDB) QueueScores(ctx context.Context, tasks []string) (scores []float64, queued []bool, err error) {
	out := make([]float64, 0, len(tasks))
	in := make([]bool, 0, len(tasks))
	for chunk := range slices.Chunk(tasks, 1000) {
		args := make([]any, 0, len(chunk)+2)
		args = append(args, "ZMSCORE", r.k.Queue())
		for _, m := range chunk {
			args = append(args, m)
		}
		reply, err := r.c.Do(ctx, args...).Slice()
		if err != nil {
			return nil, nil, err
		}
		for i := range chunk {
			switch v := reply[i].(type) {
			case float64: // RESP3
				out, in = append(out, v), append(in, true)
			case string: // RESP2
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					f = math.NaN()
				}
				out, in = append(out, f), append(in, true)
			default: // nil: not queued
				out, in = append(out, 0), append(in, false)
			}
		}
	}
	return out, in, nil
}

// DropUnqueued takes tasks found queued out of the unqueued set.
func (r *RDB) DropUnqueued(ctx context.Context, tasks []string) error {
	if len(tasks) == 0 {
		return nil
	}
	args := make([]any, len(tasks))
	for i, t := range tasks {
		args[i] = t
	}
	return r.c.SRem(ctx, r.k.Unqueued(), args...).Err()
}

// ScanUnqueued reads a page of the unqueued set (Keys.Unqueued): about
// count names from cursor (0 starts), and the cursor of the next page (0
// after the last).
func (r *RDB) ScanUnqueued(ctx context.Context, cursor uint64, count int64) ([]string, uint64, error) {
	return r.c.SScan(ctx, r.k.Unqueued(), cursor, "", count).Result()
}

// TaskRetry returns what retrying a task's fire needs: its type, its
// parameters and its retries.
func (r *RDB) TaskRetry(ctx context.Context, task string) (typ, params string, retries int, err error) {
	vals, err := r.c.HMGet(ctx, r.k.Task(task), FieldType, FieldParams, FieldRetries).Result()
	if err != nil {
		return "", "", 0, err
	}
	typ, _ = vals[0].(string)
	params, _ = vals[1].(string)
	s, _ := vals[2].(string)
	retries, _ = strconv.Atoi(s)
	return typ, params, retries, nil
}

// TouchQueue sends a cheap command on the queue's key (EXISTS), so the
// connection and the node that holds the namespace are awake for the claim
// that follows; its reply does not matter.
func (r *RDB) TouchQueue(ctx context.Context) { _ = r.c.Exists(ctx, r.k.Queue()).Err() }

// KeyTypes returns the Redis type of each key ("none" when absent).
func (r *RDB) KeyTypes(ctx context.Context, keys []string) ([]string, error) {
	cmds, err := pipelined(ctx, r.c, nil, func(pipe redis.Pipeliner) []*redis.StatusCmd {
		cmds := make([]*redis.StatusCmd, len(keys))
		for i, key := range keys {
			cmds[i] = pipe.Type(ctx, key)
		}
		return cmds
	})
	if err != nil {
		return nil, err
	}
	out := make([]string, len(keys))
	for i, c := range cmds {
		out[i] = c.Val()
	}
	return out, nil
}

// SubscribeWake subscribes to the wake channel.
func (r *RDB) SubscribeWake(ctx context.Context) *redis.PubSub { return r.c.Subscribe(ctx, r.k.Wake()) }

// RunRead is a run in progress with its lease: a field of runs, or
// (Legacy) an older release's member of running with its lease key, where
// Lease is "" when the lease key is gone (expired) and Foreign set when it
// holds another type.
type RunRead struct {
	ID      string
	Lease   string
	Foreign bool
	Legacy  bool
}

// ReadRuns returns the runs in progress with their leases: the runs hash
// whole (it lists the runs in progress only), and the runs of an older
// release sharing the namespace in a rolling upgrade (the running set),
// whose leases it reads with one GET each, in one more pipeline, only when
// that set has members. A running set of another type lists nothing here
// (the singleton check moves it aside); a runs hash of another type fails
// the read.
func (r *RDB) ReadRuns(ctx context.Context) ([]RunRead, error) {
	var fields *redis.MapStringStringCmd
	var legacy *redis.StringSliceCmd
	_, err := pipelined(ctx, r.c, nil, func(pipe redis.Pipeliner) struct{} {
		fields = pipe.HGetAll(ctx, r.k.Runs())
		legacy = pipe.SMembers(ctx, r.k.Running())
		return struct{}{}
	})
	if err != nil && !IsReplyError(err) {
		return nil, err
	}
	if err := fields.Err(); err != nil {
		return nil, err
	}
	out := make([]RunRead, 0, len(fields.Val()))
	for id, lease := range fields.Val() {
		out = append(out, RunRead{ID: id, Lease: lease})
	}
	ids := legacy.Val() // nil on an error: a foreign value
	if len(ids) == 0 {
		return out, nil
	}
	cmds, err := pipelined(ctx, r.c, nil, func(pipe redis.Pipeliner) []*redis.StringCmd {
		cmds := make([]*redis.StringCmd, len(ids))
		for i, id := range ids {
			cmds[i] = pipe.Get(ctx, r.k.Run(id))
		}
		return cmds
	})
	if err != nil && !errors.Is(err, redis.Nil) && !IsReplyError(err) {
		return nil, err
	}
	for i, id := range ids {
		v, err := cmds[i].Result()
		out = append(out, RunRead{ID: id, Lease: v, Foreign: IsReplyError(err), Legacy: true})
	}
	return out, nil
}

// LockHolder returns the value of a task's lock ("" when not held or not a
// string).
func (r *RDB) LockHolder(ctx context.Context, task string) string {
	v, _ := r.c.Get(ctx, r.k.Lock(task)).Result()
	return v
}

// Ping sends PING to the server that holds the namespace: the master of
// the namespace's hash slot on a Redis Cluster (every key of a namespace
// lives there), the client's server otherwise.
func (r *RDB) Ping(ctx context.Context) error {
	if cc, ok := r.c.(*redis.ClusterClient); ok {
		node, err := cc.MasterForKey(ctx, r.k.Meta())
		if err != nil {
			return err
		}
		return node.Ping(ctx).Err()
	}
	return r.c.Ping(ctx).Err()
}
