package gen

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/mod/modfile"
	"golang.org/x/tools/go/packages"
)

// loadMode is the cheapest mode that gives the syntax and types of the
// scanned packages, as cmd/stringer loads: dependencies come from export
// data, never from source (no NeedDeps). NeedTypesInfo is left out: every
// question is asked of the packages' scopes, and filling types.Info makes
// the type checker work much harder. NeedImports costs nothing (the load
// builds the import graph for NeedTypes anyway) and gives the errors of
// dependencies and the import graph for the cycle check.
const loadMode = packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedSyntax | packages.NeedTypes

// generator is the state of one Generate.
type generator struct {
	dir      string // absolute working directory
	patterns []string
	tags     []string
	env      []string
	out      output

	fset   *token.FileSet
	pkgs   []*packages.Package        // the scanned packages, sorted by path
	broken map[*packages.Package]bool // packages with reported errors in them or their dependencies
	errs   ErrorList
	tasks  []*task // every annotated type, sorted by package path, type name
	zones  map[string]zone
}

// output is the generated file and its package.
type output struct {
	file string // absolute path
	dir  string
	name string // package name
	path string // import path
	// alone is set when no Go file but the generated one is in the
	// directory: without that file, which the load leaves out, the package
	// does not exist.
	alone bool
	pkg   *packages.Package
}

func newGenerator(cfg Config) (*generator, error) {
	dir := cfg.Dir
	if dir == "" {
		dir = "."
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	patterns, firstDir, err := resolveArgs(dir, cfg.Args)
	if err != nil {
		return nil, err
	}
	g := &generator{dir: dir, patterns: patterns, env: cfg.Env, fset: token.NewFileSet()}
	for _, t := range cfg.Tags {
		for _, f := range strings.FieldsFunc(t, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
			if f != BuildTag && !slices.Contains(g.tags, f) {
				g.tags = append(g.tags, f)
			}
		}
	}

	out := cfg.Output
	if out == "" {
		if firstDir == "" {
			return nil, usagef("-o is required: the first argument %q is not a directory", patterns[0])
		}
		out = filepath.Join(firstDir, DefaultOutput)
	}
	if !strings.HasSuffix(out, ".go") || strings.HasSuffix(out, "_test.go") {
		return nil, usagef("-o %s: the output must be a .go file, not a _test.go file", out)
	}
	g.out.file = abs(dir, out)
	g.out.dir = filepath.Dir(g.out.file)
	if !isDir(g.out.dir) {
		return nil, usagef("-o %s: directory %s does not exist", out, DisplayPath(dir, g.out.dir))
	}
	g.out.name, err = g.outputPackageName()
	if err != nil {
		return nil, err
	}
	return g, nil
}

// outputPackageName reads the package clause of the Go files in the output
// directory that the build would use (test files and the old output aside),
// or, when there are none, the old output's package clause, or else makes a
// name of the directory's base name.
func (g *generator) outputPackageName() (string, error) {
	ctx := build.Default
	ctx.BuildTags = append(slices.Clone(g.tags), BuildTag)
	entries, err := os.ReadDir(g.out.dir)
	if err != nil {
		return "", err
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") ||
			filepath.Join(g.out.dir, name) == g.out.file {
			continue
		}
		if ok, err := ctx.MatchFile(g.out.dir, name); err != nil || !ok {
			continue
		}
		names = append(names, name)
	}
	for _, name := range names {
		if pkg := packageClause(filepath.Join(g.out.dir, name)); pkg != "" {
			return pkg, nil
		}
	}
	g.out.alone = len(names) == 0
	if pkg := packageClause(g.out.file); pkg != "" {
		return pkg, nil
	}
	return sanitizePackageName(filepath.Base(g.out.dir)), nil
}

// packageClause returns the package name of a Go file, or "" if it cannot
// be read.
func packageClause(file string) string {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.PackageClauseOnly)
	if err != nil || f.Name == nil {
		return ""
	}
	return f.Name.Name
}

