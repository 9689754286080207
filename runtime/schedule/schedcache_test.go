package schedule

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestCache(t *testing.T) {
	var c Cache
	s1, err := c.Get("daily:03:00", "Europe/London")
	if err != nil {
		t.Fatal(err)
	}
	s2, err := c.Get("daily:03:00", "Europe/London")
	if err != nil || s1 != s2 {
		t.Fatalf("second Get = %v, %v; want the cached schedule %v", s2, err, s1)
	}
	from := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
	if got, want := s1.Next(from), time.Date(2024, 6, 1, 2, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("Next(%v) = %v, want %v", from, got, want)
	}
	if s, err := c.Get("every:30s", ""); err != nil || Describe(s) != "every 30s" {
		t.Errorf(`Get("every:30s", "") = %v, %v`, s, err)
	}
	for _, tc := range []struct{ expr, tz, prefix string }{
		{"every:0", "UTC", `expression "every:0": `},
		{"every:1m", "Nowhere/Land", `tz "Nowhere/Land": `},
	} {
		for range 2 { // the error is remembered too
			s, err := c.Get(tc.expr, tc.tz)
			if s != nil || err == nil || !strings.HasPrefix(err.Error(), tc.prefix) {
				t.Errorf("Get(%q, %q) = %v, %v; want an error starting %q", tc.expr, tc.tz, s, err, tc.prefix)
			}
		}
	}
}

func TestCacheStartsOver(t *testing.T) {
	var c Cache
	for i := range maxCachedSchedules + 1 {
		if _, err := c.Get("at:"+strconv.Itoa(i+1), "UTC"); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.m); n != 1 {
		t.Errorf("after %d pairs the cache holds %d; want 1 (it starts over)", maxCachedSchedules+1, n)
	}
}
