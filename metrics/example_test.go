package metrics_test

import (
	"context"
	"log"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/metrics"
	crontab "github.com/gocrontab/crontab/runtime"
)

// Instrument a scheduler and serve its metrics and the namespace's queue
// depths at /metrics.
func Example() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	reg := crontab.NewRegistry() // in an application: the generated tasks.Register

	m := metrics.New()
	promReg := prometheus.NewRegistry()
	promReg.MustRegister(m, metrics.NewCollector(crontab.NewInspector(rdb)))

	s, err := crontab.NewScheduler(rdb, reg, m.Options()...)
	if err != nil {
		log.Fatal(err)
	}
	http.Handle("/metrics", metrics.Handler(promReg))
	go func() { log.Fatal(http.ListenAndServe("127.0.0.1:9090", nil)) }()
	_ = s // s.Run(ctx)
}

// Keep hooks of your own: wrap them, and add the middleware and listener.
func ExampleMetrics_Hooks() {
	m := metrics.New()
	opts := []crontab.Option{
		crontab.WithMiddleware(m.Middleware()),
		crontab.WithListener(m.Listener()),
		crontab.WithHooks(m.Hooks(crontab.Hooks{
			Skipped: func(ctx context.Context, run crontab.RunInfo, reason crontab.SkipReason) {
				log.Printf("%s skipped: %s", run.Task, reason)
			},
		})),
	}
	_ = opts // crontab.NewScheduler(rdb, reg, opts...)
}
