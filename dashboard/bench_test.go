package dashboard_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/dashboard"
	"github.com/gocrontab/crontab/internal/redistest"
	crontab "github.com/gocrontab/crontab/runtime"
)

// countReads adds to c a counter of the hash reads it sends: "hgetall"
// and "hmget" of task hashes (whole, or their state fields), and "fields",
// the fields HMGET asks of other hashes (job data, attempts).
func countReads(c redis.UniversalClient) *redistest.Counter {
	return redistest.CountCommands(c, func(cmd redis.Cmder) (string, int64) {
		args := cmd.Args()
		if len(args) < 2 {
			return "", 0
		}
		key, _ := args[1].(string)
		task := strings.HasPrefix(key, "{crontab}:task:")
		switch {
		case cmd.Name() == "hgetall" && task:
			return "hgetall", 1
		case cmd.Name() == "hmget" && task:
			return "hmget", 1
		case cmd.Name() == "hmget":
			return "fields", int64(len(args) - 2)
		}
		return "", 0
	})
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
	cnt := countReads(counted)
	h, err := dashboard.New(dashboard.Config{Inspector: crontab.NewInspector(counted), Token: "t"})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(h)
	defer hs.Close()
	for _, path := range []string{"/api/tasks", "/api/overview"} {
		b.Run(path[5:], func(b *testing.B) {
			cnt.Reset()
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
			b.ReportMetric(float64(cnt.Count("hgetall"))/float64(b.N), "hashes/op")
		})
	}
}
