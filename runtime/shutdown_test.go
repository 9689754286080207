package runtime

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
)

func TestGracefulShutdownLetsRunsFinishThenCancels(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	quick, stubborn := t.Name()+"/quick", t.Name()+"/stubborn"
	started := make(chan string, 10)
	var mu sync.Mutex
	ended := map[string]error{}
	behave(t, quick, func(ctx context.Context) error {
		started <- quick
		time.Sleep(500 * time.Millisecond) // finishes within the grace period
		mu.Lock()
		ended[quick] = ctx.Err()
		mu.Unlock()
		return nil
	})
	behave(t, stubborn, func(ctx context.Context) error {
		started <- stubborn
		<-ctx.Done() // runs until cancelled
		mu.Lock()
		ended[stubborn] = ctx.Err()
		mu.Unlock()
		return ctx.Err()
	})
	reg := testRegistry(t,
		TaskConfig{Name: quick, Expression: "every:1h", New: probeNew(0)},
		TaskConfig{Name: stubborn, Expression: "every:1h", New: probeNew(1)})
	k := newKeys("crontab")
	_, stop := runScheduler(t, rdb, reg, WithGracePeriod(time.Second))
	now := time.Now().Truncate(time.Millisecond)
	for _, name := range []string{quick, stubborn} {
		rdb.HSet(context.Background(), k.Task(name), "next_run", now.UnixMilli())
		rdb.ZAdd(context.Background(), k.Queue(), redisZ(now.UnixMilli(), name))
	}
	rdb.Publish(context.Background(), k.Wake(), "test")
	<-started
	<-started
	begin := time.Now()
	stop() // returns once Run has returned
	took := time.Since(begin)
	mu.Lock()
	defer mu.Unlock()
	if err, ok := ended[quick]; !ok || err != nil {
		t.Errorf("quick run: ended=%v err=%v; want it to finish uncancelled within the grace period", ok, err)
	}
	if err := ended[stubborn]; !errors.Is(err, context.Canceled) {
		t.Errorf("stubborn run ended with %v, want it cancelled after the grace period", err)
	}
	if took < time.Second {
		t.Errorf("Run returned after %v, before the 1s grace period", took)
	}
	if got := hget(t, rdb, quick, "last_result"); got != "ok" {
		t.Errorf("quick run recorded as %q", got)
	}
	if got := hget(t, rdb, stubborn, "last_result"); got != "failed" {
		t.Errorf("cancelled run recorded as %q, want failed", got)
	}
	if n, _ := rdb.SCard(context.Background(), k.Running()).Result(); n != 0 {
		t.Errorf("%d runs left in the running set after shutdown", n)
	}
	if n, _ := rdb.Exists(context.Background(), k.Master()).Result(); n != 0 {
		t.Error("master lock not released at shutdown")
	}
}

func TestMiddlewareAndSkippedHook(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	name := t.Name()
	type key struct{}
	behave(t, name, func(ctx context.Context) error {
		if ctx.Value(key{}) != "outer>inner" {
			t.Errorf("handler ctx value %v, want the middleware chain's", ctx.Value(key{}))
		}
		return errors.New("inner error")
	})
	var order []string
	var mu sync.Mutex
	mw := func(tag string) Middleware {
		return func(ctx context.Context, run RunInfo, next func(context.Context) error) error {
			mu.Lock()
			order = append(order, tag)
			mu.Unlock()
			v, _ := ctx.Value(key{}).(string)
			if v != "" {
				v += ">"
			}
			err := next(context.WithValue(ctx, key{}, v+tag))
			if tag == "outer" && err != nil {
				return errors.New("wrapped: " + err.Error())
			}
			return err
		}
	}
	failed := make(chan error, 10)
	skipped := make(chan SkipReason, 10)
	reg := testRegistry(t, TaskConfig{Name: name, Expression: "every:1s", New: probeNew(0)})
	runScheduler(t, rdb, reg, WithMiddleware(mw("outer")), WithMiddleware(mw("inner")),
		WithHooks(Hooks{
			Failed:  func(_ context.Context, _ RunInfo, err error) { failed <- err },
			Skipped: func(_ context.Context, _ RunInfo, r SkipReason) { skipped <- r },
		}))
	select {
	case err := <-failed:
		if err.Error() != "wrapped: inner error" {
			t.Errorf("failed with %v, want the outer middleware's error", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("no run")
	}
	mu.Lock()
	if len(order) < 2 || order[0] != "outer" || order[1] != "inner" {
		t.Errorf("middleware order %v", order)
	}
	mu.Unlock()
	rdb.HSet(context.Background(), newKeys("crontab").Task(name), "status", "paused")
	select {
	case r := <-skipped:
		if r != SkipPaused {
			t.Errorf("skip reason %q", r)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("no Skipped call for a paused fire")
	}
}
