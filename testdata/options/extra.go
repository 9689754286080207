//go:build extra

package options

import "context"

// Extra exists only with the build tag extra.
//
//crontab:name=extra expression=every:2m
type Extra struct{}

func (Extra) Handle(context.Context) error { return nil }