// sanitizePackageName makes a package name of a directory name: lower case,
// every character that cannot be in an identifier replaced by "_", a "_"
// before a leading digit, and "pkg" for an empty result or a keyword.
func sanitizePackageName(base string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(base) {
		switch {
		case r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			if b.Len() == 0 && unicode.IsDigit(r) {
				b.WriteByte('_')
			}
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := b.String()
	if name == "" || strings.Trim(name, "_") == "" || token.IsKeyword(name) {
		return "pkg"
	}
	return name
}

// load runs the one go/packages load and records its errors.
func (g *generator) load() error {
	tags := append(slices.Clone(g.tags), goflagsTags(g.env)...)
	tags = append(tags, BuildTag)
	cfg := &packages.Config{
		Mode:       loadMode,
		Dir:        g.dir,
		Env:        g.env,
		Fset:       g.fset,
		BuildFlags: []string{"-tags=" + strings.Join(tags, ",")},
		ParseFile: func(fset *token.FileSet, filename string, src []byte) (*ast.File, error) {
			// Not AllErrors: the first error of each line, as the compiler
			// reports them.
			return parser.ParseFile(fset, filename, src, parser.ParseComments|parser.SkipObjectResolution)
		},
	}
	pkgs, err := packages.Load(cfg, g.patterns...)
	if err != nil {
		return fmt.Errorf("loading packages: %w", err)
	}
	if len(pkgs) == 0 {
		g.errs.add(token.Position{}, "no packages match %s", strings.Join(g.patterns, " "))
		return nil
	}
	slices.SortFunc(pkgs, func(a, b *packages.Package) int { return strings.Compare(a.PkgPath, b.PkgPath) })
	g.pkgs = pkgs
	for _, p := range pkgs {
		if p.Dir == g.out.dir && (p.Name == g.out.name || p.Types != nil && p.Types.Name() == g.out.name) {
			g.out.pkg = p
			g.out.path = p.PkgPath
		}
	}
	if g.out.path == "" {
		path, err := importPath(g.out.dir)
		if err != nil {
			g.errs.add(token.Position{}, "%v", err)
		}
		g.out.path = path
	}
	g.broken = make(map[*packages.Package]bool)
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		bad := g.packageErrors(p)
		for _, imp := range p.Imports {
			bad = bad || g.broken[imp]
		}
		g.broken[p] = bad
	})
	return nil
}

// packageErrors reports the errors of p, less those the generated file
// fixes, and reports whether there were any.
func (g *generator) packageErrors(p *packages.Package) bool {
	typeErrors := false
	for _, e := range p.Errors {
		if e.Kind == packages.TypeError || e.Kind == packages.ParseError {
			typeErrors = true
		}
	}
	reported := false
	for _, e := range p.Errors {
		if e.Kind == packages.ListError && e.Pos == "" && strings.HasPrefix(e.Msg, "# ") {
			// The compiler's output for a package that did not compile
			// while go list made export data. The load then type-checks
			// the package from source, and its errors say the same, with
			// positions; only compiler errors the type checker does not
			// see are taken from here.
			if typeErrors {
				continue
			}
			for _, line := range strings.Split(e.Msg, "\n")[1:] {
				if line == "" || strings.HasPrefix(line, "\t") {
					continue
				}
				pos, msg := splitPosition(line)
				if generatedName.MatchString(msg) {
					continue
				}
				if pos.Filename != "" {
					pos.Filename = abs(g.dir, pos.Filename)
				}
				g.errs.add(pos, "%s", msg)
				reported = true
			}
			continue
		}
		if g.ignorable(p, e) {
			continue
		}
		pos := parsePos(e.Pos)
		if pos.Filename != "" && !filepath.IsAbs(pos.Filename) {
			pos.Filename = abs(g.dir, pos.Filename)
		}
		msg := strings.TrimSpace(e.Msg)
		if pos.Filename == "" && p.PkgPath != "" && !strings.Contains(msg, p.PkgPath) {
			msg = p.PkgPath + ": " + msg
		}
		g.errs.add(pos, "%s", msg)
		reported = true
	}
	return reported
}

