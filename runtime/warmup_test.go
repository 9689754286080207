package runtime

import (
	"bufio"
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
	"github.com/gocrontab/crontab/internal/redistest"
)

// monitorLine is one command Redis ran, as MONITOR shows it.
type monitorLine struct {
	at      time.Time
	fromLua bool
	args    string // the quoted command and arguments
}

// monitor records what srv runs until the test ends.
func monitor(t *testing.T, srv *redistest.Server) func() []monitorLine {
	t.Helper()
	conn, err := net.Dial(srv.Network(), srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.Write([]byte("MONITOR\r\n")); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	if l, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(l, "+OK") {
		t.Fatalf("MONITOR: %q, %v", l, err)
	}
	var mu sync.Mutex
	var lines []monitorLine
	go func() {
		for {
			l, err := r.ReadString('\n')
			if err != nil {
				return
			}
			// +1700000000.123456 [0 127.0.0.1:5555] "evalsha" "..." ...
			ts, rest, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(l), "+"), " ")
			_, args, ok2 := strings.Cut(rest, "] ")
			sec, err := strconv.ParseFloat(ts, 64)
			if !ok || !ok2 || err != nil {
				continue
			}
			mu.Lock()
			lines = append(lines, monitorLine{at: time.UnixMicro(int64(sec * 1e6)), fromLua: strings.HasPrefix(rest, "[0 lua]"), args: args})
			mu.Unlock()
		}
	}()
	return func() []monitorLine {
		mu.Lock()
		defer mu.Unlock()
		return append([]monitorLine(nil), lines...)
	}
}

// Before the instant of fires it prepared, the dispatch loop touches Redis
// (an EXISTS on the queue, warmLead before), so the claim at the instant
// finds the server and a connection awake. Checked by order, not by a
// latency: in what Redis ran, each claim but the first (which may come
// before anything was prepared) follows its own warm-up, sent after the
// claim before it. How long the warm-up precedes the claim is the
// benchmarks' business (crontabbench's calibration).
// claimFiresHash is the claim script's SHA1, as MONITOR shows it.
var claimFiresHash = rdb.ClaimFiresHash()

func TestWarmUpBeforePreparedInstant(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	seen := monitor(t, srv)
	name := t.Name()
	behave(t, name, func(context.Context) error { return nil })
	reg := testRegistry(t, TaskConfig{Name: name, Expression: "every:1s", New: probeNew(0)})
	queue := strconv.Quote(newKeys("crontab").Queue())
	claim := `"evalsha" "` + claimFiresHash + `"`
	isClaim := func(l monitorLine) bool { return !l.fromLua && strings.HasPrefix(l.args, claim) }
	isWarm := func(l monitorLine) bool { return !l.fromLua && l.args == `"exists" `+queue }
	count := func(lines []monitorLine) (n int) {
		for _, l := range lines {
			if isClaim(l) {
				n++
			}
		}
		return n
	}
	_, stop := runScheduler(t, rdb, reg)
	waitFor(t, 15*time.Second, "four claims", func() bool { return count(seen()) >= 4 })
	stop()

	claims, warmed := 0, 0
	warm := false // a warm-up since the last claim
	var trace strings.Builder
	for _, l := range seen() {
		if isWarm(l) || isClaim(l) {
			trace.WriteString(l.at.Format("15:04:05.000000 ") + l.args[:min(len(l.args), 60)] + "\n")
		}
		switch {
		case isWarm(l):
			warm = true
		case isClaim(l):
			claims++
			if warm {
				warmed++
			}
			warm = false
		}
	}
	// Only claims prepared ahead are warmed: under load (make test runs
	// packages side by side) the dispatcher may wake too late to prepare
	// an instant and claims it cold. Without the warm-up none is warmed.
	if claims < 4 || warmed < (claims-1)/2 {
		t.Errorf("%d claims, %d of them after a warm-up sent since the claim before; want at least half of those after the first:\n%s",
			claims, warmed, trace.String())
	}
}
