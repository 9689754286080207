package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/redistest"
)

// TestUnregisteredNamesNeverResolveToCode writes tasks and jobs that name
// code in every way but the registered name (a Go type path, the class of
// a registered type, a package function, the name in another case or with
// spaces) and checks that none of them ever runs: a name in Redis reaches
// code only through a registered type. The class field of a task hash is
// informational: a task whose type is registered runs that type, whatever
// its class says.
func TestUnregisteredNamesNeverResolveToCode(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	k := newKeys("crontab")
	probe := t.Name() + "/probe"
	var probes fireLog
	reg := testRegistry(t,
		TaskConfig{Name: probe, Expression: "every:1h", New: probeNew(0)},
		TaskConfig{Name: "sms", New: func() TaskInterface { return new(smsJob) }})
	smsClass, _ := reg.Lookup("sms")
	probeClass, _ := reg.Lookup(probe)
	to := unique(t)

	now := time.Now().UnixMilli()
	names := []string{
		smsClass.Class,                                   // the Go type path of a registered type
		probeClass.Class,                                 // the class of the registered task type
		"os/exec.Command",                                // a package function
		"os/exec.Cmd",                                    // a type of another package
		"main.main",                                      //
		"SMS", "Sms", " sms", "sms ", "sms\x00", "sms\n", // the name, almost
		"runtime.smsJob", "*runtime.smsJob", "smsJob", "probeTask",
		"", "?",
	}
	for i, n := range names {
		member := fmt.Sprintf("foreign-%d", i)
		behave(t, member, func(ctx context.Context) error { probes.add(ctx); return nil })
		must(t, rdb.HSet(ctx, k.Task(member), "name", member, "class", probeClass.Class, "type", n,
			"expression", "every:1s", "tz", "UTC", "next_run", now-100, "status", "active", "source", sourceDynamic).Err())
		must(t, rdb.SAdd(ctx, k.Tasks(), member).Err())
		must(t, rdb.ZAdd(ctx, k.Queue(), redis.Z{Score: float64(now - 100), Member: member}).Err())
		env, _ := json.Marshal(map[string]any{"task": n, "payload": map[string]string{"to": to, "text": "foreign " + n}})
		must(t, rdb.HSet(ctx, k.JobData(), member, string(env)).Err())
		must(t, rdb.ZAdd(ctx, k.Jobs(), redis.Z{Score: float64(now - 100), Member: member}).Err())
	}
	// The registered name runs, whatever class the hash names and whatever
	// extra fields the envelope carries.
	behave(t, "registered-type", func(ctx context.Context) error { probes.add(ctx); return nil })
	must(t, rdb.HSet(ctx, k.Task("registered-type"), "name", "registered-type", "class", "os/exec.Cmd", "type", probe,
		"expression", "every:1s", "tz", "UTC", "next_run", now-100, "status", "active", "source", sourceDynamic).Err())
	must(t, rdb.ZAdd(ctx, k.Queue(), redis.Z{Score: float64(now - 100), Member: "registered-type"}).Err())
	must(t, rdb.HSet(ctx, k.JobData(), "registered-job",
		`{"task":"sms","class":"os/exec.Cmd","type":"os/exec.Command","payload":{"to":"`+to+`","text":"registered"}}`).Err())
	must(t, rdb.ZAdd(ctx, k.Jobs(), redis.Z{Score: float64(now - 100), Member: "registered-job"}).Err())

	logs, logger := newLogCapture()
	runScheduler(t, rdb, reg, WithLogger(logger), WithMaxSleep(100*time.Millisecond))
	waitFor(t, 10*time.Second, "the registered task and job", func() bool {
		return len(smsTexts(to)["registered"]) == 1 && len(probes.snapshot()) > 0
	})
	time.Sleep(1500 * time.Millisecond)

	for _, f := range probes.snapshot() {
		if f.task != "registered-type" {
			t.Errorf("task %s, whose type names no registered type, ran", f.task)
		}
	}
	for text := range smsTexts(to) {
		if text != "registered" {
			t.Errorf("job %q, whose task names no registered type, ran", text)
		}
	}
	// Nothing is dropped: the jobs wait for a process that knows them, and
	// the reasons are logged.
	for i, n := range names {
		member := fmt.Sprintf("foreign-%d", i)
		if ok, _ := rdb.HExists(ctx, k.JobData(), member).Result(); !ok && n != "" {
			t.Errorf("job naming %q was dropped", n)
		}
	}
	logs.expectLog(t, "task type not registered in this process", "os/exec.Cmd")
	logs.expectLog(t, "job type not registered in this process", "os/exec.Command")
	logs.expectLog(t, "bad job envelope") // the empty task name
}

// TestOversizedRawJobRuns enqueues, as a producer in another language
// would, a job whose payload (2 MiB) is over the Client's limit (1 MiB by
// default, WithMaxPayload): the Client refuses such a payload, but the
// scheduler runs what is in Redis, with the payload intact. The limit
// protects Redis from producers that use the Client; a job already stored
// runs.
func TestOversizedRawJobRuns(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	k := newKeys("crontab")
	reg := testRegistry(t, TaskConfig{Name: "sms", New: func() TaskInterface { return new(smsJob) }})
	to := unique(t)
	text := strings.Repeat("x", 2<<20)
	payload := fmt.Sprintf(`{"to":%q,"text":%q}`, to, text)
	_, err := NewClient(rdb, reg).EnqueueRaw(ctx, "sms", json.RawMessage(payload))
	if err == nil || !strings.Contains(err.Error(), "WithMaxPayload") {
		t.Fatalf("EnqueueRaw of a %d-byte payload: %v, want the WithMaxPayload limit", len(payload), err)
	}
	must(t, rdb.HSet(ctx, k.JobData(), "big", `{"task":"sms","payload":`+payload+`}`).Err())
	must(t, rdb.ZAdd(ctx, k.Jobs(), redis.Z{Score: float64(time.Now().UnixMilli()), Member: "big"}).Err())
	runScheduler(t, rdb, reg)
	waitFor(t, 10*time.Second, "the oversized job", func() bool { return len(smsRuns(to)) == 1 })
	if got := smsRuns(to)[0].job.Text; got != text {
		t.Errorf("payload arrived with %d bytes of text, want %d", len(got), len(text))
	}
}
