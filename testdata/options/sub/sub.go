// Package sub is below the scanned directory: it is scanned too.
package sub

import "context"

// Deep is found by the recursive scan.
//
//crontab:name=deep expression=every:3m
type Deep struct{}

func (Deep) Handle(context.Context) error { return nil }
