package gen

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const (
	benchPackages = 200
	benchTypes    = 5 // per package: 1,000 annotated types in all
)

var (
	benchOnce sync.Once
	benchDir  string
	benchTemp bool // benchDir is ours to remove
	benchErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchTemp {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// benchTree writes, once per process, a module of 200 packages with five
// annotated types each (scheduled tasks and job types, value and pointer
// receivers), and a root package for the generated file. Set
// CRONTABGEN_BENCH_DIR to keep it somewhere, for measuring other tools on
// it by hand.
func benchTree(b *testing.B) string {
	b.Helper()
	benchOnce.Do(func() {
		dir := os.Getenv("CRONTABGEN_BENCH_DIR")
		if dir == "" {
			dir, benchErr = os.MkdirTemp("", "crontabgen-bench-")
			if benchErr != nil {
				return
			}
			benchTemp = true
		}
		benchDir = dir
		benchErr = writeBenchTree(dir)
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchDir
}

func writeBenchTree(dir string) error {
	root, err := filepath.Abs("../..")
	if err != nil {
		return err
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		return err
	}
	files := map[string]string{
		"go.mod": "module example.com/bench\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/gocrontab/crontab v0.0.0\n\tgithub.com/redis/go-redis/v9 v9.23.0\n)\n\nreplace github.com/gocrontab/crontab => ./_crontab\n",
		"go.sum": string(sum),
		"doc.go": "// Package bench receives the generated file.\npackage bench\n",
	}
	// A snapshot of the runtime (the only package of this module the tree
	// uses), so that edits to the working tree during a run do not
	// invalidate the build cache of every package; _crontab is not scanned.
	for _, name := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			return err
		}
		files["_crontab/"+name] = string(data)
	}
	srcs, err := filepath.Glob(filepath.Join(root, "runtime", "*"))
	if err != nil {
		return err
	}
	for _, src := range srcs {
		if fi, err := os.Stat(src); err != nil || !fi.Mode().IsRegular() || strings.HasSuffix(src, "_test.go") {
			continue
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		files["_crontab/runtime/"+filepath.Base(src)] = string(data)
	}
	for p := range benchPackages {
		var src strings.Builder
		fmt.Fprintf(&src, "// Package p%03d is synthetic.\npackage p%03d\n\nimport (\n\t\"context\"\n\t\"time\"\n\n\tcrontab \"github.com/gocrontab/crontab/runtime\"\n)\n", p, p)
		for i := range benchTypes {
			name := fmt.Sprintf("Task%03d%d", p, i)
			switch i % 3 {
			case 0:
				fmt.Fprintf(&src, "\n// %s is a scheduled task.\n//\n//crontab:name=\"task %03d-%d\" expression=\"cron:%d */2 * * *\" tz=Europe/Berlin timeout=90s\ntype %s struct{ last time.Time }\n\nfunc (t *%s) Handle(ctx context.Context) error { t.last = time.Now(); return ctx.Err() }\n", name, p, i, i, name, name)
			case 1:
				fmt.Fprintf(&src, "\n// %s is a scheduled task.\n//\n//crontab:name=\"task %03d-%d\" expression=every:%dm concurrent=true\ntype %s struct{}\n\nfunc (%s) Handle(context.Context) error { return nil }\n", name, p, i, i+1, name, name)
			default:
				fmt.Fprintf(&src, "\n// %s is a job type.\n//\n//crontab:name=\"job %03d-%d\" retries=3\ntype %s struct {\n\tID    int64             `json:\"id\"`\n\tTags  []string          `json:\"tags\"`\n\tMeta  map[string]string `json:\"meta\"`\n\tAfter *time.Time        `json:\"after\"`\n}\n\nfunc (j *%s) Handle(context.Context) error { return nil }\n", name, p, i, name, name)
			}
			fmt.Fprintf(&src, "\nvar _ crontab.TaskInterface = (*%s)(nil)\n", name)
		}
		files[fmt.Sprintf("p%03d/tasks.go", p)] = src.String()
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func benchEnv() []string {
	return append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
}

// BenchmarkGenerate1000 times a warm run of the generator (load, check,
// render; no write) on 200 packages holding 1,000 annotated types. Compare
// with BenchmarkGoVet1000, go vet ./... on the same tree, also warm.
func BenchmarkGenerate1000(b *testing.B) {
	dir := benchTree(b)
	cfg := Config{Dir: dir, Args: []string{"./..."}, Output: "crontab_gen.go", Env: benchEnv()}
	res, err := Generate(cfg) // warm the build cache
	if err != nil {
		b.Fatal(err)
	}
	if len(res.Tasks) != benchPackages*benchTypes {
		b.Fatalf("%d tasks, want %d", len(res.Tasks), benchPackages*benchTypes)
	}
	for b.Loop() {
		if _, err := Generate(cfg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGoVet1000 times a warm go vet ./... on the tree of
// BenchmarkGenerate1000, with the generated file in place.
func BenchmarkGoVet1000(b *testing.B) {
	dir := benchTree(b)
	res, err := Generate(Config{Dir: dir, Args: []string{"./..."}, Output: "crontab_gen.go", Env: benchEnv()})
	if err != nil {
		b.Fatal(err)
	}
	if err := WriteFile(res.Output, res.Source); err != nil {
		b.Fatal(err)
	}
	vet := func() {
		cmd := exec.Command("go", "vet", "./...")
		cmd.Dir = dir
		cmd.Env = benchEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go vet: %v\n%s", err, out)
		}
	}
	vet() // warm
	for b.Loop() {
		vet()
	}
}
