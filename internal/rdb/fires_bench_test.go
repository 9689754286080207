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
			fire, off := now-3600_000, 0
			var claimUs, finishUs float64
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
				u0 := scriptUsec(ctx, b, c)
				res, err := r.ClaimFires(ctx, r.NewFireClaim("p1", HistoryBound{Records: 10, Age: 24 * time.Hour},
					RunLeases{TTL: 1500 * time.Millisecond, Gap: 750 * time.Millisecond}, cands), batch)
				if err != nil {
					b.Fatal(err)
				}
				for i, o := range res {
					if !o.Outcome.Won() {
						b.Fatalf("candidate %d: %s", i, o.Outcome)
					}
				}
				u1 := scriptUsec(ctx, b, c)
				if _, err := r.FinishRuns(ctx, HistoryBound{Records: 10, Age: 24 * time.Hour}, fins); err != nil {
					b.Fatal(err)
				}
				u2 := scriptUsec(ctx, b, c)
				claimUs += u1 - u0
				finishUs += u2 - u1
			}
			fires := float64(b.N * batch)
			b.ReportMetric(claimUs/fires, "redis-µs/claim")
			b.ReportMetric(finishUs/fires, "redis-µs/finish")
		})
	}
}
