package runtime

import (
	"strconv"
	"strings"
)

// keys builds every Redis key of one namespace. All of them carry the hash
// tag {namespace}, so they share one Redis Cluster slot and every Lua script
// can touch any of them.
//
// The layout (prefix P = "{namespace}:"):
//
//	P queue            ZSET  task key -> next run (unix ms)
//	P task:<key>       HASH  the task (class, name, expression, next_run, ...)
//	P lock:task:<key>  STR   held by a running non-concurrent task; PX = timeout
//	P lock:master      STR   held by the process that does maintenance
//	P running          SET   run ids of runs in progress
//	P run:<id>         STR   lease of one run; PX = timeout + process TTL
//	P tasks            SET   every task key (so nothing needs SCAN)
//	P history:<key>    LIST  the task's last run records, newest first
//	P processes        ZSET  process id -> last heartbeat (unix ms)
//	P process:<id>     HASH  host, pid, version, start, running handlers, types (digest of the registered task names)
//	P declared         ZSET task key -> when a live process last declared it (unix ms)
//	P jobs             ZSET job id -> due (unix ms): pending delayed jobs
//	P jobs:data        HASH job id -> envelope JSON {"task","payload","retries","enqueued"}
//	P jobs:attempt     HASH job id -> attempts made before (failed, or lost with their process)
//	P jobs:lease       ZSET claim id -> lease deadline (unix ms) of the jobs of one claim, renewed by the runner
//	P jobs:owner       HASH job id -> claim id ("<process>#<n>") of a job in flight
//	P dead             ZSET job id -> when it failed for the last time (unix ms)
//	P dead:data        HASH job id -> envelope JSON with the last error
//	P stats            HASH "<type>:runs", "<type>:failures" totals of job types
//	P sweep            HASH repair kind -> how many the master's invariant sweep repaired (sweep.go)
//	P meta             HASH  written at first registration; its loss means Redis lost its data
//	P wake             channel published when the queue head moves earlier
//	P quarantine:<name>:<ms>  a foreign value found where key <name> of this
//	                   layout should be, moved aside (kept for the operator)
type keys struct {
	prefix string
}

func newKeys(namespace string) keys {
	return keys{prefix: "{" + namespace + "}:"}
}

func (k keys) queue() string             { return k.prefix + "queue" }
func (k keys) task(key string) string    { return k.prefix + "task:" + key }
func (k keys) lock(key string) string    { return k.prefix + "lock:task:" + key }
func (k keys) master() string            { return k.prefix + "lock:master" }
func (k keys) running() string           { return k.prefix + "running" }
func (k keys) run(id string) string      { return k.prefix + "run:" + id }
func (k keys) tasks() string             { return k.prefix + "tasks" }
func (k keys) history(key string) string { return k.prefix + "history:" + key }
func (k keys) processes() string         { return k.prefix + "processes" }
func (k keys) process(id string) string  { return k.prefix + "process:" + id }
func (k keys) declared() string          { return k.prefix + "declared" }
func (k keys) jobs() string              { return k.prefix + "jobs" }
func (k keys) jobData() string           { return k.prefix + "jobs:data" }
func (k keys) attempts() string          { return k.prefix + "jobs:attempt" }
func (k keys) leases() string            { return k.prefix + "jobs:lease" }
func (k keys) owners() string            { return k.prefix + "jobs:owner" }
func (k keys) dead() string              { return k.prefix + "dead" }
func (k keys) deadData() string          { return k.prefix + "dead:data" }
func (k keys) stats() string             { return k.prefix + "stats" }
func (k keys) meta() string              { return k.prefix + "meta" }
func (k keys) wake() string              { return k.prefix + "wake" }

// quarantine is where a foreign value found in key (one of this layout's)
// is moved at unix ms at.
func (k keys) quarantine(key string, at int64) string {
	return k.prefix + "quarantine:" + strings.TrimPrefix(key, k.prefix) + ":" + strconv.FormatInt(at, 10)
}
