package runtime

import (
	"archive/zip"
	"context"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/redistest"
)

// ianaZones lists the zones of Go's own zoneinfo.zip (every IANA zone and
// link name), which every machine that builds Go has.
func ianaZones(t testing.TB) []string {
	t.Helper()
	z, err := zip.OpenReader(filepath.Join(goruntime.GOROOT(), "lib", "time", "zoneinfo.zip"))
	if err != nil {
		t.Fatalf("the zone list: %v", err)
	}
	defer z.Close()
	var out []string
	for _, f := range z.File {
		if f.FileInfo().IsDir() || !strings.Contains(f.Name, "/") || strings.HasPrefix(f.Name, "Etc/") {
			continue
		}
		if _, err := time.LoadLocation(f.Name); err == nil {
			out = append(out, f.Name)
		}
	}
	if len(out) < 300 {
		t.Fatalf("only %d zones in zoneinfo.zip", len(out))
	}
	return out
}

// isNext0900 reports whether t is the first 09:00 in loc strictly after
// some instant of [from, to] (the instants a task may have been written
// at): 09:00 on its local day, after from, within a day and an hour of
// to, and no 09:00 local between to and t.
func isNext0900(t, from, to time.Time, loc *time.Location) bool {
	lt := t.In(loc)
	if lt.Hour() != 9 || lt.Minute() != 0 || lt.Second() != 0 || !t.After(from) || t.Sub(to) > 25*time.Hour {
		return false
	}
	prev := time.Date(lt.Year(), lt.Month(), lt.Day()-1, 9, 0, 0, 0, loc)
	return !prev.After(to)
}

// TestDailyInEveryZone: a daily:09:00 run-time task in each IANA zone is
// registered at the next 09:00 of its zone, fires, and is moved on to the
// following 09:00 of its zone; the scheduler parses each expression and
// zone once (its cache holds a pair per zone, not per task).
func TestDailyInEveryZone(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	k := newKeys("crontab")
	zones := ianaZones(t)
	reg := testRegistry(t, TaskConfig{Name: "report", New: probeNew(0)})
	c := NewClient(rdb, reg)
	const perZone = 3
	start := time.Now()
	for _, z := range zones {
		for i := range perZone {
			key := z + "#" + strconv.Itoa(i)
			if err := c.SetTask(ctx, TaskSpec{Key: key, Type: "report", Expression: "daily:09:00", TZ: z}); err != nil {
				t.Fatalf("set task %s: %v", key, err)
			}
		}
	}
	end := time.Now()
	readNext := func(key string) time.Time {
		v, err := rdb.HGet(ctx, k.Task(key), "next_run").Int64()
		if err != nil {
			t.Fatalf("%s: next_run: %v", key, err)
		}
		return time.UnixMilli(v)
	}
	for _, z := range zones {
		loc, _ := time.LoadLocation(z)
		if got := readNext(z + "#0"); !isNext0900(got, start.Add(-time.Second), end, loc) {
			t.Errorf("%s: registered at %v (%v local), want the next 09:00 of the zone", z, got, got.In(loc))
		}
	}
	// Make them all due at one instant, as a catch-up would see them, and
	// let a scheduler fire them.
	at := time.Now().Add(1500 * time.Millisecond).Truncate(time.Second)
	pipe := rdb.Pipeline()
	for _, z := range zones {
		for i := range perZone {
			key := z + "#" + strconv.Itoa(i)
			pipe.HSet(ctx, k.Task(key), "next_run", at.UnixMilli())
			pipe.ZAdd(ctx, k.Queue(), redis.Z{Score: float64(at.UnixMilli()), Member: key})
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	s, _ := runScheduler(t, rdb, reg)
	waitFor(t, 30*time.Second, "every task fired", func() bool {
		for _, z := range zones {
			for i := range perZone {
				if rdb.HGet(ctx, k.Task(z+"#"+strconv.Itoa(i)), "runs").Val() != "1" {
					return false
				}
			}
		}
		return true
	})
	for _, z := range zones {
		loc, _ := time.LoadLocation(z)
		for i := range perZone {
			key := z + "#" + strconv.Itoa(i)
			if got := readNext(key); !isNext0900(got, at, at, loc) {
				t.Errorf("%s: after the fire at %v next_run is %v (%v local), want the next 09:00 of the zone", key, at, got, got.In(loc))
			}
		}
	}
	if n := s.cache.Len(); n > len(zones) {
		t.Errorf("the scheduler's schedule cache holds %d pairs for %d zones x %d tasks; want one per zone", n, len(zones), perZone)
	}
}
