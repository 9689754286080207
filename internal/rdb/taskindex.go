package rdb

// The task indexes: which collections list the tasks of a namespace, and
// the reads and repairs that keep them whole (Keys.Unqueued). Every task is
// in the queue (it has an instant) or in the unqueued set (disabled, or no
// instant left); a declared task is in the tasks set too. A run-time task
// has no entry beyond those two, so a million of them cost no tasks-set
// entries; the lists walk the three collections (ScanTaskNames), the count
// adds two sizes (ReadCounts), and the invariant sweep finds a task hash
// that no index lists (SweepTaskIndex).

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// The collections ScanTaskNames walks, in order. A cursor carries the
// collection in its top two bits and that collection's SSCAN or ZSCAN
// cursor in the rest.
const (
	scanDeclared = iota // the tasks set
	scanQueued          // the queue, less the members of the tasks set
	scanUnqueued        // the unqueued set, less the members of the other two
	scanPhases

	scanPhaseShift = 62
	scanCursorMask = 1<<scanPhaseShift - 1
)

// TaskCursorValid reports whether cursor can be a cursor of ScanTaskNames:
// its top bits name one of the collections it walks.
func TaskCursorValid(cursor uint64) bool { return cursor>>scanPhaseShift < scanPhases }

// ScanTaskNames reads one step of the walk of every task key: the tasks
// set, then the queue, then the unqueued set (each with SSCAN or ZSCAN,
// MATCH match, COUNT count), leaving out a key already listed by an
// earlier collection. It returns the keys and the cursor of the next step,
// 0 after the last; 0 starts. Following the cursors from 0 to 0 lists
// every task that is in an index for the whole walk; a task that moves
// between the queue and the unqueued set meanwhile (disabled, enabled
// again) may be missed or listed twice, as SCAN may list a key twice.
// Redis returns a small collection (one stored as a listpack) whole in one
// step, a collection that ends with no key to list (an empty tasks set)
// is followed by the next within the step, and a step that ends a
// collection with keys ends the walk when the later ones are empty.
func (r *RDB) ScanTaskNames(ctx context.Context, cursor uint64, match string, count int64) ([]string, uint64, error) {
	phase, at := cursor>>scanPhaseShift, cursor&scanCursorMask
	for {
		names, next, err := r.scanIndex(ctx, phase, at, match, count)
		if err != nil {
			return nil, 0, err
		}
		switch {
		case next != 0:
			return names, next | phase<<scanPhaseShift, nil
		case phase+1 == scanPhases:
			return names, 0, nil
		case len(names) > 0:
			// The walk ends here when the collections after this one are
			// empty, so that the caller's last page is not an empty one.
			rest, err := r.c.Exists(ctx, scanKeysAfter(r.k, phase)...).Result()
			if err != nil {
				return nil, 0, err
			}
			if rest == 0 {
				return names, 0, nil
			}
			return names, (phase + 1) << scanPhaseShift, nil
		}
		// A collection that ended with nothing (an empty tasks set, as a
		// namespace of run-time tasks has): the step goes on to the next.
		phase, at = phase+1, 0
	}
}

// scanKeysAfter returns the keys of the collections ScanTaskNames walks
// after phase.
func scanKeysAfter(k Keys, phase uint64) []string {
	all := [scanPhases]string{k.Tasks(), k.Queue(), k.Unqueued()}
	return all[phase+1:]
}

// scanIndex reads one step of the collection phase of ScanTaskNames from
// its cursor at, leaving out the keys an earlier collection lists.
func (r *RDB) scanIndex(ctx context.Context, phase, at uint64, match string, count int64) ([]string, uint64, error) {
	var names []string
	var next uint64
	var err error
	switch phase {
	case scanDeclared:
		names, next, err = r.c.SScan(ctx, r.k.Tasks(), at, match, count).Result()
	case scanQueued:
		var kv []string
		kv, next, err = r.c.ZScan(ctx, r.k.Queue(), at, match, count).Result()
		names = pairsAt(kv, 0)
	case scanUnqueued:
		names, next, err = r.c.SScan(ctx, r.k.Unqueued(), at, match, count).Result()
	default:
		return nil, 0, fmt.Errorf("task scan cursor: collection %d: no such collection", phase)
	}
	if err != nil {
		return nil, 0, err
	}
	if next > scanCursorMask {
		return nil, 0, fmt.Errorf("task scan: Redis cursor %d is past %d bits", next, scanPhaseShift)
	}
	if phase != scanDeclared && len(names) > 0 {
		if names, err = r.notListedBefore(ctx, phase, names); err != nil {
			return nil, 0, err
		}
	}
	return names, next, nil
}

