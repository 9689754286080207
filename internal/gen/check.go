package gen

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/gocrontab/crontab/annotate"
	"github.com/gocrontab/crontab/runtime/registry"
	"github.com/gocrontab/crontab/runtime/schedule"
	"golang.org/x/tools/go/packages"
)

// parseDirectives parses the directive of every task (setting t.dir when
// it is valid), in position order.
func (g *generator) parseDirectives() {
	// Position order, so "first declared" means first in the error listing.
	slices.SortFunc(g.tasks, func(a, b *task) int {
		return comparePos(g.fset.Position(a.comment.Slash), g.fset.Position(b.comment.Slash))
	})
	for _, t := range g.tasks {
		d, err := annotate.Parse(t.comment.Text)
		if err == nil {
			t.dir = d
			continue
		}
		var list annotate.ErrorList
		if !errors.As(err, &list) {
			g.errs.add(g.commentPos(t.comment, 0), "%v", err)
			continue
		}
		for _, e := range list {
			g.errs.add(g.commentPos(t.comment, e.Offset), "%s", e.Msg)
		}
	}
}

// check validates every task whose directive parsed: its expression and
// zone with the runtime's own parsers, the uniqueness of its name, and its
// type. Afterwards g.tasks holds the tasks in output order.
func (g *generator) check() {
	names := make(map[string]*task)
	for _, t := range g.tasks {
		if t.dir != nil {
			g.checkDirective(t)
			if first, dup := names[t.dir.Name]; dup {
				g.errs.add(g.valuePos(t, "name"), "duplicate task name %q; first declared at %s",
					t.dir.Name, g.display(g.valuePos(first, "name")))
			} else {
				names[t.dir.Name] = t
			}
		}
		g.checkType(t)
	}
	g.checkOutputPackage()
	g.checkCycles()
	sortForOutput(g.tasks)
}

// sortForOutput sorts tasks by package path, then type name.
func sortForOutput(tasks []*task) {
	slices.SortFunc(tasks, func(a, b *task) int {
		if c := strings.Compare(a.pkg.PkgPath, b.pkg.PkgPath); c != 0 {
			return c
		}
		return strings.Compare(a.typeName(), b.typeName())
	})
}

func comparePos(a, b token.Position) int {
	if c := strings.Compare(a.Filename, b.Filename); c != 0 {
		return c
	}
	return a.Offset - b.Offset
}

// display formats a position for a message: file relative to the working
// directory when below it, line and column.
func (g *generator) display(p token.Position) string {
	return fmt.Sprintf("%s:%d:%d", DisplayPath(g.dir, p.Filename), p.Line, p.Column)
}

// valuePos is the position of the value of key in t's directive, or of
// the directive when the key is absent.
func (g *generator) valuePos(t *task, key string) token.Position {
	off, ok := t.dir.ValueOffsets[key]
	if !ok {
		off = 0
	}
	return g.commentPos(t.comment, off)
}

// checkDirective checks a parsed directive with the runtime's own
// packages (runtime/registry and runtime/schedule, which the runtime
// re-exports, so the generator needs neither the engine nor Redis): the
// whole config with a Registry, so the generator and the runtime cannot
// disagree, and on failure the zone and expression, to point at them.
func (g *generator) checkDirective(t *task) {
	d := t.dir
	// The runtime is the judge: a Registry validates the config exactly as
	// the generated Register will. Only when it refuses, find the part at
	// fault, with the same parsers, to point at it.
	r := registry.NewRegistry()
	err := r.Add(taskConfig(t, func() registry.TaskInterface { return placeholder{} }))
	if err == nil {
		return
	}
	loc, zerr := g.location(d.TZ)
	if zerr != nil {
		g.errs.add(g.valuePos(t, "tz"), "tz %q: %v", d.TZ, zerr)
		loc = time.UTC
	}
	if d.Expression != "" {
		if _, perr := schedule.Parse(d.Expression, loc); perr != nil {
			g.errs.add(g.valuePos(t, "expression"), "invalid expression %q: %v", d.Expression, perr)
			return
		}
	}
	if zerr == nil {
		g.errs.add(g.commentPos(t.comment, 0), "the runtime rejects this task: %v", err)
	}
}

// location is time.LoadLocation, remembered: it reads the zone database
// each time.
func (g *generator) location(name string) (*time.Location, error) {
	if l, ok := g.zones[name]; ok {
		return l.loc, l.err
	}
	loc, err := time.LoadLocation(name)
	if g.zones == nil {
		g.zones = make(map[string]zone)
	}
	g.zones[name] = zone{loc, err}
	return loc, err
}

