package rdb

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/redistest"
)

// scriptUsec is the total time Redis spent in EVALSHA so far (INFO
// commandstats), in µs.
func scriptUsec(ctx context.Context, b *testing.B, c *redis.Client) float64 {
	b.Helper()
	s, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(s, "\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_evalsha:"); ok {
			for _, kv := range strings.Split(rest, ",") {
				if v, ok := strings.CutPrefix(kv, "usec="); ok {
					f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
					return f
				}
			}
		}
	}
	return 0
}

// BenchmarkFireCycle claims and finishes batches of fires of run-time
// tasks (every:1h, small params, as SetTask writes them), one ClaimFires
// and one FinishRuns call per batch, and reports the Redis time per fire
// of each (redis-µs/claim, redis-µs/finish: INFO commandstats, the
// server's own CPU in the scripts, whatever the client costs). The
// history=new cases delete the histories before each batch (untimed): the
// finish then writes lists just created, as every fire of S6 does. The
// tasks=N cases register N tasks and fire each batch over the next batch
// of them in turn, as S6's drain does: at that scale most of what a fire
// touches is out of the CPU's caches, and a fire costs more than in the
// cases that fire the same batch again and again.
//
//	go test ./internal/rdb -run '^$' -bench FireCycle -benchtime 200x
func BenchmarkFireCycle(b *testing.B) {
	type cycle struct {
		batch, tasks int // tasks 0: batch
		fresh        bool
	}
	for _, cy := range []cycle{{1, 0, false}, {2, 0, false}, {1, 0, true}, {16, 0, false}, {64, 0, false}, {512, 0, false},
		{64, 0, true}, {64, 100_000, false}, {512, 100_000, false}} {
		batch, tasks, name := cy.batch, max(cy.tasks, cy.batch), fmt.Sprintf("batch=%d", cy.batch)
		if cy.fresh {
			name += "/history=new"
		}
		if cy.tasks > 0 {
			name += fmt.Sprintf("/tasks=%d", cy.tasks)
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			c := redistest.Start(b).Client(b)
			r := New(c, "bench")
			now := time.Now().UnixMilli()
			registerBenchTasks(ctx, b, r, now, tasks)
			fire, off := now-3600_000, 0
			m := scriptMeter{c: c}
			b.ResetTimer()
			for range b.N {
				if off+batch > tasks {
					off, fire = 0, fire+1 // every task fired once: the next round of instants
				}
				cands := make([]FireCandidate, batch)
				fins := make([]RunFinish, batch)
				for i := range cands {
					key := "s-" + strconv.Itoa(off+i)
					id := RunID(key, fire)
					cands[i] = FireCandidate{Task: key, FireMS: fire, NextMS: fire + 1, RunID: id,
						Lease: Lease{Process: "p1", Task: key, Fire: fire, Start: now}.Encode()}
					fins[i] = RunFinish{RunID: id, Task: key, LockValue: LockValue("p1", fire), Outcome: "ok", DurationMS: 1,
						Record: `{"task":"` + key + `","fire":` + strconv.FormatInt(fire, 10) + `,"start_ms":` + strconv.FormatInt(now, 10) +
							`,"end_ms":` + strconv.FormatInt(now, 10) + `,"outcome":"ok","process":"p1","attempt":1}`}
				}
				if cy.fresh {
					hists := make([]string, batch)
					for i := range hists {
						hists[i] = r.k.History("s-" + strconv.Itoa(off+i))
					}
					if err := c.Del(ctx, hists...).Err(); err != nil {
						b.Fatal(err)
					}
				}
				off += batch
				m.time(ctx, b, &m.claimUs, func() error {
					res, err := r.ClaimFires(ctx, r.NewFireClaim("p1", HistoryBound{Records: 10, Age: 24 * time.Hour},
						RunLeases{TTL: 1500 * time.Millisecond, Gap: 750 * time.Millisecond}, cands), batch)
					for i, o := range res {
						if !o.Outcome.Won() {
							return fmt.Errorf("candidate %d: %s", i, o.Outcome)
						}
					}
					return err
				})
				m.time(ctx, b, &m.finishUs, func() error {
					_, err := r.FinishRuns(ctx, HistoryBound{Records: 10, Age: 24 * time.Hour}, fins)
					return err
				})
			}
			m.report(b, b.N*batch)
		})
	}
}

