package dashboard_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/dashboard"
	"github.com/gocrontab/crontab/internal/redistest"
	crontab "github.com/gocrontab/crontab/runtime"
)

// reads is a go-redis hook counting the hash reads sent: of task hashes,
// whole (HGETALL) or their state fields (HMGET), and the fields HMGET asks
// of other hashes (job data, attempts).
type reads struct {
	hgetall, hmget, otherFields atomic.Int64
}

func (c *reads) count(cmd redis.Cmder) {
	args := cmd.Args()
	if len(args) < 2 {
		return
	}
	key, _ := args[1].(string)
	task := strings.HasPrefix(key, "{crontab}:task:")
	switch {
	case cmd.Name() == "hgetall" && task:
		c.hgetall.Add(1)
	case cmd.Name() == "hmget" && task:
		c.hmget.Add(1)
	case cmd.Name() == "hmget":
		c.otherFields.Add(int64(len(args) - 2))
	}
}

func (c *reads) reset() { c.hgetall.Store(0); c.hmget.Store(0); c.otherFields.Store(0) }

func (c *reads) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *reads) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { c.count(cmd); return next(ctx, cmd) }
}

func (c *reads) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			c.count(cmd)
		}
		return next(ctx, cmds)
	}
}

// BenchmarkAPIAtScale: one GET of /api/tasks and of /api/overview (their
// defaults) with 20000 run-time tasks; hashes/op is the task hashes read
// (HGETALL) per request.
func BenchmarkAPIAtScale(b *testing.B) {
	const n = 20000
	srv := redistest.Start(b)
	ctx := context.Background()
	reg := crontab.NewRegistry()
	if err := reg.Add(crontab.TaskConfig{Name: "send sms", New: func() crontab.TaskInterface { return new(sendSMS) }}); err != nil {
		b.Fatal(err)
	}
	specs := make([]crontab.TaskSpec, n)
	for i := range specs {
		specs[i] = crontab.TaskSpec{Key: fmt.Sprintf("dyn-%05d", i), Type: "send sms", Params: sendSMS{To: "+1555"}, Expression: "every:1h"}
	}
	if _, err := crontab.NewClient(srv.Client(b), reg).SetTasks(ctx, specs); err != nil {
		b.Fatal(err)
	}
	counted := srv.Client(b)
	var cnt reads
	counted.AddHook(&cnt)
	h, err := dashboard.New(dashboard.Config{Inspector: crontab.NewInspector(counted), Token: "t"})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(h)
	defer hs.Close()
	for _, path := range []string{"/api/tasks", "/api/overview"} {
		b.Run(path[5:], func(b *testing.B) {
			cnt.reset()
			for b.Loop() {
				req, _ := http.NewRequest("GET", hs.URL+path, nil)
				req.Header.Set("Authorization", "Bearer t")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("GET %s: %d", path, resp.StatusCode)
				}
			}
			b.ReportMetric(float64(cnt.hgetall.Load())/float64(b.N), "hashes/op")
		})
	}
}
