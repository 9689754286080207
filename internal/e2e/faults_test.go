package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/redistest"
)

// TestSIGSTOPWorkerIsFenced stops the worker that holds the master lock
// with SIGSTOP for 5s, longer than its process TTL (2s) and its master
// lock, while another worker is stopped and continued at random moments
// (50-400ms at a time, to catch it between reading a due task and claiming
// it). After SIGCONT the stale processes must not fire an instant that
// another process fired: the claim's compare-and-set on next_run fences
// them. Every instant fires exactly once.
func TestSIGSTOPWorkerIsFenced(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	ws := map[string]*worker{}
	for i := range 3 {
		id := fmt.Sprintf("stop%d", i)
		ws[id] = startWorker(t, srv, id, "WORKER_TASKS=tick")
	}
	var master string
	deadline := time.Now().Add(10 * time.Second)
	for ws[master] == nil && time.Now().Before(deadline) {
		master, _ = rdb.Get(ctx, "{crontab}:lock:master").Result()
		time.Sleep(20 * time.Millisecond)
	}
	if ws[master] == nil {
		t.Fatalf("master lock holder %q is not a worker", master)
	}
	var jittered string
	for id := range ws {
		if id != master {
			jittered = id
			break
		}
	}
	time.Sleep(2 * time.Second)

	// Stop and continue the second worker at random, until the end.
	done := make(chan struct{})
	jitterDone := make(chan int)
	go func() {
		n := 0
		defer func() { jitterDone <- n }()
		p := ws[jittered].cmd.Process
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Duration(50+rand.IntN(300)) * time.Millisecond):
			}
			_ = p.Signal(syscall.SIGSTOP)
			time.Sleep(time.Duration(50+rand.IntN(350)) * time.Millisecond)
			_ = p.Signal(syscall.SIGCONT)
			n++
		}
	}()

	mp := ws[master].cmd.Process
	_ = mp.Signal(syscall.SIGSTOP)
	stopped := time.Now()
	time.Sleep(4500 * time.Millisecond)
	during, _ := rdb.Get(ctx, "{crontab}:lock:master").Result()
	time.Sleep(500 * time.Millisecond)
	_ = mp.Signal(syscall.SIGCONT)
	resumed := time.Now()
	time.Sleep(5 * time.Second)
	close(done)
	pauses := <-jitterDone
	for _, w := range ws {
		w.stop(t)
	}

	fires := readFires(t, rdb)
	checkEverySecond(t, fires)
	stale := 0
	for _, f := range fires {
		// A fire that started after SIGCONT on the stopped master, of an
		// instant that passed while it was stopped, would be a stale fire.
		if f.process == master && f.startMS > resumed.UnixMilli() && f.fireMS < resumed.UnixMilli()-1000 &&
			f.fireMS > stopped.UnixMilli() {
			stale++
			t.Errorf("the stopped process fired %v, an instant that passed while it was stopped",
				time.UnixMilli(f.fireMS).UTC())
		}
	}
	if during == master || ws[during] == nil {
		t.Errorf("master lock held by %q while %s was stopped, want another worker", during, master)
	}
	t.Logf("master %s stopped 5s (%s took the master lock); %s stopped and continued %d times; %d stale fires",
		master, during, jittered, pauses, stale)
}

// TestKillAllAndRestartAppliesMisfireOnce kills all three workers with
// SIGKILL, waits 7s (past the 5s after which a late instant counts as
// missed) and starts three new ones: the misfire policy of the every:1s
// task (once, the default) applies exactly once: one catch-up run of the
// first missed instant, then the schedule resumes at the next future
// instant, and no instant fires twice.
func TestKillAllAndRestartAppliesMisfireOnce(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	var ws []*worker
	for i := range 3 {
		ws = append(ws, startWorker(t, srv, fmt.Sprintf("gen1-%d", i), "WORKER_TASKS=tick"))
	}
	time.Sleep(3 * time.Second)
	for _, w := range ws {
		w.kill()
	}
	killed := time.Now()
	before := readFires(t, rdb)
	time.Sleep(7 * time.Second)
	restarted := time.Now()
	for i := range 3 {
		startWorker(t, srv, fmt.Sprintf("gen2-%d", i), "WORKER_TASKS=tick")
	}
	time.Sleep(4 * time.Second)
	fires := readFires(t, rdb)
	if len(before) == 0 {
		t.Fatal("no fires before the kill")
	}

	seen := map[int64]int{}
	var catchUps []fire
	for _, f := range fires {
		seen[f.fireMS]++
		if f.startMS-f.fireMS > 5000 {
			catchUps = append(catchUps, f)
		}
	}
	for ms, n := range seen {
		if n > 1 {
			t.Errorf("instant %v fired %d times", time.UnixMilli(ms).UTC(), n)
		}
	}
	last := before[len(before)-1].fireMS
	if len(catchUps) != 1 {
		t.Fatalf("%d catch-up runs after the downtime (%+v), want exactly one", len(catchUps), catchUps)
	}
	if cu := catchUps[0]; cu.fireMS != last+1000 {
		t.Errorf("the catch-up ran instant %v, want the first missed one, %v",
			time.UnixMilli(cu.fireMS).UTC(), time.UnixMilli(last+1000).UTC())
	}
	// After the catch-up, only future instants: none between the catch-up
	// and the restart.
	var after []fire
	for _, f := range fires {
		if f.fireMS > catchUps[0].fireMS {
			after = append(after, f)
			if f.fireMS < restarted.UnixMilli()-1000 {
				t.Errorf("instant %v, missed during the downtime, fired after the catch-up", time.UnixMilli(f.fireMS).UTC())
			}
		}
	}
	if len(after) < 2 {
		t.Errorf("%d fires after the catch-up, want the schedule to resume", len(after))
	}
	skipped := int((restarted.UnixMilli()-last)/1000) - 1
	t.Logf("down %v: 1 catch-up run %v after its instant, %d missed instants dropped by the policy, then %d regular fires; 0 duplicates",
		restarted.Sub(killed).Round(time.Millisecond), time.Duration(catchUps[0].startMS-catchUps[0].fireMS)*time.Millisecond,
		skipped, len(after))
}