// registerBenchTasks registers the run-time tasks s-0 .. s-<tasks-1>
// (every:1h, small params, as SetTask writes them), each due an hour
// before now.
func registerBenchTasks(ctx context.Context, b *testing.B, r *RDB, now int64, tasks int) {
	b.Helper()
	for lo := 0; lo < tasks; lo += 10_000 {
		decls := make([]TaskDecl, 0, 10_000)
		for i := lo; i < min(lo+10_000, tasks); i++ {
			decls = append(decls, TaskDecl{Key: "s-" + strconv.Itoa(i), Class: "bench.Tenant", Type: "tenant",
				Expression: "every:1h", TZ: "UTC", Interval: "every 1h", NextMS: now - 3600_000, Timeout: time.Minute,
				Misfire: "once", Params: `{"tenant":` + strconv.Itoa(i) + `}`})
		}
		if _, err := r.SetTasks(ctx, now, decls, 5000); err != nil {
			b.Fatal(err)
		}
	}
}

// floorClaimScript does only what the seed layout makes every fire of a
// non-concurrent task do in Redis, with nothing of the product's own
// bookkeeping (no run lease, runs hash, history, skip records, counters or
// fire slots): per candidate, read the task hash's next_run (the
// compare-and-set) and status, take lock:task:<key> (SET NX PX) and write
// next_run and last_run to the task hash; then move the queue entries on
// with one variadic ZADD.
//
// KEYS: queue, then per candidate: task, lock
// ARGV: lock value prefix, then per candidate: member, fire, next
var floorClaimScript = redis.NewScript(luaLib + `
local queued = {}
local n = (#KEYS - 1) / 2
for i = 0, n - 1 do
  local task, lock = KEYS[2 + 2*i], KEYS[3 + 2*i]
  local member, fire, nxt = ARGV[2 + 3*i], ARGV[3 + 3*i], ARGV[4 + 3*i]
  local h = redis.call('HMGET', task, 'next_run', 'status')
  if h[1] == fire and redis.call('SET', lock, ARGV[1] .. fire, 'NX', 'PX', 60000) then
    redis.call('HSET', task, 'next_run', nxt, 'last_run', fire)
    queued[#queued + 1] = nxt
    queued[#queued + 1] = member
  end
end
if #queued > 0 then callk('ZADD', KEYS[1], queued) end
return #queued / 2
`)

// floorFinishScript releases the batch's locks with one variadic DEL: the
// only write the seed layout makes a finish do.
var floorFinishScript = redis.NewScript(luaLib + `return calln('DEL', KEYS)`)

// nsClaimScript is floorClaimScript's work with the per-task state the
// seed layout keeps in keys of their own moved into fields of namespace
// keys, as a delayed job's is: the compare-and-set reads the queue scores
// (ZMSCORE), the locks are fields of one hash (value "holder|deadline", a
// field whose deadline passed is free) and next_run and last_run are one
// field per task of a state hash ("next|last"), each written with one
// variadic command per batch. It is not the product's layout: the
// contract's task hash and lock:task:<key> keys rule it out. It measures
// what a fire would cost without them.
//
// KEYS: queue, locks, state
// ARGV: holder, lock ttl ms, then per candidate: member, fire, next
var nsClaimScript = redis.NewScript(luaNow + `
local n = (#ARGV - 2) / 3
local members = {}
for i = 0, n - 1 do members[i + 1] = ARGV[3 + 3*i] end
local scores = callk('ZMSCORE', KEYS[1], members)
local held = callk('HMGET', KEYS[2], members)
local queued, locks, state = {}, {}, {}
local deadline = ARGV[1] .. '|' .. (now + tonumber(ARGV[2]))
for i = 0, n - 1 do
  local member, fire, nxt = members[i + 1], ARGV[4 + 3*i], ARGV[5 + 3*i]
  local lk = held[i + 1]
  local free = not lk or tonumber(string.match(lk, '|(%d+)$') or 0) < now
  if scores[i + 1] == fire and free then
    queued[#queued + 1] = nxt
    queued[#queued + 1] = member
    locks[#locks + 1] = member
    locks[#locks + 1] = deadline
    state[#state + 1] = member
    state[#state + 1] = nxt .. '|' .. fire
  end
end
if #queued > 0 then
  callk('ZADD', KEYS[1], queued)
  callk('HSET', KEYS[2], locks)
  callk('HSET', KEYS[3], state)
end
return #queued / 2
`)

