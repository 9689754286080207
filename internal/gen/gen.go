// Package gen is the engine of cmd/crontabgen: it loads Go packages, finds
// the types annotated with //crontab: directives, checks them and renders
// the registration file. The command's doc comment is the manual; this
// package adds nothing to it but an API for tests and tools.
package gen

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gocrontab/crontab/runtime/schedule"
)

// DefaultOutput is the name of the generated file when no -o is given.
const DefaultOutput = "crontab_gen.go"

// BuildTag is the build tag the generated file is excluded by, and the load
// always sets: an old generated file never takes part in loading the
// packages that replace it.
const BuildTag = "crontabgen"

// Import paths the generated file uses.
const (
	runtimePath = "github.com/gocrontab/crontab/runtime"
	redisPath   = "github.com/redis/go-redis/v9"
)

// registryPath is the package runtime takes TaskInterface from.
const registryPath = "github.com/gocrontab/crontab/runtime/registry"

// Config is one run of the generator.
type Config struct {
	// Dir is the directory relative paths (arguments, Output) are resolved
	// against and the go command runs in. Empty means the current directory.
	Dir string
	// Args are directories (scanned recursively) or package patterns.
	// Empty means ".".
	Args []string
	// Output is the file to generate. Empty means DefaultOutput in the
	// first argument's directory.
	Output string
	// Tags are extra build tags, as given to go build -tags.
	Tags []string
	// Env is the environment of the go command; nil means os.Environ().
	Env []string
}

// UsageError is a wrong command line: a bad argument or flag value. The
// command exits 2 on it.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// Result is what Generate produces.
type Result struct {
	// Output is the absolute path of the file to write.
	Output string
	// Source is its complete, gofmt'd content.
	Source []byte
	// Tasks are the annotated types, in the order of the generated file
	// (package path, then type name).
	Tasks []Task
}

// Task is one annotated type as the generated file registers it.
type Task struct {
	Name       string // the directive's name
	Class      string // "pkgpath.Type"
	PkgPath    string
	TypeName   string
	Expression string // empty for a job type
	TZ         string // the zone of the schedule: the directive's tz, default UTC
	// Description is the schedule in words, schedule.Describe of the
	// expression parsed in TZ (what crontabgen -v prints); empty for a job
	// type.
	Description string
}

// Generate loads and checks the packages cfg names and renders the
// registration file. It writes nothing. A wrong input is reported as an
// ErrorList holding every problem; a wrong command line as a *UsageError;
// any other error (the go command failing) as is.
func Generate(cfg Config) (*Result, error) {
	g, err := newGenerator(cfg)
	if err != nil {
		return nil, err
	}
	if err := g.load(); err != nil {
		return nil, err
	}
	if g.out.path == "" { // reported: nothing can be checked against it
		g.errs.sort()
		return nil, g.errs
	}
	g.find()
	g.parseDirectives()
	// Rendering needs only the directives: it runs while the rest is
	// checked, and its result is dropped if anything is wrong.
	type rendering struct {
		src []byte
		err error
	}
	var rendered chan rendering
	if len(g.errs) == 0 {
		rendered = make(chan rendering, 1)
		tasks := slices.Clone(g.tasks)
		sortForOutput(tasks)
		go func() {
			src, err := g.render(tasks)
			rendered <- rendering{src, err}
		}()
	}
	g.check()
	if rendered == nil || len(g.errs) > 0 {
		if rendered != nil {
			<-rendered
		}
		g.errs.sort()
		return nil, g.errs
	}
	r := <-rendered
	if r.err != nil {
		return nil, r.err
	}
	src := r.src
	res := &Result{Output: g.out.file, Source: src}
	tasks := slices.Clone(g.tasks)
	sortForOutput(tasks)
	for _, t := range tasks {
		rt := Task{
			Name:       t.dir.Name,
			Class:      t.class(),
			PkgPath:    t.pkg.PkgPath,
			TypeName:   t.typeName(),
			Expression: t.dir.Expression,
			TZ:         t.dir.TZ,
		}
		if rt.TZ == "" {
			rt.TZ = "UTC"
		}
		if rt.Expression != "" {
			// Checked above: the zone loads and the expression parses.
			loc, err := g.location(rt.TZ)
			if err != nil {
				return nil, fmt.Errorf("task %q: tz %q: %w", rt.Name, rt.TZ, err)
			}
			sched, err := schedule.Parse(rt.Expression, loc)
			if err != nil {
				return nil, fmt.Errorf("task %q: expression %q: %w", rt.Name, rt.Expression, err)
			}
			rt.Description = schedule.Describe(sched)
		}
		res.Tasks = append(res.Tasks, rt)
	}
	return res, nil
}

// Stale reports whether the file at res.Output differs from res.Source or
// is missing.
func Stale(res *Result) (stale, missing bool, err error) {
	old, err := os.ReadFile(res.Output)
	if errors.Is(err, os.ErrNotExist) {
		return true, true, nil
	}
	if err != nil {
		return false, false, err
	}
	return !bytes.Equal(old, res.Source), false, nil
}

// WriteFile writes data to path atomically: to a temporary file in the same
// directory, then renamed over path. The file keeps the mode of the file it
// replaces, or gets 0644. A file that already holds data is not touched. On
// error path is left as it was.
func WriteFile(path string, data []byte) (err error) {
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s: not a regular file", path)
		}
		mode = fi.Mode().Perm()
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
			return nil
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(mode); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// resolve returns the go list patterns for cfg.Args and the default output
// directory (the first argument's directory, or "" when it has none).
func resolveArgs(dir string, args []string) (patterns []string, firstDir string, err error) {
	if len(args) == 0 {
		args = []string{"."}
	}
	for i, arg := range args {
		if arg == "" {
			return nil, "", usagef("empty argument")
		}
		var d string // the argument's directory, if it names one
		pat := arg
		switch {
		case strings.Contains(arg, "..."):
			if isFilePattern(arg) && strings.HasSuffix(arg, "/...") && !strings.Contains(strings.TrimSuffix(arg, "/..."), "...") {
				d = strings.TrimSuffix(arg, "/...")
			}
		case isDir(abs(dir, arg)):
			d = arg
			pat = dirPattern(arg)
		}
		if i == 0 {
			firstDir = d
		}
		patterns = append(patterns, pat)
	}
	return patterns, firstDir, nil
}

// dirPattern turns a directory argument into a recursive go list pattern.
// The go command then skips vendor, testdata, and directories whose name
// starts with "." or "_", and does not cross into nested modules.
func dirPattern(arg string) string {
	if filepath.IsAbs(arg) {
		return filepath.ToSlash(filepath.Join(arg, "...")) // Join cleans
	}
	c := filepath.ToSlash(filepath.Clean(arg))
	if c == "." {
		return "./..."
	}
	if c != ".." && !strings.HasPrefix(c, "../") {
		c = "./" + c
	}
	return c + "/..."
}

// isFilePattern reports whether a package pattern is a file system path.
func isFilePattern(p string) bool {
	return p == "." || p == ".." || strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") || filepath.IsAbs(p)
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

func abs(dir, path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(dir, path)
}
