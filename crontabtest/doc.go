// Package crontabtest is the test kit for code that uses gocrontab: run a
// handler the way the scheduler would, without Redis; start a private
// redis-server; run a scheduler until a condition holds; assert which jobs
// are enqueued; fire a schedule's next instants now.
//
// # Running a handler
//
// A [Runner] runs the handlers of a registry's tasks through the
// scheduler's own run path, with a Scheduler's options (middleware, hooks,
// listeners), and without Redis. The handler's ctx is the one a real run
// gets: crontab.FireTime, TaskName, Attempt and Run return the run's
// details, its deadline is the task's registered Timeout (an overrun fails
// with "timeout 10s exceeded: ..."), a panic is an error, and the
// middleware and the BeforeExecute hook see what they see in production:
//
//	func TestSendSMS(t *testing.T) {
//		reg := crontabtest.NewRegistry(t, sms.Register) // crontabgen's Register
//		r := crontabtest.NewRunner(t, reg, crontab.WithMiddleware(tracing))
//		task := &sms.SendSMS{To: "+44 20 7946 0000", Gateway: fakeGateway}
//		err := r.Run(t.Context(), t, task, crontabtest.WithAttempt(2))
//		...
//	}
//
// [Runner.FireNext] fires a scheduled task's next instants now, one after
// another, each with its instant as FireTime: a daily report's next three
// days run in a millisecond.
//
// # Redis, schedulers and enqueued jobs
//
// [StartRedis] starts the installed redis-server for one test (on a free
// loopback port, its files in t.TempDir, stopped at cleanup) and returns a
// client; without redis-server the test fails with how to install it.
// [RunScheduler] runs a Scheduler until the test ends (or its stop is
// called) and [RunUntil] until a condition holds; both wait for the
// scheduler to be ready and fail the test when Run fails.
//
// [RequireEnqueued], [RequireEnqueuedMany] and [RequireNotEnqueued] assert
// what a producer enqueued, through the Inspector, with the payload
// decoded into the job's Go type; a failure lists the jobs that are there:
//
//	func TestSignupSendsSMS(t *testing.T) {
//		rdb := crontabtest.StartRedis(t)
//		reg := crontabtest.NewRegistry(t, sms.Register)
//		signup := app.NewSignup(crontab.NewClient(rdb, reg))
//		signup.Do(t.Context(), "+44 20 7946 0000")
//		job := crontabtest.RequireEnqueued[*sms.SendSMS](t.Context(), t, rdb, reg)
//		if job.Value.To != "+44 20 7946 0000" { ... }
//	}
//
// Failing helpers call t.Fatalf (t.Errorf from a scheduler's stop), so
// they run on the test's goroutine; every message starts with
// "crontabtest: " and the helper's name.
package crontabtest