// notListedBefore keeps the names that the collections before phase do
// not hold (SMISMEMBER of the tasks set, and for the unqueued set ZMSCORE
// of the queue, in one pipeline).
func (r *RDB) notListedBefore(ctx context.Context, phase uint64, names []string) ([]string, error) {
	members := make([]any, len(names))
	for i, n := range names {
		members[i] = n
	}
	pipe := r.c.Pipeline()
	declared := pipe.SMIsMember(ctx, r.k.Tasks(), members...)
	var queued *redis.Cmd
	if phase == scanUnqueued {
		queued = pipe.Do(ctx, append([]any{"ZMSCORE", r.k.Queue()}, members...)...)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, err
	}
	in := declared.Val()
	var scores []any
	if queued != nil {
		scores, _ = queued.Val().([]any)
	}
	out := names[:0]
	for i, n := range names {
		if (i < len(in) && in[i]) || (i < len(scores) && scores[i] != nil) {
			continue
		}
		out = append(out, n)
	}
	return out, nil
}

// ScanDeclared reads one SSCAN step of the tasks set (Keys.Tasks: the
// declared tasks, and run-time tasks an older release listed there):
// about count keys from cursor (0 starts), and the next cursor (0 after
// the last).
func (r *RDB) ScanDeclared(ctx context.Context, cursor uint64, count int64) ([]string, uint64, error) {
	return r.c.SScan(ctx, r.k.Tasks(), cursor, "", count).Result()
}

// TaskNames returns the key of every task (ScanTaskNames from 0 to 0,
// without repeats).
func (r *RDB) TaskNames(ctx context.Context) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for cursor := uint64(0); ; {
		names, next, err := r.ScanTaskNames(ctx, cursor, "", 1000)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
		if cursor = next; cursor == 0 {
			return out, nil
		}
	}
}

// indexScript puts the tasks that are in neither the queue nor the
// unqueued set into the unqueued set, where the requeue looks at them
// every tick (and queues those that are active or paused and have an
// instant). A key with no task hash is left out.
//
// KEYS: queue, unqueued, sweep, then task:<key> of each member (every key
// of the namespace's slot: an empty key name would be another slot on
// Redis Cluster)
// ARGV: kind (the sweep counter; "" counts nothing), then the members
// Returns the members it added.
var indexScript = redis.NewScript(luaLib + `
want_type(KEYS[1], 'zset')
want_type(KEYS[2], 'set')
local count = ARGV[1] ~= ''
if count then want_type(KEYS[3], 'hash') end
local add = {}
for i = 2, #ARGV do
  local m = ARGV[i]
  if not redis.call('ZSCORE', KEYS[1], m) and redis.call('SISMEMBER', KEYS[2], m) == 0
      and redis.call('TYPE', KEYS[2 + i]).ok == 'hash' then
    add[#add + 1] = m
  end
end
if #add > 0 then
  callk('SADD', KEYS[2], add)
  if count then redis.call('HINCRBY', KEYS[3], ARGV[1], #add) end
end
return add
`)

// index runs indexScript on members, counting what it adds as a repair of
// kind when count.
func (r *RDB) index(ctx context.Context, members []string, count bool) ([]string, error) {
	if len(members) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, 3+len(members))
	keys = append(keys, r.k.Queue(), r.k.Unqueued(), r.k.Sweep())
	kind := ""
	if count {
		kind = RepairIndex
	}
	args := make([]any, 0, 1+len(members))
	args = append(args, kind)
	for _, m := range members {
		keys = append(keys, r.k.Task(m))
		args = append(args, m)
	}
	return indexScript.Run(ctx, r.c, keys, args...).StringSlice()
}

