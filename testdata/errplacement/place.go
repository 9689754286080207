// Package errplacement has //crontab: directives everywhere but in the
// doc comment of a type declaration; each one is an error.
//
//crontab:name=package-doc
package errplacement

import "context"

//go:generate go run github.com/gocrontab/crontab/cmd/crontabgen

//crontab:name=floating expression=every:1m

// Run is a func.
//
//crontab:name=func expression=every:1m
func Run() {}

// Limit is a const.
//
//crontab:name=const
const Limit = 1

//crontab:name=var
var (
	// V is a var in a group.
	//
	//crontab:name=var-spec
	V int
)

// Holder has an annotated field.
type Holder struct {
	// Field is a field.
	//
	//crontab:name=field
	Field int
	Other int //crontab:name=field-line
}

// Handle is a method.
//
//crontab:name=method
func (Holder) Handle(context.Context) error {
	//crontab:name=in-body
	return nil
}

// Grouped directives on a group of several types are ambiguous.
//
//crontab:name=group
type (
	One struct{}
	Two struct{}
)

// Line has its directive in its line comment.
type Line struct{} //crontab:name=line

// Local declares a type inside a function.
func Local() {
	// L is local.
	//
	//crontab:name=local
	type L struct{}
	_ = L{}
}

// Spaced is not annotated: "// crontab:" with a space is a plain comment.
//
// crontab:name=spaced
type Spaced struct{}