// TestACLUserInRedisURL runs workers whose REDIS_URL carries an ACL user
// and password (the default user is disabled) limited to the namespace's
// keys and wake channel and to commands that are not @dangerous (and the
// keys the test tasks record in): they fire. A worker with a wrong password exits at once with the
// server's error.
func TestACLUserInRedisURL(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.WithACLUser("admin", "admin pass"))
	rdb := srv.Client(t)
	// The scheduler's user: the namespace's keys and wake channel (and the
	// keys the test tasks record in), every command but @dangerous ones.
	err := rdb.Do(context.Background(), "ACL", "SETUSER", "crontab", "on", ">s3cret pass", "resetkeys", "~{crontab}:*", "~e2e:*",
		"resetchannels", "&{crontab}:wake", "-@all", "+@all", "-@dangerous").Err()
	if err != nil {
		t.Fatal(err)
	}
	url := "redis://crontab:s3cret%20pass@" + srv.Addr()
	var good []*worker
	for i := range 2 {
		good = append(good, startWorker(t, srv, fmt.Sprintf("acl%d", i), "WORKER_TASKS=tick", "REDIS_URL="+url))
	}
	bad := startWorker(t, srv, "acl-bad", "WORKER_TASKS=tick", "REDIS_URL="+strings.Replace(url, "s3cret", "wrong", 1))
	exitErr, log := waitExit(t, bad)
	if exitErr == nil || !strings.Contains(log, "WRONGPASS") {
		t.Errorf("worker with a wrong password: exit %v, log %q; want a failure naming WRONGPASS", exitErr, log)
	}
	waitFires(t, rdb, 3, 10*time.Second)
	time.Sleep(time.Second) // a few rounds of maintenance
	checkEverySecond(t, readFires(t, rdb))
	for _, w := range good {
		w.stop(t)
		if b, _ := os.ReadFile(w.log); strings.Contains(string(b), "NOPERM") {
			t.Errorf("worker %s needed a permission the ACL does not give:\n%s", w.id, b)
		}
	}
}

// TestTLSRedisURL runs workers with REDIS_URL=rediss://... against a
// redis-server whose certificate a CA made in the test signed, trusted
// through SSL_CERT_FILE: they fire. A worker that does not trust the CA
// exits at once with a certificate error.
func TestTLSRedisURL(t *testing.T) {
	t.Parallel()
	x := redistest.NewTLS(t)
	srv := redistest.Start(t, redistest.WithTLS(x), redistest.WithACLUser("crontab", "s3cret"))
	rdb := srv.Client(t) // the plain port, to read the results
	url := x.URL(srv)
	if !strings.HasPrefix(url, "rediss://") {
		t.Fatalf("URL %s", url)
	}
	for i := range 2 {
		startWorker(t, srv, fmt.Sprintf("tls%d", i), "WORKER_TASKS=tick", "REDIS_URL="+url, "SSL_CERT_FILE="+x.CAFile)
	}
	// Trusting only an unrelated CA file: the server's certificate does
	// not verify.
	other := redistest.NewTLS(t)
	bad := startWorker(t, srv, "tls-bad", "WORKER_TASKS=tick", "REDIS_URL="+url, "SSL_CERT_FILE="+other.CAFile)
	exitErr, log := waitExit(t, bad)
	if exitErr == nil || !strings.Contains(log, "certificate") {
		t.Errorf("worker that does not trust the CA: exit %v, log %q; want a certificate error", exitErr, log)
	}
	waitFires(t, rdb, 3, 10*time.Second)
	checkEverySecond(t, readFires(t, rdb))
}

// waitExit waits up to 15s for w to exit on its own and returns its exit
// error and log.
func waitExit(t *testing.T, w *worker) (error, string) {
	t.Helper()
	select {
	case err := <-w.done:
		w.done <- err // stop at cleanup sees it exited
		b, _ := os.ReadFile(w.log)
		return err, string(b)
	case <-time.After(15 * time.Second):
		t.Fatalf("worker %s did not exit within 15s", w.id)
		return nil, ""
	}
}

// waitFires waits until the tick recorded n fires.
func waitFires(t *testing.T, rdb *redis.Client, n int64, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for rdb.LLen(context.Background(), "e2e:fires").Val() < n {
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d fires within %v", n, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