// nsFinishScript releases nsClaimScript's locks: one variadic HDEL.
//
// KEYS: locks; ARGV: the members
var nsFinishScript = redis.NewScript(luaLib + `return callk('HDEL', KEYS[1], ARGV)`)

// BenchmarkFireFloor measures the floor a stored layout puts under a fire:
// the Redis time per fire of a claim and a finish that do only what the
// layout makes every fire of a non-concurrent task do, with none of the
// product's bookkeeping (no run lease, runs hash, history, skip records,
// counters or fire slots), over 100,000 registered tasks fired in batches
// of 512 in turn, as BenchmarkFireCycle's batch=512/tasks=100000 case does
// with the product's scripts (run both in one session to compare: the
// machine is noisy).
//
// layout=seed is the contract's (floorClaimScript, floorFinishScript):
// three calls on keys of the task's own per fire. layout=namespace
// (nsClaimScript, nsFinishScript) keeps the same state in fields of
// namespace keys, the way a delayed job does: the figure a fire could
// reach if the contract let the lock and next_run leave the task's keys.
//
//	go test ./internal/rdb -run '^$' -bench 'FireFloor|FireCycle/batch=512/tasks' -benchtime 200x
func BenchmarkFireFloor(b *testing.B) {
	for _, layout := range []string{"seed", "namespace"} {
		b.Run("layout="+layout, func(b *testing.B) { benchFireFloor(b, layout == "namespace") })
	}
}

func benchFireFloor(b *testing.B, namespace bool) {
	const batch, tasks = 512, 100_000
	ctx := context.Background()
	c := redistest.Start(b).Client(b)
	r := New(c, "bench")
	now := time.Now().UnixMilli()
	registerBenchTasks(ctx, b, r, now, tasks)
	locksKey, stateKey := r.k.prefix+"bench:locks", r.k.prefix+"bench:state"
	fire, off := now-3600_000, 0
	m := scriptMeter{c: c}
	b.ResetTimer()
	for range b.N {
		if off+batch > tasks {
			off, fire = 0, fire+1
		}
		var claim, finish *redis.Script
		var claimKeys, finishKeys []string
		var claimArgs, finishArgs []any
		if namespace {
			claim, finish = nsClaimScript, nsFinishScript
			claimKeys, finishKeys = []string{r.k.Queue(), locksKey, stateKey}, []string{locksKey}
			claimArgs = append(make([]any, 0, 2+3*batch), "p1", 60000)
		} else {
			claim, finish = floorClaimScript, floorFinishScript
			claimKeys = append(make([]string, 0, 1+2*batch), r.k.Queue())
			claimArgs = append(make([]any, 0, 1+3*batch), "p1|")
		}
		for i := range batch {
			key := "s-" + strconv.Itoa(off+i)
			claimArgs = append(claimArgs, key, fire, fire+1)
			if namespace {
				finishArgs = append(finishArgs, key)
			} else {
				claimKeys = append(claimKeys, r.k.Task(key), r.k.Lock(key))
				finishKeys = append(finishKeys, r.k.Lock(key))
			}
		}
		off += batch
		m.time(ctx, b, &m.claimUs, func() error {
			won, err := claim.Run(ctx, c, claimKeys, claimArgs...).Int()
			if err == nil && won != batch {
				err = fmt.Errorf("won %d of %d", won, batch)
			}
			return err
		})
		m.time(ctx, b, &m.finishUs, func() error { return finish.Run(ctx, c, finishKeys, finishArgs...).Err() })
	}
	m.report(b, b.N*batch)
}

// scriptMeter sums the Redis time of a benchmark's claims and finishes:
// the EVALSHA time INFO commandstats counts, the server's own CPU in the
// scripts, whatever the client costs.
type scriptMeter struct {
	c                 *redis.Client
	claimUs, finishUs float64
}

// time calls f and adds the EVALSHA µs it took to *into; an error of f
// fails the benchmark.
func (m *scriptMeter) time(ctx context.Context, b *testing.B, into *float64, f func() error) {
	b.Helper()
	u0 := scriptUsec(ctx, b, m.c)
	if err := f(); err != nil {
		b.Fatal(err)
	}
	*into += scriptUsec(ctx, b, m.c) - u0
}

// report reports the claims' and finishes' µs per fire of fires.
func (m *scriptMeter) report(b *testing.B, fires int) {
	b.ReportMetric(m.claimUs/float64(fires), "redis-µs/claim")
	b.ReportMetric(m.finishUs/float64(fires), "redis-µs/finish")
}
