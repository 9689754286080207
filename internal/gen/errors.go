package gen

import (
	"cmp"
	"fmt"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Error is one problem found while generating: at a position in a Go source
// file, or at none (Pos.Filename is empty) for a problem of the whole run.
type Error struct {
	// Pos is where the problem is; Filename is absolute, Column is the
	// 1-based byte column.
	Pos token.Position
	// Msg describes the problem, without position.
	Msg string
}

// Error returns "file:line:col: msg" with the absolute file name, or msg
// alone when e has no position.
func (e *Error) Error() string { return e.Format("") }

// Format returns "file:line:col: msg", with file relative to base when it is
// below base (base "" keeps it absolute), or msg alone when e has no
// position.
func (e *Error) Format(base string) string {
	if e.Pos.Filename == "" {
		return e.Msg
	}
	var b strings.Builder
	b.WriteString(DisplayPath(base, e.Pos.Filename))
	if e.Pos.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Pos.Line))
		if e.Pos.Column > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(e.Pos.Column))
		}
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// ErrorList is every problem of one run, sorted by position (problems
// without a position first). Generate returns a non-empty ErrorList as its
// error when the input is wrong; use errors.As to get it.
type ErrorList []*Error

// Error returns the errors one per line, with absolute file names.
func (l ErrorList) Error() string { return l.Format("") }

// Format returns the errors one per line (no final newline), with file
// names relative to base when they are below it.
func (l ErrorList) Format(base string) string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Format(base)
	}
	return strings.Join(lines, "\n")
}

func (l *ErrorList) add(pos token.Position, format string, args ...any) {
	*l = append(*l, &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// sort sorts l by file, line, column and message and drops duplicates.
func (l *ErrorList) sort() {
	slices.SortStableFunc(*l, func(a, b *Error) int {
		return cmp.Or(
			cmp.Compare(a.Pos.Filename, b.Pos.Filename),
			cmp.Compare(a.Pos.Line, b.Pos.Line),
			cmp.Compare(a.Pos.Column, b.Pos.Column),
			cmp.Compare(a.Msg, b.Msg),
		)
	})
	*l = slices.CompactFunc(*l, func(a, b *Error) bool {
		return a.Pos == b.Pos && a.Msg == b.Msg
	})
}

// DisplayPath returns file relative to base when file is base or below it,
// and file unchanged otherwise (or when base is empty). The result uses the
// OS separator.
func DisplayPath(base, file string) string {
	if base == "" || !filepath.IsAbs(file) {
		return file
	}
	rel, err := filepath.Rel(base, file)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return file
	}
	return rel
}

// parsePos parses the position of a go/packages error: "file:line:col",
// "file:line", "file", or "" / "-" for none.
func parsePos(s string) token.Position {
	if s == "" || s == "-" {
		return token.Position{}
	}
	var p token.Position
	rest := s
	nums := make([]int, 0, 2)
	for len(nums) < 2 {
		i := strings.LastIndexByte(rest, ':')
		if i < 0 {
			break
		}
		n, err := strconv.Atoi(rest[i+1:])
		if err != nil {
			break
		}
		nums = append(nums, n)
		rest = rest[:i]
	}
	p.Filename = rest
	switch len(nums) {
	case 1:
		p.Line = nums[0]
	case 2:
		p.Line, p.Column = nums[1], nums[0]
	}
	return p
}
