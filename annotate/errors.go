package annotate

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// Error is one problem in a directive line.
type Error struct {
	// Offset is the byte offset into the comment line of the key or value
	// at fault; 0 (the line's start) for a missing required key.
	Offset int
	// Msg describes the problem, without position.
	Msg string
}

// Error returns "offset N: Msg".
func (e *Error) Error() string {
	return "offset " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// ErrorList is every error of a directive line, sorted by offset. [Parse]
// returns a non-empty ErrorList as its error; use errors.As to get it.
type ErrorList []*Error

// Error returns the errors one per line.
func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	}
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap returns the errors of the list, so errors.As finds an *Error.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

func (l ErrorList) sort() {
	slices.SortStableFunc(l, func(a, b *Error) int { return cmp.Compare(a.Offset, b.Offset) })
}
