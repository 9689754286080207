// Package errsyntax has directives with syntax errors and unknown keys;
// every error is reported, each at its key or value.
package errsyntax

import "context"

//go:generate go run github.com/gocrontab/crontab/cmd/crontabgen

// UnknownKey misspells a key.
//
//crontab:name=a expresion=every:1m
type UnknownKey struct{}

// NoName lacks the required name.
//
//crontab:expression=every:1m
type NoName struct{}

// BadValues has bad values for several keys.
//
//crontab:name=c status=sleeping timeout=forever concurrent=maybe
type BadValues struct{}

// Unterminated has an unterminated quoted value.
//
//crontab:name="d expression=every:1m
type Unterminated struct{}

func (UnknownKey) Handle(context.Context) error   { return nil }
func (NoName) Handle(context.Context) error       { return nil }
func (BadValues) Handle(context.Context) error    { return nil }
func (Unterminated) Handle(context.Context) error { return nil }