// splitPosition splits "file:line:col: msg" (or "file:line: msg").
func splitPosition(line string) (token.Position, string) {
	if m := positioned.FindStringSubmatch(line); m != nil {
		return parsePos(m[1]), m[2]
	}
	return token.Position{}, line
}

var positioned = regexp.MustCompile(`^(\S+?\.go:\d+(?::\d+)?): (.*)$`)

// generatedName matches the type checker's error for a use of what the
// generated file declares, which the load leaves out.
var generatedName = regexp.MustCompile(`^undefined: (?:(\w+)\.)?(Register|NewScheduler|NewClient)$`)

// ignorable reports whether e is the type checker's complaint that code
// uses Register, NewScheduler or NewClient of the output package: the load
// excludes the old generated file (by BuildTag), and the new one defines
// them.
func (g *generator) ignorable(p *packages.Package, e packages.Error) bool {
	if g.out.alone && g.out.path != "" {
		// A package imports the output package, which holds nothing but
		// the generated file: it does not exist, or not for the load.
		if e.Kind == packages.ListError && (strings.Contains(e.Msg, g.out.path) || strings.Contains(e.Msg, g.out.dir)) {
			return true
		}
		if e.Kind == packages.TypeError && strings.HasPrefix(e.Msg, "could not import "+g.out.path+" ") {
			return true
		}
	}
	if e.Kind != packages.TypeError {
		return false
	}
	m := generatedName.FindStringSubmatch(e.Msg)
	if m == nil {
		return false
	}
	if m[1] == "" {
		return p.PkgPath == g.out.path
	}
	// pkg.Name: the file must import the output package under that name.
	if len(p.Syntax) == 0 {
		return true // a dependency loaded without syntax: trust the name
	}
	pos := parsePos(e.Pos)
	for _, f := range p.Syntax {
		if g.fset.File(f.Pos()).Name() != pos.Filename {
			continue
		}
		for _, imp := range f.Imports {
			if importPathOf(imp) != g.out.path {
				continue
			}
			if imp.Name != nil && imp.Name.Name == m[1] || imp.Name == nil && g.out.name == m[1] {
				return true
			}
		}
	}
	return false
}

func importPathOf(imp *ast.ImportSpec) string {
	s := imp.Path.Value
	if len(s) >= 2 {
		return s[1 : len(s)-1]
	}
	return s
}

// goflagsTags returns the build tags set by -tags in GOFLAGS, which the
// load's own -tags flag would otherwise override.
func goflagsTags(env []string) []string {
	goflags := os.Getenv("GOFLAGS")
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GOFLAGS="); ok {
			goflags = v
		}
	}
	var tags []string
	for _, f := range strings.Fields(goflags) {
		f = strings.TrimPrefix(f, "-")
		if v, ok := strings.CutPrefix(f, "-tags="); ok {
			f = "tags=" + v
		}
		if v, ok := strings.CutPrefix(f, "tags="); ok {
			for _, t := range strings.Split(v, ",") {
				if t != "" {
					tags = append(tags, t)
				}
			}
		}
	}
	return tags
}

// importPath returns the import path of dir from the go.mod of its module.
func importPath(dir string) (string, error) {
	for d := dir; ; {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			mod := modfile.ModulePath(data)
			if mod == "" {
				return "", fmt.Errorf("%s: no module path", filepath.Join(d, "go.mod"))
			}
			rel, err := filepath.Rel(d, dir)
			if err != nil {
				return "", err
			}
			if rel == "." {
				return mod, nil
			}
			return mod + "/" + filepath.ToSlash(rel), nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("cannot find the import path of %s: no go.mod in it or above it", dir)
		}
		d = parent
	}
}

// commentPos returns the position of byte off of comment c.
func (g *generator) commentPos(c *ast.Comment, off int) token.Position {
	if off < 0 || off > len(c.Text) {
		off = 0
	}
	return g.fset.Position(c.Slash + token.Pos(off))
}
