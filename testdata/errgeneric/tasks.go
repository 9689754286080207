// Package errgeneric annotates a generic type and a type alias.
package errgeneric

import "context"

//go:generate go run github.com/gocrontab/crontab/cmd/crontabgen

// Batch is generic.
//
//crontab:name=batch
type Batch[T any] struct{ Items []T }

func (*Batch[T]) Handle(context.Context) error { return nil }

// Ints is a concrete type that embeds Batch[int]: this is how to make the
// generic type a task.
//
//crontab:name=ints
type Ints struct{ Batch[int] }

// Alias is an alias of Ints.
//
//crontab:name=alias
type Alias = Ints
