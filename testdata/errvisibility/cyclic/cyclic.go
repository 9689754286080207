// Package cyclic imports the output package, which would import it back.
package cyclic

import (
	"context"

	"example.com/errvisibility/out"
)

// Cycle is a task in a package that imports the output package.
//
//crontab:name=cycle expression=every:1m
type Cycle struct{}

func (Cycle) Handle(context.Context) error { _ = out.Version; return nil }
