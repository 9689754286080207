package rdb

import (
	"strconv"
	"strings"
)

// Keys builds every Redis key of one namespace. All of them carry the hash
// tag {namespace}, so they share one Redis Cluster slot and every Lua script
// can touch any of them.
//
// The layout (prefix P = "{namespace}:"):
//
//	P queue            ZSET  task key -> next run (unix ms)
//	P task:<key>       HASH  the task (class, name, expression, next_run, ..., abandoned_run: the last run recorded abandoned, so reap, a takeover and the sweep record it once)
//	P lock:task:<key>  STR   held by a running non-concurrent task; PX = timeout
//	P lock:master      STR   held by the process that does maintenance
//	P runs             HASH  run id -> lease JSON (Lease.Encode) of each run in progress: the claim writes its field, the finish (or reap, a takeover, the data-loss restore's undo) deletes it
//	P running          SET   an older release's run ids of runs in progress (read, and removed by its reap and sweep, for a rolling upgrade; never written for a run of this release)
//	P run:<id>         STR   an older release's lease of one run, PX = timeout + margin (the same)
//	P alive            ZSET  run id -> deadline (unix ms) of the run's run lease, renewed by its process every TTL/6
//	P fireslots:<type> ZSET  run id -> deadline (unix ms) of its run lease, for the runs in progress of a task type with max_running (only capped types have one; see ClaimFires)
//	P pulse            HASH  last, since: when a process last renewed its run leases, and since when such pulses came steadily (unix ms)
//	P tasks            SET   the declared tasks' keys (and run-time tasks an older release listed, until the sweep takes them out)
//	P history:<key>    LIST  the task's last run records, newest first
//	P processes        ZSET  process id -> last heartbeat (unix ms)
//	P process:<id>     HASH  host, pid, version, start, running handlers, types (digest of the names of the tasks it runs), task_names (JSON array of them)
//	P declared         ZSET task key -> when a live process last declared it (unix ms)
//	P jobs             ZSET job id -> due (unix ms): pending delayed jobs
//	P jobs:data        HASH job id -> envelope JSON {"task","payload","retries","enqueued"}
//	P jobs:attempt     HASH job id -> attempts made before (failed, or lost with their process)
//	P jobs:failed      HASH job id -> 1: a unique job put back for a retry after its handler failed (a redelivery or its end deletes it)
//	P jobs:lease       ZSET claim id -> lease deadline (unix ms) of the jobs of one claim, renewed by the runner
//	P jobs:owner       HASH job id -> claim id ("<process>#<n>") of a job in flight
//	P dead             ZSET job id -> when it failed for the last time (unix ms)
//	P dead:data        HASH job id -> envelope JSON with the last error
//	P unique:<identity> STR "<job id>|<expiry ms>": the job holding a unique identity (UniqueKey; no TTL: SweepUnique removes it)
//	P unique           ZSET identity -> when SweepUnique next looks at it (unix ms): the index of the unique:<identity> keys
//	P stats            HASH "<type>:runs", "<type>:failures" totals of job types
//	P stats:min        HASH "<m mod 60>" -> minute m (unix ms / 60000), "<m mod 60>:<counter>" -> its count: the last hour's task fires, failures, lag and job attempts (minute.go); at most 420 fields
//	P sweep            HASH repair kind -> how many the master's invariant sweep repaired (sweep.go)
//	P meta             HASH  written at first registration; its loss means Redis lost its data
//	P slots:<type>     HASH process id -> "n|deadline_ms": the running slots it holds of a type with max_running, until (Redis time)
//	P rate:<type>      ZSET start id -> server time (unix ms) of a start in the rate window of a type; expires after the window
//	P ratekey:<n>:<type>:<key>  ZSET the same, per rate key (crontab.RateKey); n = len(type)
//	P wake             channel published when the queue head moves earlier
//	P quarantine:<name>:<ms>  a foreign value found where key <name> of this
//	                   layout should be, moved aside (kept for the operator)
type Keys struct {
	prefix string
}

// NewKeys returns the keys of namespace.
func NewKeys(namespace string) Keys {
	return Keys{prefix: "{" + namespace + "}:"}
}

// Prefix is what every key of the namespace starts with: "{namespace}:".
func (k Keys) Prefix() string { return k.prefix }

// Queue is the key P "queue".
func (k Keys) Queue() string { return k.prefix + "queue" }

