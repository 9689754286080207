// Package alpha has a task with a value receiver.
package alpha

import "context"

// Zeta sorts after Alpha by type name.
//
//crontab:name=zeta expression=every:1h
type Zeta struct{}

func (Zeta) Handle(context.Context) error { return nil }

// Alpha is registered before Zeta.
//
//crontab:name=alpha expression=every:30
type Alpha struct{}

func (Alpha) Handle(context.Context) error { return nil }

// notExported has no directive, so being unexported is fine.
type notExported struct{}