type zone struct {
	loc *time.Location
	err error
}

type placeholder struct{}

func (placeholder) Handle(context.Context) error { return nil }

// taskConfig is the TaskConfig the generated file writes for t.
func taskConfig(t *task, newTask func() registry.TaskInterface) registry.TaskConfig {
	d := t.dir
	return registry.TaskConfig{
		Name:       d.Name,
		Class:      t.class(),
		Expression: d.Expression,
		Status:     registry.Status(d.Status),
		Timeout:    d.Timeout,
		Concurrent: d.Concurrent,
		TZ:         d.TZ,
		Misfire:    registry.Misfire(d.Misfire),
		Retries:    d.Retries,
		MaxRunning: d.MaxRunning,
		Rate:       d.Rate,
		Priority:   d.Priority,
		Jitter:     d.Jitter,
		New:        newTask,
	}
}

// checkType checks that t's type can be a task: a package-level, concrete,
// non-generic type that the output package can refer to, whose pointer
// implements crontab.TaskInterface, and, for a job type, whose value
// survives a JSON round trip.
func (g *generator) checkType(t *task) {
	at := g.fset.Position(t.spec.Name.Pos())
	name := t.typeName()
	switch {
	case t.spec.TypeParams != nil && len(t.spec.TypeParams.List) > 0:
		g.errs.add(at, "generic type %s cannot be a task: the generated file needs one concrete type; declare a non-generic type, such as type My%s struct{ %s[int] }", name, name, name)
		return
	case t.spec.Assign.IsValid():
		g.errs.add(at, "type alias %s cannot be a task; annotate the aliased type instead", name)
		return
	}
	if t.pkg.PkgPath != g.out.path {
		switch {
		case t.pkg.Name == "main":
			g.errs.add(at, "type %s is in package main, which the generated file (package %s) cannot import; move it to another package or generate into this one", name, g.out.name)
		case !ast.IsExported(name):
			g.errs.add(at, "type %s is unexported, so the generated file in package %s (%s) cannot refer to it; export it, or generate into package %s", name, g.out.name, g.out.path, t.pkg.Name)
		case !internalVisible(t.pkg.PkgPath, g.out.path):
			g.errs.add(at, "type %s is in internal package %s, which the generated file's package %s may not import", name, t.pkg.PkgPath, g.out.path)
		}
	}
	if t.pkg.Types == nil || g.broken[t.pkg] {
		return // the package's errors are reported; its types are not reliable
	}
	obj, _ := t.pkg.Types.Scope().Lookup(name).(*types.TypeName)
	if obj == nil {
		return
	}
	t.obj = obj
	typ := obj.Type()
	switch typ.Underlying().(type) {
	case *types.Interface:
		g.errs.add(at, "type %s is an interface; a task must be a concrete type", name)
		return
	case *types.Pointer:
		g.errs.add(at, "type %s is a pointer type; annotate the type it points to", name)
		return
	}
	iface := taskInterface(t.pkg.Types)
	ptr := types.NewPointer(typ)
	if m, wrong := types.MissingMethod(ptr, iface, true); m != nil {
		q := func(p *types.Package) string { return p.Name() }
		if !wrong {
			g.errs.add(at, "type %s does not implement crontab.TaskInterface (missing method %s)", name, m.Name())
			return
		}
		have, _, _ := types.LookupFieldOrMethod(ptr, false, t.pkg.Types, m.Name())
		haveStr := "a field " + m.Name()
		if f, ok := have.(*types.Func); ok {
			haveStr = methodString(f.Name(), f.Type().(*types.Signature), q)
		}
		g.errs.add(at, "type %s does not implement crontab.TaskInterface (wrong type for method %s: have %s, want %s)",
			name, m.Name(), haveStr, methodString(m.Name(), m.Type().(*types.Signature), q))
		return
	}
	if t.dir != nil && t.dir.Expression == "" {
		g.checkJSON(t, at)
	}
}

// methodString formats a method as "Name(int) error": the signature
// without receiver and parameter names.
func methodString(name string, sig *types.Signature, q types.Qualifier) string {
	strip := func(tup *types.Tuple) *types.Tuple {
		vars := make([]*types.Var, tup.Len())
		for i := range vars {
			v := tup.At(i)
			vars[i] = types.NewParam(v.Pos(), v.Pkg(), "", v.Type())
		}
		return types.NewTuple(vars...)
	}
	s := types.NewSignatureType(nil, nil, nil, strip(sig.Params()), strip(sig.Results()), sig.Variadic())
	return name + strings.TrimPrefix(types.TypeString(s, q), "func")
}

