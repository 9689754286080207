// Package otelcrontab traces gocrontab runs with OpenTelemetry
// (go.opentelemetry.io/otel), so that the runtime package itself depends on
// no tracing library.
//
// [Middleware] wraps every handler call in a span named "crontab.run
// <task>", with the run's details as attributes:
//
//	crontab.task       the task's name (a job's type name)
//	crontab.job_id     the job's id (jobs only)
//	crontab.attempt    the attempt number, from 1
//	crontab.fire_time  the scheduled instant (RunInfo.Fire: a job's first due time), RFC 3339 with nanoseconds
//	crontab.due_time   when this attempt became due (RunInfo.Due), RFC 3339 with nanoseconds; set when it differs from fire_time
//	crontab.process    the id of the process that runs it
//
// A failed run (an error, or a panic turned into one) sets the span's
// status to Error and records the error. The handler's ctx carries the
// span, so spans it starts are children of the run's.
//
// It is a no-op until the program installs a tracer provider: by default
// the middleware uses the global provider (otel.SetTracerProvider), looked
// up at each run, so a provider installed after the scheduler was built is
// used too. [WithTracerProvider] sets one explicitly.
//
//	s, err := tasks.NewScheduler(rdb, crontab.WithMiddleware(otelcrontab.Middleware()))
package otelcrontab

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	crontab "github.com/gocrontab/crontab/runtime"
)

// ScopeName is the instrumentation scope of the tracer.
const ScopeName = "github.com/gocrontab/crontab/otelcrontab"

// The attribute keys set on every run span.
const (
	AttrTask     = attribute.Key("crontab.task")
	AttrJobID    = attribute.Key("crontab.job_id")
	AttrAttempt  = attribute.Key("crontab.attempt")
	AttrFireTime = attribute.Key("crontab.fire_time")
	// AttrDueTime is when the attempt became due, set when it differs
	// from the scheduled instant (a retry, a redelivery).
	AttrDueTime = attribute.Key("crontab.due_time")
	AttrProcess = attribute.Key("crontab.process")
)

// Option configures Middleware.
type Option func(*config)

type config struct {
	tp trace.TracerProvider
}

// WithTracerProvider sets the provider of the tracer. Nil (the default)
// means the global provider, looked up at each run.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tp = tp }
}

// Middleware returns a crontab.Middleware that runs each handler in a span.
func Middleware(opts ...Option) crontab.Middleware {
	var cfg config
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	return func(ctx context.Context, run crontab.RunInfo, next func(context.Context) error) error {
		tp := cfg.tp
		if tp == nil {
			tp = otel.GetTracerProvider()
		}
		attrs := []attribute.KeyValue{
			AttrTask.String(run.Task),
			AttrAttempt.Int(run.Attempt),
			AttrFireTime.String(run.Fire.UTC().Format(time.RFC3339Nano)),
			AttrProcess.String(run.Process),
		}
		if !run.Due.IsZero() && !run.Due.Equal(run.Fire) {
			attrs = append(attrs, AttrDueTime.String(run.Due.UTC().Format(time.RFC3339Nano)))
		}
		if run.JobID != "" {
			attrs = append(attrs, AttrJobID.String(run.JobID))
		}
		ctx, span := tp.Tracer(ScopeName).Start(ctx, "crontab.run "+run.Task,
			trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(attrs...))
		defer span.End()
		defer func() {
			if p := recover(); p != nil {
				span.SetStatus(codes.Error, fmt.Sprintf("panic: %v", p))
				panic(p)
			}
		}()
		err := next(ctx)
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		return err
	}
}
