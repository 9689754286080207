package crontabtest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gocrontab/crontab/crontabtest"
	crontab "github.com/gocrontab/crontab/runtime"
)

// SendSMS is a job type, as an application declares it:
//
//	//crontab:name="send sms" timeout=10s retries=3
type SendSMS struct {
	To      string  `json:"to"`
	Body    string  `json:"body"`
	Gateway Gateway `json:"-"` // a dependency
}

// Gateway sends text messages.
type Gateway interface {
	Send(ctx context.Context, to, body string) error
}

// Handle sends the message, naming the attempt.
func (s *SendSMS) Handle(ctx context.Context) error {
	return s.Gateway.Send(ctx, s.To, fmt.Sprintf("%s (attempt %d)", s.Body, crontab.Attempt(ctx)))
}

// DailyReport is a scheduled task:
//
//	//crontab:name="daily report" expression="daily:03:00" tz="Europe/London"
type DailyReport struct {
	Out *[]string `json:"-"`
}

// Handle reports on the day before the fire.
func (r *DailyReport) Handle(ctx context.Context) error {
	day := crontab.FireTime(ctx).In(london).AddDate(0, 0, -1)
	*r.Out = append(*r.Out, "report for "+day.Format("Mon 2 Jan"))
	return nil
}

var london, _ = time.LoadLocation("Europe/London")

// Register is what crontabgen writes for the two types.
func Register(r *crontab.Registry) error {
	return errors.Join(
		r.Add(crontab.TaskConfig{Name: "send sms", Timeout: 10 * time.Second, Retries: 3,
			New: func() crontab.TaskInterface { return new(SendSMS) }}),
		r.Add(crontab.TaskConfig{Name: "daily report", Expression: "daily:03:00", TZ: "Europe/London",
			New: func() crontab.TaskInterface { return new(DailyReport) }}),
	)
}

// printer is a Gateway that prints; it fails on an empty body.
type printer struct{}

func (printer) Send(ctx context.Context, to, body string) error {
	if strings.HasPrefix(body, " ") {
		return errors.New("empty body")
	}
	_, hasDeadline := ctx.Deadline()
	fmt.Printf("to %s: %s (deadline: %v)\n", to, body, hasDeadline)
	return nil
}

// Run a job's handler as a scheduler would, with the middleware of the
// application, without Redis.
func ExampleRunner_Run() {
	t := exampleT() // in a test: its *testing.T
	defer t.finish()
	ctx := context.Background()

	logRuns := func(ctx context.Context, run crontab.RunInfo, next func(context.Context) error) error {
		err := next(ctx)
		fmt.Printf("middleware: %s attempt %d: %v\n", run.Task, run.Attempt, err)
		return err
	}
	reg := crontabtest.NewRegistry(t, Register)
	r := crontabtest.NewRunner(t, reg, crontab.WithMiddleware(logRuns), crontab.WithLogger(nil))

	_ = r.Run(ctx, t, &SendSMS{To: "+44 20 7946 0000", Body: "hello", Gateway: printer{}})
	_ = r.Run(ctx, t, &SendSMS{To: "+44 20 7946 0000", Gateway: printer{}}, crontabtest.WithAttempt(2))

	// Output:
	// to +44 20 7946 0000: hello (attempt 1) (deadline: true)
	// middleware: send sms attempt 1: <nil>
	// middleware: send sms attempt 2: empty body
}

// A handler that overruns its task's timeout, and one that panics, fail
// as they do under a scheduler.
func ExampleRunner_Run_failures() {
	t := exampleT()
	defer t.finish()
	reg := crontabtest.NewRegistry(t, func(r *crontab.Registry) error {
		return r.Add(crontab.TaskConfig{Name: "slow", Timeout: 20 * time.Millisecond,
			New: func() crontab.TaskInterface { return new(slow) }})
	})
	r := crontabtest.NewRunner(t, reg, crontab.WithLogger(nil))

	fmt.Println(r.Run(context.Background(), t, &slow{wait: true}))
	err := r.Run(context.Background(), t, &slow{})
	fmt.Println(strings.SplitN(err.Error(), "\n", 2)[0])

	// Output:
	// timeout 20ms exceeded: context deadline exceeded
	// panic: not waiting
}

