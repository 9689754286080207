// Package errjson has job types whose payload cannot round-trip through
// encoding/json, and some that can although they look like they cannot.
package errjson

import (
	"context"
	"encoding/json"
	"unsafe"
)

//go:generate go run github.com/gocrontab/crontab/cmd/crontabgen

// WithChan has a channel field.
//
//crontab:name=with-chan
type WithChan struct {
	Done chan struct{}
}

// WithFunc has a func field deep inside.
//
//crontab:name=with-func
type WithFunc struct {
	Steps []Step
}

// Step is part of WithFunc.
type Step struct {
	Name string
	Run  func() error
}

// Odd has a complex number, an unsafe.Pointer, a bad map key, and a
// promoted field of an embedded unexported struct.
//
//crontab:name=odd
type Odd struct {
	Z complex128
	P unsafe.Pointer
	M map[Key]string
	inner
}

// Key is a struct, so it cannot be a JSON object key.
type Key struct{ A, B int }

type inner struct{ Callback func() }

// FuncJob is itself a func type.
//
//crontab:name=func-job
type FuncJob func()

// Fine has what encoding/json skips or handles itself: a tagged-out
// channel, unexported fields, a recursive type, a type with its own JSON
// methods, an interface.
//
//crontab:name=fine
type Fine struct {
	Done   chan int `json:"-"`
	hidden func()
	Next   *Fine
	Raw    Custom
	Any    any
}

// Custom marshals itself.
type Custom struct{ f func() }

func (Custom) MarshalJSON() ([]byte, error) { return json.Marshal(nil) }
func (*Custom) UnmarshalJSON([]byte) error  { return nil }

// Scheduled has a channel, but it is a scheduled task: no payload.
//
//crontab:name=scheduled expression=every:1m
type Scheduled struct{ C chan int }

func (WithChan) Handle(context.Context) error  { return nil }
func (WithFunc) Handle(context.Context) error  { return nil }
func (Odd) Handle(context.Context) error       { return nil }
func (FuncJob) Handle(context.Context) error   { return nil }
func (Fine) Handle(context.Context) error      { return nil }
func (Scheduled) Handle(context.Context) error { return nil }
