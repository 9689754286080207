package crontabtest_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/crontabtest"
	crontab "github.com/gocrontab/crontab/runtime"
)

// probe is a scheduled task whose handler calls Do; N is state a handler
// may leave in its value.
type probe struct {
	Do func(ctx context.Context) error `json:"-"`
	N  int
}

func (p *probe) Handle(ctx context.Context) error {
	p.N++
	if p.Do == nil {
		return nil
	}
	return p.Do(ctx)
}

// sms is a job type with a payload; do, when set, is called by Handle.
type sms struct {
	To   string `json:"to"`
	Body string `json:"body"`
	do   func(ctx context.Context) error
}

func (s *sms) Handle(ctx context.Context) error {
	if s.do == nil {
		return nil
	}
	return s.do(ctx)
}

// reminder is another job type, with a value receiver.
type reminder struct {
	Note string `json:"note"`
}

func (reminder) Handle(context.Context) error { return nil }

// newRegistry returns a registry of cfgs, the way a generated Register
// builds one.
func newRegistry(t testing.TB, cfgs ...crontab.TaskConfig) *crontab.Registry {
	t.Helper()
	return crontabtest.NewRegistry(t, func(r *crontab.Registry) error {
		for _, c := range cfgs {
			if err := r.Add(c); err != nil {
				return err
			}
		}
		return nil
	})
}

// jobTypes registers sms and reminder as job types.
func jobTypes(t testing.TB) *crontab.Registry {
	t.Helper()
	return newRegistry(t,
		crontab.TaskConfig{Name: "send sms", Timeout: 3 * time.Second, New: func() crontab.TaskInterface { return new(sms) }},
		crontab.TaskConfig{Name: "remind", New: func() crontab.TaskInterface { return new(reminder) }},
	)
}

// seen is what one step of a run (hook, middleware, handler) saw of it.
type seen struct {
	step        string
	arg         crontab.RunInfo // the RunInfo a hook or middleware is given
	info        crontab.RunInfo // crontab.Run(ctx)
	inCtx       bool
	fire        time.Time // crontab.FireTime(ctx)
	task        string    // crontab.TaskName(ctx)
	attempt     int       // crontab.Attempt(ctx)
	hasDeadline bool
	left        time.Duration // until the ctx's deadline
}

func observe(ctx context.Context, step string, arg crontab.RunInfo) seen {
	info, ok := crontab.Run(ctx)
	dl, has := ctx.Deadline()
	return seen{step: step, arg: arg, info: info, inCtx: ok, fire: crontab.FireTime(ctx),
		task: crontab.TaskName(ctx), attempt: crontab.Attempt(ctx), hasDeadline: has, left: time.Until(dl)}
}

// recorder records what runs saw, safe for concurrent use.
type recorder struct {
	mu   sync.Mutex
	seen []seen
}

func (r *recorder) add(s seen) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, s)
}

func (r *recorder) all() []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]seen(nil), r.seen...)
}

// options are a hook and two middlewares that record what they see, and
// a quiet logger.
func (r *recorder) options() []crontab.Option {
	mw := func(name string) crontab.Middleware {
		return func(ctx context.Context, run crontab.RunInfo, next func(context.Context) error) error {
			r.add(observe(ctx, name, run))
			return next(ctx)
		}
	}
	return []crontab.Option{
		crontab.WithLogger(nil),
		crontab.WithHooks(crontab.Hooks{BeforeExecute: func(ctx context.Context, run crontab.RunInfo) {
			r.add(observe(ctx, "hook", run))
		}}),
		crontab.WithMiddleware(mw("outer")),
		crontab.WithMiddleware(mw("inner")),
	}
}

// newClient returns a client with opts, closed at t's cleanup.
func newClient(t testing.TB, opts *redis.Options) *redis.Client {
	c := redis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	return c
}
