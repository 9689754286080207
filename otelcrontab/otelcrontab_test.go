package otelcrontab_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/gocrontab/crontab/otelcrontab"
	crontab "github.com/gocrontab/crontab/runtime"
)

type okTask struct{}

func (okTask) Handle(ctx context.Context) error {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return errors.New("no span in the handler's ctx")
	}
	return nil
}

type failingJob struct{}

func (failingJob) Handle(context.Context) error { return errors.New("boom") }

func TestMiddlewareSpans(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reg := crontab.NewRegistry()
	for _, cfg := range []crontab.TaskConfig{
		{Name: "tick", Expression: "every:1s", New: func() crontab.TaskInterface { return new(okTask) }},
		{Name: "fail", New: func() crontab.TaskInterface { return new(failingJob) }},
	} {
		if err := reg.Add(cfg); err != nil {
			t.Fatal(err)
		}
	}
	s, err := crontab.NewScheduler(rdb, reg, crontab.WithLogger(nil), crontab.WithProcessID("p1"),
		crontab.WithMiddleware(otelcrontab.Middleware(otelcrontab.WithTracerProvider(tp))))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Run(ctx) }()
	defer func() { cancel(); <-done }()
	id, err := crontab.NewClient(rdb, reg).Enqueue(context.Background(), failingJob{})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	var tick, fail sdktrace.ReadOnlySpan
	for (tick == nil || fail == nil) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		for _, sp := range rec.Ended() {
			switch sp.Name() {
			case "crontab.run tick":
				tick = sp
			case "crontab.run fail":
				fail = sp
			}
		}
	}
	if tick == nil || fail == nil {
		t.Fatalf("spans: tick %v fail %v", tick, fail)
	}
	attrs := func(sp sdktrace.ReadOnlySpan) map[string]string {
		m := map[string]string{}
		for _, kv := range sp.Attributes() {
			m[string(kv.Key)] = kv.Value.Emit()
		}
		return m
	}
	ta := attrs(tick)
	if ta["crontab.task"] != "tick" || ta["crontab.attempt"] != "1" || ta["crontab.process"] != "p1" || ta["crontab.fire_time"] == "" {
		t.Errorf("tick attributes %v", ta)
	}
	if _, err := time.Parse(time.RFC3339Nano, ta["crontab.fire_time"]); err != nil {
		t.Errorf("fire_time: %v", err)
	}
	if _, ok := ta["crontab.job_id"]; ok {
		t.Error("a scheduled fire has a job id")
	}
	if tick.Status().Code == codes.Error {
		t.Errorf("tick span status %v", tick.Status())
	}
	fa := attrs(fail)
	if fa["crontab.job_id"] != id || fail.Status().Code != codes.Error || fail.Status().Description != "boom" || len(fail.Events()) == 0 {
		t.Errorf("fail span: attrs %v status %v events %v", fa, fail.Status(), fail.Events())
	}
}

func TestMiddlewarePanicMarksSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	mw := otelcrontab.Middleware(otelcrontab.WithTracerProvider(tp))
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic was swallowed")
			}
		}()
		_ = mw(context.Background(), crontab.RunInfo{Task: "p"}, func(context.Context) error { panic("oops") })
	}()
	spans := rec.Ended()
	if len(spans) != 1 || spans[0].Status().Code != codes.Error || spans[0].Status().Description != "panic: oops" {
		t.Errorf("spans %v", spans)
	}
}

func TestMiddlewareIsANoOpWithoutAProvider(t *testing.T) {
	mw := otelcrontab.Middleware()
	called := false
	err := mw(context.Background(), crontab.RunInfo{Task: "x"}, func(ctx context.Context) error {
		called = true
		if trace.SpanContextFromContext(ctx).IsValid() {
			t.Error("a span was recorded without a provider")
		}
		return nil
	})
	if err != nil || !called {
		t.Errorf("err %v called %v", err, called)
	}
}