// Task is the key P "task:" + key.
func (k Keys) Task(key string) string { return k.prefix + "task:" + key }

// Lock is the key P "lock:task:" + key.
func (k Keys) Lock(key string) string { return k.prefix + "lock:task:" + key }

// Master is the key P "lock:master".
func (k Keys) Master() string { return k.prefix + "lock:master" }

// Runs is the key P "runs", a HASH: run id -> lease (Lease.Encode) of
// every run in progress this release claimed (or wrote again after a data
// loss, RestoreRun). A field has no TTL: it stays until the run's finish,
// the master's reap (its process stopped heart-beating) or a claim that
// takes the run's lock over deletes it.
func (k Keys) Runs() string { return k.prefix + "runs" }

// Running is the key P "running", a SET: the run ids of the runs in
// progress of an older release, which listed them there with one lease key
// each (Run). This release never writes it for its own runs, so that an
// older master's reap, which reads it, never finds one of them there
// without its lease key (and records it abandoned); it reads it (ReadRuns,
// Abandon, the sweep) and removes entries, for a namespace an older
// release shares during a rolling upgrade.
func (k Keys) Running() string { return k.prefix + "running" }

// Run is the key P "run:" + id: an older release's lease of one run in
// progress, listed in Running (see there); this release reads and deletes
// them only.
func (k Keys) Run(id string) string { return k.prefix + "run:" + id }

// Alive is the key P "alive".
func (k Keys) Alive() string { return k.prefix + "alive" }

// FireSlots is the key P "fireslots:" + type: the runs in progress of the
// scheduled tasks of a type with a max_running cap, by run lease deadline.
func (k Keys) FireSlots(typ string) string { return k.prefix + "fireslots:" + typ }

// FireSlotsOfTask is the slot group of a run-time task with a max_running
// cap of its own (TaskSpec.MaxRunning): its runs count in P
// "fireslots:task:" + key, apart from its type's.
func FireSlotsOfTask(key string) string { return "task:" + key }

// Pulse is the key P "pulse".
func (k Keys) Pulse() string { return k.prefix + "pulse" }

// Tasks is the key P "tasks", a SET: the keys of the tasks declared in
// code (Register). A run-time task is not in it (see Unqueued for the
// indexes that list it); an older release listed those too, and the
// invariant sweep takes them out once they are queued or unqueued.
func (k Keys) Tasks() string { return k.prefix + "tasks" }

// Unqueued is the key P "unqueued", a SET: the tasks not in the queue,
// because they were disabled (by the claim, SetStatus, Register or
// SetTask) or have no instant left (an at: task between its claim and the
// finish that deletes it), and those the invariant sweep found in no
// index. The master's requeue reads it every tick, so a task an operator
// enables again with a plain HSET is queued within a tick whatever the
// task count; it leaves the set when it is queued again or removed.
//
// The task indexes: every task is in the queue or in the unqueued set (a
// declared task is also in the tasks set), so ScanTaskNames lists every
// task by walking the three, and Counts.Tasks is the queue's size plus
// this set's. A run-time task has no other entry: at a million tasks an
// entry in the tasks set would be a fifth of its memory.
func (k Keys) Unqueued() string { return k.prefix + "unqueued" }

// Classes is the key P "classes", a HASH: a run-time task type -> the
// class (Go type) that runs it, written by SetTasks for the types of each
// batch. A run-time task's hash does not store its class: it is its
// type's, read here (Inspector).
func (k Keys) Classes() string { return k.prefix + "classes" }

// History is the key P "history:" + key.
func (k Keys) History(key string) string { return k.prefix + "history:" + key }

// Processes is the key P "processes".
func (k Keys) Processes() string { return k.prefix + "processes" }

// Process is the key P "process:" + id.
func (k Keys) Process(id string) string { return k.prefix + "process:" + id }

// Declared is the key P "declared".
func (k Keys) Declared() string { return k.prefix + "declared" }

// Jobs is the key P "jobs".
func (k Keys) Jobs() string { return k.prefix + "jobs" }

// JobData is the key P "jobs:data".
func (k Keys) JobData() string { return k.prefix + "jobs:data" }

// Attempts is the key P "jobs:attempt".
func (k Keys) Attempts() string { return k.prefix + "jobs:attempt" }