type slow struct{ wait bool }

func (s *slow) Handle(ctx context.Context) error {
	if !s.wait {
		panic("not waiting")
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(5 * time.Second):
		return errors.New("no deadline came")
	}
}

// Fire a schedule's next instants now: three days of a daily report,
// across the change to summer time.
func ExampleRunner_FireNext() {
	t := exampleT()
	defer t.finish()
	reg := crontabtest.NewRegistry(t, Register)
	r := crontabtest.NewRunner(t, reg, crontab.WithLogger(nil))

	var out []string
	from := time.Date(2026, 3, 28, 12, 0, 0, 0, london)
	for _, res := range r.FireNext(context.Background(), t, &DailyReport{Out: &out}, 3, from) {
		fmt.Println(res.Fire.In(london).Format(time.DateTime+" MST"), res.OK)
	}
	fmt.Println(strings.Join(out, "; "))

	// Output:
	// 2026-03-29 03:00:00 BST true
	// 2026-03-30 03:00:00 BST true
	// 2026-03-31 03:00:00 BST true
	// report for Sat 28 Mar; report for Sun 29 Mar; report for Mon 30 Mar
}

// A private, empty Redis for one test.
func ExampleStartRedis() {
	t := exampleT()
	defer t.finish() // stops the server
	ctx := context.Background()

	rdb := crontabtest.StartRedis(t)
	rdb.Set(ctx, "greeting", "hello", 0)
	fmt.Println(rdb.Get(ctx, "greeting").Val())

	// Output:
	// hello
}

// Run a scheduler on the test's Redis until a task has fired.
func ExampleRunUntil() {
	t := exampleT()
	defer t.finish()
	ctx := context.Background()
	rdb := crontabtest.StartRedis(t)

	var fired atomic.Int32
	reg := crontabtest.NewRegistry(t, func(r *crontab.Registry) error {
		return r.Add(crontab.TaskConfig{Name: "tick", Expression: "every:1s",
			New: func() crontab.TaskInterface { return &tick{fired: &fired} }})
	})
	s, err := crontab.NewScheduler(rdb, reg, crontab.WithLogger(nil))
	if err != nil {
		fmt.Println(err)
		return
	}
	crontabtest.RunUntil(ctx, t, s, 5*time.Second, func() bool { return fired.Load() > 0 })
	fmt.Println("fired; the scheduler has stopped")

	// Output:
	// fired; the scheduler has stopped
}

type tick struct{ fired *atomic.Int32 }

func (k *tick) Handle(context.Context) error { k.fired.Add(1); return nil }

// Assert what a producer enqueued.
func ExampleRequireEnqueued() {
	t := exampleT()
	defer t.finish()
	ctx := context.Background()
	rdb := crontabtest.StartRedis(t)
	reg := crontabtest.NewRegistry(t, Register)

	// The code under test enqueues a message.
	client := crontab.NewClient(rdb, reg)
	if _, err := client.Enqueue(ctx, &SendSMS{To: "+44 20 7946 0000", Body: "welcome"}, crontab.In(time.Minute)); err != nil {
		fmt.Println(err)
		return
	}

	job := crontabtest.RequireEnqueued[*SendSMS](ctx, t, rdb, reg,
		crontabtest.DueBetween(time.Now(), time.Now().Add(2*time.Minute)))
	fmt.Println(job.Task, job.Value.To, job.Value.Body)
	crontabtest.RequireNotEnqueued[*SendSMS](ctx, t, rdb, reg,
		crontabtest.Match(func(s *SendSMS) bool { return s.Body == "goodbye" }))

	// Output:
	// send sms +44 20 7946 0000 welcome
}
