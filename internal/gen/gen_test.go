package gen

import (
	"errors"
	"fmt"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/dave/jennifer/jen"
)

func TestDisplayPath(t *testing.T) {
	for _, tc := range []struct{ base, file, want string }{
		{"/a/b", "/a/b/c.go", "c.go"},
		{"/a/b", "/a/b/d/c.go", filepath.Join("d", "c.go")},
		{"/a/b", "/a/c.go", "/a/c.go"},
		{"/a/b", "/a/bc/c.go", "/a/bc/c.go"},
		{"/a/b", "/x/..b/c.go", "/x/..b/c.go"},
		{"", "/a/c.go", "/a/c.go"},
		{"/a", "rel.go", "rel.go"},
	} {
		if got := DisplayPath(tc.base, tc.file); got != tc.want {
			t.Errorf("DisplayPath(%q, %q) = %q, want %q", tc.base, tc.file, got, tc.want)
		}
	}
}

func TestParsePos(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want token.Position
	}{
		{"", token.Position{}},
		{"-", token.Position{}},
		{"/a/b.go:3:5", token.Position{Filename: "/a/b.go", Line: 3, Column: 5}},
		{"/a/b.go:3", token.Position{Filename: "/a/b.go", Line: 3}},
		{"/a/b.go", token.Position{Filename: "/a/b.go"}},
		{`C:\a\b.go:3:5`, token.Position{Filename: `C:\a\b.go`, Line: 3, Column: 5}},
	} {
		if got := parsePos(tc.in); got != tc.want {
			t.Errorf("parsePos(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestErrorListSortAndFormat(t *testing.T) {
	l := ErrorList{
		{Pos: token.Position{Filename: "/m/b.go", Line: 1, Column: 1}, Msg: "b"},
		{Pos: token.Position{Filename: "/m/a.go", Line: 10, Column: 2}, Msg: "a10"},
		{Pos: token.Position{Filename: "/m/a.go", Line: 2, Column: 7}, Msg: "a2"},
		{Msg: "no position"},
		{Pos: token.Position{Filename: "/m/a.go", Line: 2, Column: 7}, Msg: "a2"},
	}
	l.sort()
	want := "no position\na.go:2:7: a2\na.go:10:2: a10\nb.go:1:1: b"
	if got := l.Format("/m"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestDirPattern(t *testing.T) {
	for in, want := range map[string]string{
		".":        "./...",
		"./":       "./...",
		"tasks":    "./tasks/...",
		"./tasks/": "./tasks/...",
		"..":       "../...",
		"../x":     "../x/...",
		"/abs/dir": "/abs/dir/...",
	} {
		if got := dirPattern(in); got != want {
			t.Errorf("dirPattern(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestResolveArgs(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "tasks"), 0o755)
	for _, tc := range []struct {
		args     []string
		patterns []string
		first    string
	}{
		{nil, []string{"./..."}, "."},
		{[]string{"tasks", "./..."}, []string{"./tasks/...", "./..."}, "tasks"},
		{[]string{"./tasks/..."}, []string{"./tasks/..."}, "./tasks"},
		{[]string{"./..."}, []string{"./..."}, "."},
		{[]string{"example.com/x/..."}, []string{"example.com/x/..."}, ""},
		{[]string{"example.com/x"}, []string{"example.com/x"}, ""},
		{[]string{"./missing"}, []string{"./missing"}, ""},
	} {
		patterns, first, err := resolveArgs(dir, tc.args)
		if err != nil || !slices.Equal(patterns, tc.patterns) || first != tc.first {
			t.Errorf("resolveArgs(%q) = %q, %q, %v; want %q, %q", tc.args, patterns, first, err, tc.patterns, tc.first)
		}
	}
}

func TestSanitizePackageName(t *testing.T) {
	for in, want := range map[string]string{
		"tasks":       "tasks",
		"my-registry": "my_registry",
		"MyTasks":     "mytasks",
		"v2":          "v2",
		"2fa":         "_2fa",
		"type":        "pkg",
		"---":         "pkg",
		"a.b":         "a_b",
		"été":         "été",
	} {
		if got := sanitizePackageName(in); got != want {
			t.Errorf("sanitizePackageName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDurationCode(t *testing.T) {
	for d, want := range map[time.Duration]string{
		300 * time.Second:       "300 * time.Second",
		90 * time.Second:        "90 * time.Second",
		2 * time.Hour:           "7200 * time.Second",
		1500 * time.Millisecond: "1500 * time.Millisecond",
		time.Millisecond:        "1 * time.Millisecond",
		1001 * time.Microsecond: "1001 * time.Microsecond",
		1234567:                 "time.Duration(1234567)",
		24 * time.Hour:          "86400 * time.Second",
	} {
		f := jen.NewFile("p")
		f.Var().Id("d").Op("=").Add(durationCode(d))
		got := fmt.Sprintf("%#v", f)
		if want := "package p\n\nimport \"time\"\n\nvar d = " + want + "\n"; got != want {
			t.Errorf("%v: got\n%s\nwant\n%s", d, got, want)
		}
	}
}

func TestImportBase(t *testing.T) {
	for in, want := range map[string]string{
		"example.com/app/tasks":        "tasks",
		"github.com/redis/go-redis/v9": "go-redis",
		"example.com/v2":               "example.com",
		"tasks":                        "tasks",
		"example.com/vx":               "vx",
	} {
		if got := importBase(in); got != want {
			t.Errorf("importBase(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestInternalVisible(t *testing.T) {
	for _, tc := range []struct {
		path, importer string
		want           bool
	}{
		{"a.com/x/internal/y", "a.com/x", true},
		{"a.com/x/internal/y", "a.com/x/z", true},
		{"a.com/x/internal/y", "a.com/xy", false},
		{"a.com/x/internal/y", "a.com/w", false},
		{"a.com/x/internal", "a.com/x/q", true},
		{"a.com/x/internal", "a.com/q", false},
		{"a.com/x/y", "b.com", true},
	} {
		if got := internalVisible(tc.path, tc.importer); got != tc.want {
			t.Errorf("internalVisible(%q, %q) = %v", tc.path, tc.importer, got)
		}
	}
}

func TestGoflagsTags(t *testing.T) {
	t.Setenv("GOFLAGS", "-mod=mod -tags=a,b")
	if got := goflagsTags(nil); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("from the environment: %q", got)
	}
	if got := goflagsTags([]string{"GOFLAGS=--tags=c -x"}); !slices.Equal(got, []string{"c"}) {
		t.Errorf("from Env: %q", got)
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.go")

	if err := WriteFile(path, []byte("one")); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v, want 0644", fi.Mode().Perm())
	}

	os.Chmod(path, 0o640)
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	os.Chtimes(path, old, old)
	if err := WriteFile(path, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); !fi.ModTime().Equal(old) {
		t.Error("same content: the file was rewritten")
	}
	if err := WriteFile(path, []byte("two")); err != nil {
		t.Fatal(err)
	}
	fi, _ = os.Stat(path)
	if data, _ := os.ReadFile(path); string(data) != "two" || fi.Mode().Perm() != 0o640 {
		t.Errorf("got %q mode %v, want \"two\" 0640", data, fi.Mode().Perm())
	}

	// A directory in the way fails without touching it.
	sub := filepath.Join(dir, "sub.go")
	os.Mkdir(sub, 0o755)
	if err := WriteFile(sub, []byte("x")); err == nil {
		t.Error("writing over a directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("left behind: %v", entries)
	}
}

func TestGenerateErrorKinds(t *testing.T) {
	dir := t.TempDir()
	_, err := Generate(Config{Dir: dir, Output: "x.txt"})
	var usage *UsageError
	if !errors.As(err, &usage) {
		t.Errorf("bad -o: %v, want a *UsageError", err)
	}
	_, err = Generate(Config{Dir: dir, Args: []string{"example.com/pkg"}})
	if !errors.As(err, &usage) {
		t.Errorf("no default -o: %v, want a *UsageError", err)
	}
}
