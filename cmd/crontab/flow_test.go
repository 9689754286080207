package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/gocrontab/crontab/internal/redistest"
	crontab "github.com/gocrontab/crontab/runtime"
)

// show prints a task's cap only when set, in text and in -o json (a
// scheduled task has no rate or priority yet).
func TestShowFlowControl(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	reg := crontab.NewRegistry()
	if err := reg.Add(crontab.TaskConfig{Name: "mail", New: func() crontab.TaskInterface { return new(mailJob) }}); err != nil {
		t.Fatal(err)
	}
	client := crontab.NewClient(rdb, reg)
	for _, spec := range []crontab.TaskSpec{
		{Key: "capped", Type: "mail", Expression: "every:1h", Concurrent: true,
			MaxRunning: 50},
		{Key: "plain", Type: "mail", Expression: "every:1h"},
	} {
		if err := client.SetTask(ctx, spec); err != nil {
			t.Fatal(err)
		}
	}
	e := &env{rdb: rdb, url: srv.URL()}

	show := e.ok(t, "show", "capped")
	for _, re := range []string{
		`(?m)^concurrent:\s+yes\nmax running:\s+50\nmisfire:`,
	} {
		if !regexp.MustCompile(re).MatchString(show) {
			t.Errorf("show capped: no match for %s in\n%s", re, show)
		}
	}
	plain := e.ok(t, "show", "plain")
	for _, row := range []string{"max running:", "rate:", "priority:"} {
		if strings.Contains(plain, row) {
			t.Errorf("show plain has %q:\n%s", row, plain)
		}
	}

	var one map[string]any
	if err := json.Unmarshal([]byte(e.ok(t, "-o", "json", "show", "capped")), &one); err != nil {
		t.Fatal(err)
	}
	if one["max_running"] != 50.0 || one["rate"] != nil || one["priority"] != nil {
		t.Errorf("show -o json capped: %v", one)
	}
	one = nil
	if err := json.Unmarshal([]byte(e.ok(t, "-o", "json", "show", "plain")), &one); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"max_running", "rate", "priority"} {
		if _, ok := one[k]; ok {
			t.Errorf("show -o json plain has %q: %v", k, one)
		}
	}
}
