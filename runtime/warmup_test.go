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
// finds the server and a connection awake.
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
	_, stop := runScheduler(t, rdb, reg)
	time.Sleep(3500 * time.Millisecond)
	stop()

	queue := strconv.Quote(newKeys("crontab").Queue())
	claim := `"evalsha" "` + claimFiresHash + `"`
	var warm []time.Time
	claims, warmed := 0, 0
	var trace strings.Builder
	for _, l := range seen() {
		if !l.fromLua && (strings.HasPrefix(l.args, `"exists"`) || strings.HasPrefix(l.args, claim)) {
			trace.WriteString(l.at.Format("15:04:05.000000 ") + l.args[:min(len(l.args), 60)] + "\n")
		}
		switch {
		case l.fromLua:
		case l.args == `"exists" `+queue:
			warm = append(warm, l.at)
		case strings.HasPrefix(l.args, claim):
			claims++
			for _, w := range warm {
				if d := l.at.Sub(w); d > 0 && d < 3*warmLead {
					warmed++
					break
				}
			}
		}
	}
	// The first instant may be claimed before it was prepared.
	if claims < 3 || warmed < claims-1 {
		t.Errorf("%d claims, %d of them with a warm-up in the %v before; want 3 or more, all but one warmed:\n%s",
			claims, warmed, 3*warmLead, trace.String())
	}
}