// IndexUnqueued puts the tasks of members that are in neither the queue
// nor the unqueued set (and have a task hash) into the unqueued set, and
// returns them: the requeue's step for a task it found in the tasks set
// that it cannot queue (disabled, no instant left, a bad expression), so
// that it is counted and listed without the tasks set.
// Failure: a queue or unqueued set of the wrong type fails it unwritten.
func (r *RDB) IndexUnqueued(ctx context.Context, members []string) ([]string, error) {
	return r.index(ctx, members, false)
}

// SweepTaskIndex checks one SCAN page of the task hashes (task:<key>; on
// Redis Cluster the scan goes to the node of the namespace's slot) and
// puts those in neither the queue nor the unqueued set into the unqueued
// set (indexScript), counted as RepairIndex: a task whose queue entry was
// lost (the requeue queues it again within a tick), or one an older
// release listed only in the tasks set.
// Bounds: one page; three reads per task hash, the writes after all of
// them.
// Failure: a queue, unqueued set or sweep hash of the wrong type fails it
// before it writes.
func (r *RDB) SweepTaskIndex(ctx context.Context, cursor uint64, count int64) (uint64, []string, error) {
	_, members, next, err := r.scanKeys(ctx, cursor, r.k.Task(""), count)
	if err != nil {
		return cursor, nil, err
	}
	added, err := r.index(ctx, members, true)
	return pageResult(cursor, next, added, err)
}

// untrackScript takes run-time tasks out of the tasks set, where an older
// release listed every task, once the queue or the unqueued set lists
// them. A declared task (source static), a key with no task hash and a
// task in neither index are left (the index sweep puts the last in the
// unqueued set, and a later pass takes it out).
//
// KEYS: tasks, queue, unqueued, then task:<key> of each member
// ARGV: the members
// Returns the members it took out.
var untrackScript = redis.NewScript(luaLib + `
want_type(KEYS[1], 'set')
want_type(KEYS[2], 'zset')
want_type(KEYS[3], 'set')
local out = {}
for i = 1, #ARGV do
  local m, task = ARGV[i], KEYS[3 + i]
  if redis.call('TYPE', task).ok == 'hash' and redis.call('HGET', task, 'source') ~= 'static'
      and (redis.call('ZSCORE', KEYS[2], m) or redis.call('SISMEMBER', KEYS[3], m) == 1) then
    out[#out + 1] = m
  end
end
if #out > 0 then callk('SREM', KEYS[1], out) end
return out
`)

// SweepTrackedRunTime checks one SSCAN page of the tasks set and takes the
// run-time tasks out of it that the queue or the unqueued set lists
// (untrackScript): the entries an older release wrote for every task. It
// counts nothing (no state was wrong) and returns the keys it took out.
// Bounds: one page; four reads per member, the write after all of them.
// Failure: a tasks set, queue or unqueued set of the wrong type fails it
// before it writes.
func (r *RDB) SweepTrackedRunTime(ctx context.Context, cursor uint64, count int64) (uint64, []string, error) {
	members, next, err := r.ScanDeclared(ctx, cursor, count)
	if err != nil || len(members) == 0 {
		return pageResult(cursor, next, nil, err)
	}
	keys := make([]string, 0, 3+len(members))
	keys = append(keys, r.k.Tasks(), r.k.Queue(), r.k.Unqueued())
	args := make([]any, len(members))
	for i, m := range members {
		keys = append(keys, r.k.Task(m))
		args[i] = m
	}
	out, err := untrackScript.Run(ctx, r.c, keys, args...).StringSlice()
	return pageResult(cursor, next, out, err)
}

// forgetScript drops a task key from the tasks and unqueued sets if it has
// no task hash.
//
// KEYS: task, tasks, unqueued
// ARGV: member
var forgetScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.pcall('SREM', KEYS[2], ARGV[1])
redis.pcall('SREM', KEYS[3], ARGV[1])
return 1
`)

// ForgetTask drops a task key from the tasks and unqueued sets when its
// hash is gone (checked again in the script: a task written again since
// its read is kept).
func (r *RDB) ForgetTask(ctx context.Context, task string) error {
	return forgetScript.Run(ctx, r.c, []string{r.k.Task(task), r.k.Tasks(), r.k.Unqueued()}, task).Err()
}
