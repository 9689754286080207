package gen

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"github.com/gocrontab/crontab/annotate"
	"golang.org/x/tools/go/packages"
)

// task is one annotated type declaration.
type task struct {
	pkg     *packages.Package
	file    *ast.File
	spec    *ast.TypeSpec
	comment *ast.Comment        // the directive line
	dir     *annotate.Directive // nil when the directive is invalid
	obj     *types.TypeName     // nil when the package has no types
}

func (t *task) typeName() string { return t.spec.Name.Name }
func (t *task) class() string    { return t.pkg.PkgPath + "." + t.typeName() }

// find collects the annotated types of every scanned package and reports
// every misplaced directive.
func (g *generator) find() {
	for _, p := range g.pkgs {
		for _, f := range p.Syntax {
			g.findInFile(p, f)
		}
	}
}

// findInFile scans one file. Directives are read from the raw comment list:
// CommentGroup.Text drops directive lines.
func (g *generator) findInFile(p *packages.Package, f *ast.File) {
	var directives []*ast.Comment
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if annotate.IsDirective(c.Text) {
				directives = append(directives, c)
			}
		}
	}
	if len(directives) == 0 {
		return
	}
	used := make(map[*ast.Comment]bool, len(directives))
	for _, decl := range f.Decls {
		d, ok := decl.(*ast.GenDecl)
		if !ok || d.Tok != token.TYPE {
			continue
		}
		for _, s := range d.Specs {
			spec := s.(*ast.TypeSpec)
			var docs []*ast.CommentGroup
			if len(d.Specs) == 1 {
				docs = append(docs, d.Doc)
			}
			docs = append(docs, spec.Doc)
			var first *ast.Comment
			for _, doc := range docs {
				for _, c := range directiveLines(doc) {
					used[c] = true
					if first != nil {
						g.errs.add(g.fset.Position(c.Slash), "type %s has a second //crontab: directive; the first is at %s",
							spec.Name.Name, g.display(g.fset.Position(first.Slash)))
						continue
					}
					first = c
				}
			}
			if first != nil {
				g.tasks = append(g.tasks, &task{pkg: p, file: f, spec: spec, comment: first})
			}
		}
	}
	if len(used) == len(directives) {
		return
	}
	owners := docOwners(f)
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if !annotate.IsDirective(c.Text) || used[c] {
				continue
			}
			pos := g.fset.Position(c.Slash)
			switch o := owners[cg]; {
			case o == "":
				g.errs.add(pos, "misplaced //crontab: directive: it is not in a doc comment; put it in the doc comment of a type declaration")
			case strings.HasPrefix(o, "local "):
				g.errs.add(pos, "misplaced //crontab: directive: %s is declared inside a function; a task must be a package-level type", strings.TrimPrefix(o, "local "))
			default:
				g.errs.add(pos, "misplaced //crontab: directive on %s; put it in the doc comment of a type declaration", o)
			}
		}
	}
}

// directiveLines returns the //crontab: lines of a comment group.
func directiveLines(cg *ast.CommentGroup) []*ast.Comment {
	if cg == nil {
		return nil
	}
	var out []*ast.Comment
	for _, c := range cg.List {
		if annotate.IsDirective(c.Text) {
			out = append(out, c)
		}
	}
	return out
}

// docOwners describes what each comment group of f documents, for errors
// about directives in the wrong place. Groups that document nothing are
// absent.
func docOwners(f *ast.File) map[*ast.CommentGroup]string {
	owners := make(map[*ast.CommentGroup]string)
	set := func(cg *ast.CommentGroup, what string) {
		if cg != nil && owners[cg] == "" {
			owners[cg] = what
		}
	}
	set(f.Doc, "the package clause")
	for _, decl := range f.Decls {
		d, ok := decl.(*ast.GenDecl)
		if !ok || d.Tok != token.TYPE {
			continue
		}
		if len(d.Specs) > 1 {
			set(d.Doc, fmt.Sprintf("a group of %d type declarations (the directive must be on one of them)", len(d.Specs)))
		}
		for _, s := range d.Specs {
			spec := s.(*ast.TypeSpec)
			set(spec.Comment, "the line comment of type "+spec.Name.Name)
		}
	}
	depth := 0 // function nesting
	var stack []ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			if _, ok := stack[len(stack)-1].(*ast.FuncDecl); ok {
				depth--
			} else if _, ok := stack[len(stack)-1].(*ast.FuncLit); ok {
				depth--
			}
			stack = stack[:len(stack)-1]
			return true
		}
		var parent ast.Node
		if len(stack) > 0 {
			parent = stack[len(stack)-1]
		}
		stack = append(stack, n)
		switch n := n.(type) {
		case *ast.FuncDecl:
			depth++
			if n.Recv != nil && len(n.Recv.List) == 1 {
				set(n.Doc, "method "+n.Name.Name)
			} else {
				set(n.Doc, "func "+n.Name.Name)
			}
		case *ast.FuncLit:
			depth++
		case *ast.GenDecl:
			switch n.Tok {
			case token.TYPE:
				if depth > 0 && len(n.Specs) > 0 {
					set(n.Doc, "local type "+n.Specs[0].(*ast.TypeSpec).Name.Name)
				}
			default:
				set(n.Doc, declDesc(n))
			}
		case *ast.TypeSpec:
			if depth > 0 {
				set(n.Doc, "local type "+n.Name.Name)
				set(n.Comment, "local type "+n.Name.Name)
			}
		case *ast.ValueSpec:
			set(n.Doc, valueDesc(parent, n))
			set(n.Comment, valueDesc(parent, n))
		case *ast.ImportSpec:
			set(n.Doc, "an import")
			set(n.Comment, "an import")
		case *ast.Field:
			var grandparent ast.Node
			if len(stack) >= 3 {
				grandparent = stack[len(stack)-3]
			}
			what := fieldDesc(grandparent, n)
			set(n.Doc, what)
			set(n.Comment, what)
		}
		return true
	})
	return owners
}

func declDesc(d *ast.GenDecl) string {
	if d.Tok == token.IMPORT {
		return "an import declaration"
	}
	if len(d.Specs) == 1 {
		if vs, ok := d.Specs[0].(*ast.ValueSpec); ok {
			return d.Tok.String() + " " + names(vs.Names)
		}
	}
	return "a " + d.Tok.String() + " declaration"
}

func valueDesc(parent ast.Node, vs *ast.ValueSpec) string {
	tok := "var"
	if d, ok := parent.(*ast.GenDecl); ok {
		tok = d.Tok.String()
	}
	return tok + " " + names(vs.Names)
}

func fieldDesc(grandparent ast.Node, f *ast.Field) string {
	var name string
	if len(f.Names) > 0 {
		name = names(f.Names)
	} else {
		name = types.ExprString(f.Type)
	}
	switch grandparent.(type) {
	case *ast.InterfaceType:
		if len(f.Names) == 0 {
			return "embedded interface " + name
		}
		return "interface method " + name
	case *ast.FuncType:
		return "parameter " + name
	case *ast.TypeSpec:
		return "type parameter " + name
	case *ast.FuncDecl:
		return "receiver " + name
	}
	if len(f.Names) == 0 {
		return "embedded field " + name
	}
	return "field " + name
}

func names(ids []*ast.Ident) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = id.Name
	}
	return strings.Join(s, ", ")
}
