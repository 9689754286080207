package otelcrontab_test

import (
	"context"

	"github.com/redis/go-redis/v9"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/gocrontab/crontab/otelcrontab"
	crontab "github.com/gocrontab/crontab/runtime"
)

// Install a tracer provider (here the SDK's, with your exporter of choice)
// and add the middleware: every run is a span.
func Example() {
	tp := sdktrace.NewTracerProvider( /* sdktrace.WithBatcher(exporter) */ )
	defer tp.Shutdown(context.Background())

	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	reg := crontab.NewRegistry() // in an application: the generated tasks.NewScheduler
	s, err := crontab.NewScheduler(rdb, reg,
		crontab.WithMiddleware(otelcrontab.Middleware(otelcrontab.WithTracerProvider(tp))))
	if err != nil {
		panic(err)
	}
	_ = s // s.Run(ctx)
}
