// Package broken does not type-check: its errors are reported as they are,
// with their positions, and its directive is still checked.
package broken

import "context"

//go:generate go run github.com/gocrontab/crontab/cmd/crontabgen -o ../good/crontab_gen.go ../good .

// Broken calls a function that does not exist.
//
//crontab:name=broken expression=every:1m timeout=forever
type Broken struct{}

func (Broken) Handle(context.Context) error { return missing() }

var x int = "not an int"
