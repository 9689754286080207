package rdb

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/redistest"
)

// finishWith finishes one run of task per record, in one FinishRuns call,
// with the given history bound.
func finishWith(t *testing.T, r *RDB, bound HistoryBound, task string, records ...string) {
	t.Helper()
	runs := make([]RunFinish, len(records))
	for i, rec := range records {
		runs[i] = RunFinish{RunID: RunID(task, int64(1000+i)), Task: task, LockValue: LockValue("p", int64(1000+i)),
			Outcome: "ok", DurationMS: 1, Record: rec}
	}
	if _, err := r.FinishRuns(context.Background(), bound, runs); err != nil {
		t.Fatal(err)
	}
}

// rec is a run record of task that ended at endMS.
func rec(task string, endMS int64) string {
	return Record{Task: task, Fire: endMS, Start: endMS, End: endMS, Outcome: "ok", Process: "p", Attempt: 1}.Encode()
}

// TestHistoryTrimsByCountAndAge pins what push_history keeps (the
// scripts' one writer of a history: FinishRuns, the claim's skips,
// Abandon, the sweeps, AckJobs): at most the bound's records, none older
// than its age at the tail, whichever the record's shape, in a list just
// created (whose tail the script checks without reading it back) as in
// one that was there; and the list expires within the age.
func TestHistoryTrimsByCountAndAge(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t).Client(t)
	r := New(c, "h")
	now := c.Time(ctx).Val().UnixMilli()
	bound := HistoryBound{Records: 3, Age: time.Hour}
	old, young := now-2*3600_000, now-1000
	// read returns the history of task, newest first, and its TTL.
	read := func(task string) ([]string, time.Duration) {
		t.Helper()
		l, err := c.LRange(ctx, r.k.History(task), 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		return l, c.PTTL(ctx, r.k.History(task)).Val()
	}
	check := func(name, task string, want []string) {
		t.Helper()
		got, ttl := read(task)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: history\n%s\nwant\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if len(want) > 0 && (ttl <= 0 || ttl > bound.Age) {
			t.Errorf("%s: TTL %v, want within the age %v", name, ttl, bound.Age)
		}
		if len(want) == 0 && ttl != -2 {
			t.Errorf("%s: the history key is there (TTL %v), want none", name, ttl)
		}
	}

	finishWith(t, r, bound, "new-old", rec("new-old", old))
	check("a new list of one old record", "new-old", nil)

	finishWith(t, r, bound, "new-mixed", rec("new-mixed", old), rec("new-mixed", old+1), rec("new-mixed", young))
	check("a new list of two old records and a young one", "new-mixed", []string{rec("new-mixed", young)})

	many := []string{rec("new-many", young-4), rec("new-many", young-3), rec("new-many", young-2), rec("new-many", young-1), rec("new-many", young)}
	finishWith(t, r, bound, "new-many", many...)
	check("a new list over the count", "new-many", []string{many[4], many[3], many[2]})

	finishWith(t, r, bound, "new-all-old", rec("new-all-old", old), rec("new-all-old", old+1))
	check("a new list of old records only", "new-all-old", nil)

	// An old tail pushed without TTL (an older version's, or a test's).
	c.RPush(ctx, r.k.History("tail"), rec("tail", old))
	finishWith(t, r, bound, "tail", rec("tail", young))
	check("an old tail", "tail", []string{rec("tail", young)})

	// Records without end_ms are judged by fire; a record that is not JSON,
	// or has no time, is dropped from the tail; a task name that spells
	// "end_ms" does not fool the read of the time.
	fireOnly := func(fire int64) string {
		return `{"task":"f","fire":` + strconv.FormatInt(fire, 10) + `,"outcome":"ok"}`
	}
	c.RPush(ctx, r.k.History("f"), fireOnly(young), "not json", `{"task":"f"}`, fireOnly(old))
	finishWith(t, r, bound, "f", rec("f", young))
	check("tails of other shapes", "f", []string{rec("f", young), fireOnly(young)})

	sly := `x","end_ms":` + strconv.FormatInt(now+3600_000, 10) + `,"y":"`
	c.RPush(ctx, r.k.History("sly"), rec(sly, old))
	finishWith(t, r, bound, "sly", rec("sly", young))
	check("a task name spelling end_ms", "sly", []string{rec("sly", young)})
	finishWith(t, r, bound, "sly2", rec(sly, old))
	check("a new list of a task name spelling end_ms", "sly2", nil)

	// cjson's shapes, as the Lua scripts write skip records: any order.
	c.RPush(ctx, r.k.History("lua"), `{"outcome":"skipped","end_ms":`+strconv.FormatInt(old, 10)+`,"fire":`+strconv.FormatInt(young, 10)+`}`)
	finishWith(t, r, bound, "lua", rec("lua", young))
	check("an old end_ms after a young fire", "lua", []string{rec("lua", young)})
}

