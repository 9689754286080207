package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runIn runs the command in dir and returns its exit status and output.
func runIn(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(dir, args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestUsage(t *testing.T) {
	dir := t.TempDir()
	code, stdout, _ := runIn(t, dir, "-h")
	if code != 0 || !strings.HasPrefix(stdout, "usage: crontabgen [-o FILE] [-check] [-tags LIST] [-v] [DIR|PATTERN ...]") {
		t.Errorf("-h: exit %d, stdout:\n%s", code, stdout)
	}
	for _, args := range [][]string{
		{"-bogus"},
		{"-o"},
		{"-o", "out.txt", "."},
		{"-o", "x_test.go", "."},
		{"-o", "missing/dir/crontab_gen.go", "."},
		{"example.com/not/a/dir"}, // no directory for the default -o
		{"", "."},
	} {
		code, _, stderr := runIn(t, dir, args...)
		if code != 2 || stderr == "" {
			t.Errorf("%q: exit %d, stderr %q; want 2 and a message", args, code, stderr)
		}
	}
}

func TestCheck(t *testing.T) {
	dir := copyCase(t, "basic")
	out := filepath.Join(dir, "crontab_gen.go")

	code, _, stderr := runIn(t, dir, "-check")
	if code != 1 || stderr != "crontab_gen.go is missing: run go generate\n" {
		t.Errorf("missing: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("-check wrote the file")
	}

	if code, _, stderr := runIn(t, dir); code != 0 {
		t.Fatalf("generate: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := runIn(t, dir, "-check"); code != 0 || stderr != "" {
		t.Errorf("fresh: exit %d, stderr %q", code, stderr)
	}

	// A task added after generating makes the file stale.
	add := []byte("package basic\n\nimport \"context\"\n\n//crontab:name=added expression=every:1m\ntype Added struct{}\n\nfunc (Added) Handle(context.Context) error { return nil }\n")
	if err := os.WriteFile(filepath.Join(dir, "added.go"), add, 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(out)
	code, _, stderr = runIn(t, dir, "-check")
	if code != 1 || stderr != "crontab_gen.go is stale: run go generate\n" {
		t.Errorf("stale: exit %d, stderr %q", code, stderr)
	}
	if after, _ := os.ReadFile(out); !bytes.Equal(before, after) {
		t.Error("-check changed the file")
	}

}

// TestErrorKeepsOldFile checks that a failed run leaves the old file as it
// was, and that a good run replaces it keeping its mode.
func TestErrorKeepsOldFile(t *testing.T) {
	dir := copyCase(t, "basic")
	out := filepath.Join(dir, "crontab_gen.go")
	old := []byte("// old content\npackage basic\n")
	if err := os.WriteFile(out, old, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chmod(out, 0o600) // whatever the umask
	bad := []byte("package basic\n\n//crontab:name=bad expression=every:nope\ntype Bad struct{}\n")
	if err := os.WriteFile(filepath.Join(dir, "bad.go"), bad, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runIn(t, dir)
	if code != 1 || !strings.Contains(stderr, "bad.go:3:") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, old) {
		t.Errorf("old file changed on error:\n%s", got)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".crontab_gen.go.*")); len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}

	os.Remove(filepath.Join(dir, "bad.go"))
	if code, _, stderr := runIn(t, dir); code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the old file's 0600", fi.Mode().Perm())
	}
	got, _ := os.ReadFile(out)
	want, _ := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "basic", "want", "crontab_gen.go"))
	if !bytes.Equal(got, want) {
		t.Errorf("regenerated file differs from the golden")
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".crontab_gen.go.*")); len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

// TestDeterministic generates the same module in two directories, twice
// each: the bytes must not change (no time, path or map order in them).
func TestDeterministic(t *testing.T) {
	var outs [][]byte
	for range 2 {
		dir := copyCase(t, "multipkg")
		for range 2 {
			if code, _, stderr := runIn(t, dir, "-o", "my-registry/crontab_gen.go", "./gamma", "./beta", "./alpha", "./cmd"); code != 0 {
				t.Fatalf("exit %d, stderr:\n%s", code, stderr)
			}
			data, err := os.ReadFile(filepath.Join(dir, "my-registry", "crontab_gen.go"))
			if err != nil {
				t.Fatal(err)
			}
			outs = append(outs, data)
		}
	}
	for i := 1; i < len(outs); i++ {
		if !bytes.Equal(outs[0], outs[i]) {
			t.Fatalf("run %d differs from run 0:\n%s\n---\n%s", i, outs[i], outs[0])
		}
	}
}

// TestPatterns checks that a Go pattern works like the directory it names.
func TestPatterns(t *testing.T) {
	dir := copyCase(t, "options")
	want, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "options", "want", "crontab_gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-tags", "extra"},
		{"-tags", "extra", "."},
		{"-tags", "extra", "./..."},
		{"-tags", "extra", "-o", "crontab_gen.go", "example.com/options/..."},
		{"-tags", "extra", "-o", "crontab_gen.go", dir},
	} {
		os.Remove(filepath.Join(dir, "crontab_gen.go"))
		if code, _, stderr := runIn(t, dir, args...); code != 0 {
			t.Fatalf("%q: exit %d, stderr:\n%s", args, code, stderr)
		}
		got, _ := os.ReadFile(filepath.Join(dir, "crontab_gen.go"))
		if !bytes.Equal(got, want) {
			t.Errorf("%q: output differs from the golden:\n%s", args, got)
		}
	}
}