// taskInterface returns crontab.TaskInterface as the package pkg sees it:
// from the runtime package (or the registry package it re-exports the
// interface from) among its imports, or else built from the
// context package it imports, or else from a stand-in context package (no
// Handle method of pkg can then match, as none can mention context.Context).
func taskInterface(pkg *types.Package) *types.Interface {
	var rt, ctx *types.Package
	seen := make(map[*types.Package]bool)
	var walk func(p *types.Package)
	walk = func(p *types.Package) {
		if seen[p] || rt != nil {
			return
		}
		seen[p] = true
		switch p.Path() {
		case runtimePath, registryPath:
			rt = p
		case "context":
			ctx = p
		}
		for _, imp := range p.Imports() {
			walk(imp)
		}
	}
	walk(pkg)
	if rt != nil {
		if obj, ok := rt.Scope().Lookup("TaskInterface").(*types.TypeName); ok {
			if iface, ok := obj.Type().Underlying().(*types.Interface); ok {
				return iface
			}
		}
	}
	var ctxType types.Type
	if ctx != nil {
		if obj, ok := ctx.Scope().Lookup("Context").(*types.TypeName); ok {
			ctxType = obj.Type()
		}
	}
	if ctxType == nil {
		ctxPkg := types.NewPackage("context", "context")
		obj := types.NewTypeName(token.NoPos, ctxPkg, "Context", nil)
		ctxType = types.NewNamed(obj, types.NewInterfaceType(nil, nil), nil)
	}
	errType := types.Universe.Lookup("error").Type()
	sig := types.NewSignatureType(nil, nil, nil,
		types.NewTuple(types.NewParam(token.NoPos, nil, "ctx", ctxType)),
		types.NewTuple(types.NewParam(token.NoPos, nil, "", errType)), false)
	handle := types.NewFunc(token.NoPos, nil, "Handle", sig)
	iface := types.NewInterfaceType([]*types.Func{handle}, nil)
	iface.Complete()
	return iface
}

// internalVisible reports whether a package at importer may import path
// under the internal-package rule.
func internalVisible(path, importer string) bool {
	i := strings.LastIndex(path, "/internal/")
	switch {
	case i >= 0:
	case strings.HasSuffix(path, "/internal"):
		i = len(path) - len("/internal")
	case path == "internal" || strings.HasPrefix(path, "internal/"):
		return true // standard library style; not a user task
	default:
		return true
	}
	parent := path[:i]
	return importer == parent || strings.HasPrefix(importer, parent+"/")
}

// checkOutputPackage reports declarations of the output package that the
// generated file would collide with.
func (g *generator) checkOutputPackage() {
	p := g.out.pkg
	if p == nil || p.Types == nil {
		return
	}
	for _, name := range []string{"Register", "NewScheduler", "NewClient", "crontab", "redis", "time"} {
		obj := p.Types.Scope().Lookup(name)
		if obj == nil {
			continue
		}
		g.errs.add(g.fset.Position(obj.Pos()), "package %s declares %s, which the generated file %s declares too; rename it",
			p.Name, name, DisplayPath(g.dir, g.out.file))
	}
}

// checkCycles reports task packages that import the output package: the
// generated file imports them back.
func (g *generator) checkCycles() {
	done := make(map[string]bool)
	imports := importers(g.out.path)
	for _, t := range g.tasks {
		p := t.pkg
		if p.PkgPath == g.out.path || done[p.PkgPath] {
			continue
		}
		done[p.PkgPath] = true
		if !imports(p) {
			continue
		}
		at := g.fset.Position(t.spec.Name.Pos())
		for _, f := range p.Syntax {
			for _, imp := range f.Imports {
				if importPathOf(imp) == g.out.path {
					at = g.fset.Position(imp.Path.Pos())
				}
			}
		}
		g.errs.add(at, "package %s imports %s, the package of the generated file, which imports it back: an import cycle; generate into another package",
			p.PkgPath, g.out.path)
	}
}

// importers returns a function that reports whether a package imports
// path, directly or indirectly; it remembers every package it has walked.
func importers(path string) func(p *packages.Package) bool {
	memo := make(map[*packages.Package]bool)
	var imports func(p *packages.Package) bool
	imports = func(p *packages.Package) bool {
		if v, ok := memo[p]; ok {
			return v
		}
		memo[p] = false // cycles cannot happen; be safe anyway
		for _, imp := range p.Imports {
			if imp.PkgPath == path || imports(imp) {
				memo[p] = true
				return true
			}
		}
		return false
	}
	return imports
}