// commandCalls returns INFO commandstats' calls per command.
func commandCalls(t *testing.T, c *redis.Client) map[string]int64 {
	t.Helper()
	s, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, line := range strings.Split(s, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(kv, "calls="); ok {
				out[strings.TrimPrefix(name, "cmdstat_")], _ = strconv.ParseInt(v, 10, 64)
			}
		}
	}
	return out
}

// TestFinishOfANewHistoryReadsNoTail: the finish of a run whose task has
// no history yet (a task's first fire, every fire of S6) writes the list
// with LPUSH and PEXPIRE alone: the record it pushed is the tail, checked
// in the script without LINDEX; and the batch's own commands are counted
// (each command a script sends costs about as much as a client's).
func TestFinishOfANewHistoryReadsNoTail(t *testing.T) {
	ctx := context.Background()
	c := redistest.Start(t).Client(t)
	r := New(c, "h")
	now := c.Time(ctx).Val().UnixMilli()
	runs := make([]RunFinish, 8)
	for i := range runs {
		task := "t" + strconv.Itoa(i)
		must(t, c.HSet(ctx, r.k.Task(task), "name", task, "runs", 3, "failures", 0, "next_run", now+1000).Err())
		runs[i] = RunFinish{RunID: RunID(task, now), Task: task, LockValue: LockValue("p", now), Outcome: "ok", Record: rec(task, now), LagMS: 2}
	}
	must(t, c.ZAdd(ctx, r.k.Alive(), redis.Z{Score: float64(now + 1000), Member: RunID("t0", now)}).Err())
	must(t, c.ConfigResetStat(ctx).Err())
	if _, err := r.FinishRuns(ctx, testHistory, runs); err != nil {
		t.Fatal(err)
	}
	calls := commandCalls(t, c)
	if calls["lindex"] != 0 || calls["ltrim"] != 0 || calls["rpop"] != 0 {
		t.Errorf("LINDEX %d, LTRIM %d, RPOP %d calls for new histories, want none", calls["lindex"], calls["ltrim"], calls["rpop"])
	}
	if calls["lpush"] != 8 || calls["pexpire"] != 8 {
		t.Errorf("LPUSH %d, PEXPIRE %d calls, want one each per run (8)", calls["lpush"], calls["pexpire"])
	}
	var total int64
	for name, n := range calls {
		if name != "evalsha" && name != "eval" && name != "config|resetstat" && name != "info" {
			total += n
		}
	}
	t.Logf("commands: %v", calls)
	// Per run: HMGET and HSET of the task, LPUSH and PEXPIRE of the
	// history; per batch 13: TIME, TYPE of queue and tasks, SREM of
	// running, ZREM of alive, DEL of the leases, MGET of the locks (no DEL:
	// none held here), and stats:min's HMGET, HDEL and HSET of a new
	// minute, HINCRBY of fires and lag_sum, HSET of lag_max. (Before: a
	// LINDEX per run, TYPE of running, alive and stats:min, two HGET.)
	if want := int64(4*len(runs) + 13); total > want {
		t.Errorf("%d commands for %d runs, want at most %d", total, len(runs), want)
	}
	for _, f := range runs {
		if n := c.LLen(ctx, r.k.History(f.Task)).Val(); n != 1 {
			t.Errorf("%s: history of %d records, want 1", f.Task, n)
		}
	}
}