// TestREADME checks the README's crontabgen section against the fixtures:
// the annotated types are testdata/readme's, every line of the generated
// excerpt is in its golden, and every error shown is in some case's
// errors.txt.
func TestREADME(t *testing.T) {
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	start := bytes.Index(readme, []byte("<!-- crontabgen -->"))
	end := bytes.Index(readme, []byte("<!-- end crontabgen -->"))
	if start < 0 || end < start {
		t.Fatal("README.md: no crontabgen section")
	}
	blocks := codeBlocks(string(readme[start:end]))
	if len(blocks) != 3 {
		t.Fatalf("README section has %d code blocks, want 3 (source, generated, errors)", len(blocks))
	}
	read := func(rel string) string {
		data, err := os.ReadFile(filepath.Join(root, "testdata", rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	contains := func(block, in, what string) {
		for _, line := range strings.Split(block, "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "// ...") || strings.Contains(line, "{ ... }") ||
				strings.HasPrefix(line, "func New") {
				continue
			}
			if !strings.Contains(in, line) {
				t.Errorf("README line %q is not in %s", line, what)
			}
		}
	}
	contains(blocks[0], read("readme/tasks/tasks.go"), "testdata/readme/tasks/tasks.go")
	contains(blocks[1], read("readme/want/crontab_gen.go"), "testdata/readme/want/crontab_gen.go")
	var all strings.Builder
	files, _ := filepath.Glob(filepath.Join(root, "testdata", "*", "want", "errors.txt"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		all.Write(data)
	}
	contains(blocks[2], all.String(), "any testdata/*/want/errors.txt")
}

// codeBlocks returns the contents of the fenced code blocks of a Markdown
// text.
func codeBlocks(md string) []string {
	var blocks []string
	var cur *strings.Builder
	for _, line := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(line, "```") && cur == nil:
			cur = new(strings.Builder)
		case strings.HasPrefix(line, "```"):
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		}
	}
	return blocks
}

// TestGoGenerateAndGoTool runs the generator the two documented ways, in
// a fixture module: go generate on its //go:generate go run line, and go
// tool once the module declares crontabgen as a tool.
func TestGoGenerateAndGoTool(t *testing.T) {
	if testing.Short() {
		t.Skip("builds crontabgen twice")
	}
	dir := copyCase(t, "basic")
	goCmd(t, dir, "generate", "./...")
	got, err := os.ReadFile(filepath.Join(dir, "crontab_gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "basic", "want", "crontab_gen.go"))
	if !bytes.Equal(got, want) {
		t.Errorf("go generate: output differs from the golden:\n%s", got)
	}

	goCmd(t, dir, "get", "-tool", "github.com/gocrontab/crontab/cmd/crontabgen")
	goCmd(t, dir, "tool", "crontabgen", "-check")
	os.WriteFile(filepath.Join(dir, "crontab_gen.go"), []byte("package basic\n"), 0o644)
	cmd := exec.Command("go", "tool", "crontabgen", "-check")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "crontab_gen.go is stale: run go generate") {
		t.Errorf("go tool crontabgen -check on a stale file: %v\n%s", err, out)
	}
}
