// Package secret is internal to example.com/errvisibility/lib: package out
// may not import it.
package secret

import "context"

// Secret is exported, in a package out cannot import.
//
//crontab:name=secret expression=every:1m
type Secret struct{}

func (Secret) Handle(context.Context) error { return nil }