// FirstDue is the key P "jobs:first": job id -> when the job was first
// due (unix ms), for the jobs that were put back in the queue since (a
// release, a retry, a redelivery), so that a later delivery still knows its
// scheduled instant (RunInfo.Fire) while its queue score is the due time
// of that attempt. A job due for the first time has no field: its score is
// its first due. The first put-back writes it (HSETNX: the first due
// wins), the claim reads it only while the hash exists, and the job's end
// (done, dead, cancelled) deletes it; the invariant sweep removes a field
// whose job no longer exists.
func (k Keys) FirstDue() string { return k.prefix + "jobs:first" }

// Failed is the key P "jobs:failed": job id -> "1" for a job with a
// unique identity that waits for the retry of a failed attempt (the ack
// of a retry writes it). Such a job holds its identity no longer than its
// expiry, while a job put back by a redelivery (its process died: the
// attempt did not fail) holds it until it ends (UniqueKey). A redelivery
// and the job's end (done, dead, cancelled, replaced by a debounce)
// delete the field, in the script that puts the job back or ends it.
// Jobs without an identity never have one.
func (k Keys) Failed() string { return k.prefix + "jobs:failed" }

// UniqueKey is the key P "unique:" + identity: a STRING "<job id>|<expiry
// unix ms>" naming the job that holds the unique identity (the job's type
// and a digest of its payload, or its type and a key the producer chose).
// The identity is held while now < expiry (enqueue time + the ttl), and
// past it while the job is running or pending but not for the retry of a
// failed attempt (Failed; see luaUniqueHeld). The key has no TTL of its own: it is in the UniqueIndex,
// whose sweep (SweepUnique) deletes it once nothing holds it.
func (k Keys) UniqueKey(identity string) string { return k.prefix + "unique:" + identity }

// UniqueIndex is the key P "unique": a ZSET identity -> when SweepUnique
// next looks at its UniqueKey (its expiry; later while its job holds it).
func (k Keys) UniqueIndex() string { return k.prefix + "unique" }

// Leases is the key P "jobs:lease".
func (k Keys) Leases() string { return k.prefix + "jobs:lease" }

// Owners is the key P "jobs:owner": job id -> OwnerValue (the claim
// that delivered it and the due time it was claimed at).
func (k Keys) Owners() string { return k.prefix + "jobs:owner" }

// Dead is the key P "dead".
func (k Keys) Dead() string { return k.prefix + "dead" }

// DeadData is the key P "dead:data".
func (k Keys) DeadData() string { return k.prefix + "dead:data" }

// Stats is the key P "stats".
func (k Keys) Stats() string { return k.prefix + "stats" }

// StatsMinute is the key P "stats:min".
func (k Keys) StatsMinute() string { return k.prefix + "stats:min" }

// Sweep is the key P "sweep".
func (k Keys) Sweep() string { return k.prefix + "sweep" }

// Meta is the key P "meta".
func (k Keys) Meta() string { return k.prefix + "meta" }

// Slots is the key P "slots:<type>": the running slots of a capped type
// (TaskConfig.MaxRunning) each process holds, with their deadline (see
// "The limits of a claim" in limits.go).
func (k Keys) Slots(typ string) string { return k.prefix + "slots:" + typ }

// Level is the key P "jobs:prio:<priority>": the index of the pending jobs
// of that priority, id -> due ms, in a namespace with priorities (see
// "Priorities" in priority.go).
func (k Keys) Level(priority int) string { return k.prefix + "jobs:prio:" + strconv.Itoa(priority) }

// Rate is the key P "rate:<type>": the starts of a rated type
// (TaskConfig.Rate) in its window, scored with their server time (unix
// ms); it expires after the window. A job with a rate key counts in P
// "ratekey:<len(type)>:<type>:<key>" instead (built by the claim script).
func (k Keys) Rate(typ string) string { return k.prefix + "rate:" + typ }

// RateKey is the key P "ratekey:<len(type)>:<type>:<key>": the window of
// the jobs of type typ enqueued with rate key key.
func (k Keys) RateKey(typ, key string) string {
	return k.prefix + "ratekey:" + strconv.Itoa(len(typ)) + ":" + typ + ":" + key
}

// Wake is the key P "wake".
func (k Keys) Wake() string { return k.prefix + "wake" }

// Quarantine is where a foreign value found in key (one of this layout's)
// is moved at unix ms at.
func (k Keys) Quarantine(key string, at int64) string {
	return k.prefix + "quarantine:" + strings.TrimPrefix(key, k.prefix) + ":" + strconv.FormatInt(at, 10)
}
