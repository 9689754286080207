// Package errimpl has annotated types that are not tasks: the generator
// names the missing or mismatched method.
package errimpl

import (
	"context"
	"time"
)

//go:generate go run github.com/gocrontab/crontab/cmd/crontabgen

// NoHandle has no Handle method.
//
//crontab:name=no-handle expression=every:1m
type NoHandle struct{}

// WrongParam takes an int.
//
//crontab:name=wrong-param expression=every:1m
type WrongParam struct{}

func (WrongParam) Handle(n int) error { return nil }

// WrongResult returns nothing.
//
//crontab:name=wrong-result expression=every:1m
type WrongResult struct{}

func (*WrongResult) Handle(ctx context.Context) {}

// Lowercase has handle, not Handle.
//
//crontab:name=lowercase expression=every:1m
type Lowercase struct{}

func (Lowercase) handle(context.Context) error { return nil }

// Iface is an interface.
//
//crontab:name=iface expression=every:1m
type Iface interface{ Handle(context.Context) error }

// Ptr is a pointer type.
//
//crontab:name=ptr expression=every:1m
type Ptr *time.Time

// Fine is a task: its errors are not mixed with the others.
//
//crontab:name=fine expression=every:1m
type Fine struct{}

func (Fine) Handle(context.Context) error { return nil }
