package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoEngineDependency keeps the generator off the scheduler: it
// validates directives with runtime/registry and runtime/schedule, which
// need neither Redis nor the runtime package, so a change that makes it
// link either fails here.
func TestNoEngineDependency(t *testing.T) {
	const self = "github.com/gocrontab/crontab/cmd/crontabgen"
	const redis = "github.com/redis/go-redis/"
	out, err := exec.Command("go", "list", "-deps", self).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", self, err, out)
	}
	deps := strings.Fields(string(out))
	var bad []string
	seen := make(map[string]bool)
	for _, p := range deps {
		seen[p] = true
		switch {
		case p == "github.com/gocrontab/crontab/runtime":
			bad = append(bad, p)
		case strings.HasPrefix(p, redis) && !strings.Contains(p[len(redis):], "/"):
			bad = append(bad, p) // go-redis's root package, any major version; its subpackages come with it
		}
	}
	if len(bad) > 0 {
		t.Errorf("crontabgen depends on %s; import runtime/registry and runtime/schedule, not the engine", strings.Join(bad, ", "))
	}
	for _, want := range []string{"github.com/gocrontab/crontab/runtime/registry", "github.com/gocrontab/crontab/runtime/schedule", self} {
		if !seen[want] {
			t.Errorf("go list -deps %s lacks %s; its output:\n%s", self, want, out)
		}
	}
}