// checkJSON reports the fields of a job type that encoding/json cannot
// round-trip: the scheduler decodes the enqueued payload into a new value.
func (g *generator) checkJSON(t *task, at token.Position) {
	c := &jsonChecker{seen: make(map[types.Type]bool)}
	c.walk(t.obj.Type(), "", 0)
	q := func(p *types.Package) string { return p.Name() }
	for _, b := range c.bad {
		ts := types.TypeString(b.typ, q)
		if b.path == "" {
			g.errs.add(at, "job type %s cannot round-trip through JSON: encoding/json cannot %s", t.typeName(), b.why)
			continue
		}
		g.errs.add(at, "job type %s cannot round-trip through JSON: field %s (%s): encoding/json cannot %s; tag it `json:\"-\"` or change its type (a dependency field, such as a DB handle, a client or a logger, is tagged `json:\"-\"` and given with crontab.Provide)",
			t.typeName(), b.path, ts, b.why)
	}
}

type jsonProblem struct {
	path string
	typ  types.Type
	why  string
}

// jsonChecker walks a type the way encoding/json does, through exported
// and embedded fields, pointers, slices, arrays and maps, and keeps the
// clear failures: channels, funcs, complex numbers, unsafe pointers and
// unusable map keys. Types with their own JSON or text (un)marshaling are
// trusted.
type jsonChecker struct {
	seen map[types.Type]bool
	bad  []jsonProblem
}

func (c *jsonChecker) walk(t types.Type, path string, depth int) {
	if depth > 64 {
		return
	}
	if named, ok := t.(*types.Named); ok {
		if c.seen[named] {
			return
		}
		c.seen[named] = true
	}
	if customJSON(t) {
		return
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsComplex != 0:
			c.bad = append(c.bad, jsonProblem{path, t, "encode a complex number"})
		case u.Kind() == types.UnsafePointer:
			c.bad = append(c.bad, jsonProblem{path, t, "encode an unsafe.Pointer"})
		}
	case *types.Chan:
		c.bad = append(c.bad, jsonProblem{path, t, "encode a channel"})
	case *types.Signature:
		c.bad = append(c.bad, jsonProblem{path, t, "encode a func"})
	case *types.Pointer:
		c.walk(u.Elem(), path, depth+1)
	case *types.Slice:
		c.walk(u.Elem(), path+"[]", depth+1)
	case *types.Array:
		c.walk(u.Elem(), path+"[]", depth+1)
	case *types.Map:
		if !jsonMapKey(u.Key()) {
			c.bad = append(c.bad, jsonProblem{path, t, "use map key type " + types.TypeString(u.Key(), func(p *types.Package) string { return p.Name() }) + " (it needs string or integer keys, or keys that implement encoding.TextMarshaler)"})
		}
		c.walk(u.Elem(), path+"[]", depth+1)
	case *types.Struct:
		for i := range u.NumFields() {
			f := u.Field(i)
			tag := reflect.StructTag(u.Tag(i)).Get("json")
			if tag == "-" {
				continue
			}
			ft := f.Type()
			if f.Embedded() {
				base := ft
				if p, ok := base.Underlying().(*types.Pointer); ok {
					base = p.Elem()
				}
				_, isStruct := base.Underlying().(*types.Struct)
				if !f.Exported() && !isStruct {
					continue // encoding/json ignores it
				}
			} else if !f.Exported() {
				continue
			}
			c.walk(ft, joinPath(path, f.Name()), depth+1)
		}
	}
}

func joinPath(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// customJSON reports whether t or *t has a method encoding/json defers to.
func customJSON(t types.Type) bool {
	if _, ok := t.Underlying().(*types.Interface); ok {
		return false
	}
	for _, m := range []string{"MarshalJSON", "UnmarshalJSON", "MarshalText", "UnmarshalText"} {
		obj, _, _ := types.LookupFieldOrMethod(t, true, nil, m)
		if _, ok := obj.(*types.Func); ok {
			return true
		}
	}
	return false
}

// jsonMapKey reports whether encoding/json can use t as a map key.
func jsonMapKey(t types.Type) bool {
	if b, ok := t.Underlying().(*types.Basic); ok && b.Info()&(types.IsString|types.IsInteger) != 0 {
		return true
	}
	return customJSON(t)
}
