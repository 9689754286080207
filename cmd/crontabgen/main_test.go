package main

import (
	"bufio"
	"bytes"
	"flag"
	"go/format"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the goldens under testdata/ (a generated golden only once it builds and vets)")

func TestMain(m *testing.M) {
	flag.Parse()
	// The fixture modules resolve offline, from the module cache, and may
	// need their go.mod completed as the root module's requirements change.
	os.Setenv("GOFLAGS", strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod"))
	os.Setenv("GOPROXY", "off")
	os.Setenv("GOWORK", "off")
	os.Exit(m.Run())
}

// repoRoot is the root of the crontab module.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// copyCase copies testdata/<name> without its want directory to a
// temporary directory, points its replace directive at the module root,
// and gives it the root's go.sum.
func copyCase(t testing.TB, name string) string {
	t.Helper()
	root := repoRoot(t)
	src := filepath.Join(root, "testdata", name)
	dst := filepath.Join(t.TempDir(), name)
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if rel == "want" {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		switch rel {
		case "go.mod":
			data = bytes.ReplaceAll(data, []byte("=> ../.."), []byte("=> "+root))
		case "go.sum":
			if data, err = os.ReadFile(filepath.Join(root, "go.sum")); err != nil {
				return err
			}
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// generateLine matches a case's //go:generate line in either documented
// form: go run of the package, or go tool of the module's declared tool.
var generateLine = regexp.MustCompile(`(?m)^//go:generate go (?:run github\.com/gocrontab/crontab/cmd/crontabgen|tool crontabgen)(.*)$`)

// findGenerate returns the directory of the case's //go:generate line and
// the crontabgen arguments on it.
func findGenerate(t testing.TB, dir string) (string, []string) {
	t.Helper()
	var genDir string
	var args []string
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || genDir != "" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if m := generateLine.FindSubmatch(data); m != nil {
			genDir = filepath.Dir(path)
			args = strings.Fields(string(m[1]))
		}
		return nil
	})
	if genDir == "" {
		t.Fatalf("%s: no //go:generate line for crontabgen", dir)
	}
	return genDir, args
}

// generated returns the paths of every crontab_gen.go below dir.
func generated(t testing.TB, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "crontab_gen.go" {
			out = append(out, path)
		}
		return err
	})
	return out
}

func goCmd(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

// TestGolden runs crontabgen on every case under testdata/, as its
// //go:generate line says, and compares the result with want/: the
// generated file (which must also build and vet in the case's module) or
// the errors. The e2e case's program is run too, and its output compared
// with want/output.txt.
func TestGolden(t *testing.T) {
	root := repoRoot(t)
	entries, err := os.ReadDir(filepath.Join(root, "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		if _, err := os.Stat(filepath.Join(root, "testdata", name, "go.mod")); err != nil {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testCase(t, name)
		})
	}
}

func testCase(t *testing.T, name string) {
	root := repoRoot(t)
	caseDir := filepath.Join(root, "testdata", name)
	want := filepath.Join(caseDir, "want")
	dir := copyCase(t, name)
	genDir, args := findGenerate(t, dir)

	var stdout, stderr bytes.Buffer
	code := run(genDir, args, &stdout, &stderr)
	files := generated(t, dir)
	if *update {
		defer refreshModule(t, dir, caseDir)
	}

	if code != 0 {
		if code != 1 {
			t.Fatalf("exit status %d, want 0 or 1; stderr:\n%s", code, stderr.String())
		}
		if len(files) != 0 {
			t.Errorf("wrote %v despite errors", files)
		}
		checkErrorLines(t, stderr.String())
		golden(t, filepath.Join(want, "errors.txt"), stderr.Bytes(), filepath.Join(want, "crontab_gen.go"))
		return
	}
	if stderr.Len() > 0 {
		t.Errorf("stderr on success:\n%s", stderr.String())
	}
	if len(files) != 1 {
		t.Fatalf("generated files: %v, want one", files)
	}
	src, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	checkGenerated(t, src)
	// The golden must build and vet in its module before it is accepted,
	// with the build tags it was generated with.
	vet := []string{"vet"}
	for i, a := range args {
		if a == "-tags" && i+1 < len(args) {
			vet = append(vet, "-tags", args[i+1])
		}
	}
	goCmd(t, dir, append(vet, "./...")...)
	golden(t, filepath.Join(want, "crontab_gen.go"), src, filepath.Join(want, "errors.txt"))

	if _, err := os.Stat(filepath.Join(caseDir, "cmd", "show")); err == nil {
		out := goCmd(t, dir, "run", "./cmd/show")
		golden(t, filepath.Join(want, "output.txt"), []byte(out), "")
	}
}

// checkGenerated checks what every generated file must be.
func checkGenerated(t *testing.T, src []byte) {
	t.Helper()
	if !bytes.HasPrefix(src, []byte("// Code generated by crontabgen. DO NOT EDIT.\n")) {
		t.Errorf("generated file does not start with the header:\n%s", src)
	}
	formatted, err := format.Source(src)
	if err != nil {
		t.Fatalf("generated file does not parse: %v", err)
	}
	if !bytes.Equal(formatted, src) {
		t.Errorf("generated file is not gofmt'd")
	}
	for _, bad := range []string{os.TempDir(), repoRoot(t)} {
		if bytes.Contains(src, []byte(bad)) {
			t.Errorf("generated file contains the path %s", bad)
		}
	}
}

var errorLine = regexp.MustCompile(`^(crontabgen: .+|[^\s:]+\.go:\d+:\d+: .+)$`)

// checkErrorLines checks that every error is "file:line:col: message"
// with a relative file name, or "crontabgen: message", and that they are
// sorted.
func checkErrorLines(t *testing.T, stderr string) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(stderr))
	for sc.Scan() {
		if line := sc.Text(); !errorLine.MatchString(line) || filepath.IsAbs(line) {
			t.Errorf("malformed error line %q", line)
		}
	}
}

// golden compares got with the file at path, or with -update writes it
// (and removes the other kind of golden, if any).
func golden(t *testing.T, path string, got []byte, other string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		if other != "" {
			os.Remove(other)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)\ngot:\n%s", err, got)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// refreshModule copies back the go.mod the go command completed and the
// root's go.sum, so the fixture also works in place.
func refreshModule(t *testing.T, dir, caseDir string) {
	root := repoRoot(t)
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mod = bytes.ReplaceAll(mod, []byte("=> "+root), []byte("=> ../.."))
	if err := os.WriteFile(filepath.Join(caseDir, "go.mod"), mod, 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(caseDir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
}
