package crontabtest_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// fakeTB is a testing.TB that records what a helper reports, the way a
// test of an assertion checks that the assertion fails, and what Example
// functions (which have no *testing.T) give the helpers. Its Fatal methods
// end the calling goroutine, as testing's do; finish runs the cleanups.
type fakeTB struct {
	testing.TB // nil: a method not defined here panics

	example bool // a Fatal prints the message and panics instead
	ctx     context.Context
	cancel  context.CancelFunc

	mu       sync.Mutex
	failed   bool
	msgs     []string
	cleanups []func()
}

func newFakeTB() *fakeTB {
	ctx, cancel := context.WithCancel(context.Background())
	return &fakeTB{ctx: ctx, cancel: cancel}
}

// exampleT is what an Example gives the helpers where a test gives its
// *testing.T. Call finish when the example ends.
func exampleT() *fakeTB {
	f := newFakeTB()
	f.example = true
	return f
}

func (f *fakeTB) Helper()                    {}
func (f *fakeTB) Name() string               { return "fake" }
func (f *fakeTB) Context() context.Context   { return f.ctx }
func (f *fakeTB) Log(args ...any)            { f.record(false, fmt.Sprint(args...)) }
func (f *fakeTB) Logf(s string, args ...any) { f.record(false, fmt.Sprintf(s, args...)) }
func (f *fakeTB) Error(args ...any)          { f.record(true, fmt.Sprint(args...)) }
func (f *fakeTB) Errorf(s string, args ...any) {
	f.record(true, fmt.Sprintf(s, args...))
}
func (f *fakeTB) Fatal(args ...any)            { f.record(true, fmt.Sprint(args...)); f.FailNow() }
func (f *fakeTB) Fatalf(s string, args ...any) { f.record(true, fmt.Sprintf(s, args...)); f.FailNow() }
func (f *fakeTB) Fail()                        { f.record(true, "") }

func (f *fakeTB) FailNow() {
	f.record(true, "")
	if f.example {
		panic("example failed: " + f.output())
	}
	runtime.Goexit()
}

func (f *fakeTB) Failed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed
}

func (f *fakeTB) record(fail bool, msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failed = f.failed || fail
	if msg != "" {
		f.msgs = append(f.msgs, msg)
	}
}

func (f *fakeTB) Cleanup(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups = append(f.cleanups, fn)
}

func (f *fakeTB) TempDir() string {
	dir, err := os.MkdirTemp("", "crontabtest")
	if err != nil {
		f.Fatalf("TempDir: %v", err)
	}
	f.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// finish cancels the context and runs the cleanups, last first.
func (f *fakeTB) finish() {
	f.cancel()
	for {
		f.mu.Lock()
		n := len(f.cleanups)
		if n == 0 {
			f.mu.Unlock()
			return
		}
		fn := f.cleanups[n-1]
		f.cleanups = f.cleanups[:n-1]
		f.mu.Unlock()
		fn()
	}
}

func (f *fakeTB) output() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.msgs, "\n")
}

// run calls fn with a fakeTB on a goroutine of its own (a Fatal ends it),
// runs the fake's cleanups, and returns the fake.
func run(fn func(tb testing.TB)) *fakeTB {
	f := newFakeTB()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	f.finish()
	return f
}

// mustFail runs fn with a fakeTB and fails t unless fn failed it; it
// returns what fn reported.
func mustFail(t *testing.T, fn func(tb testing.TB)) string {
	t.Helper()
	f := run(fn)
	if !f.Failed() {
		t.Fatalf("the helper did not fail the test; it reported %q", f.output())
	}
	return f.output()
}

// wantIn fails t unless out contains every one of subs.
func wantIn(t *testing.T, out string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(out, s) {
			t.Errorf("the message lacks %q:\n%s", s, out)
		}
	}
}
