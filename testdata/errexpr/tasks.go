// Package errexpr has expressions and zones the runtime rejects: the
// generator checks them with the runtime's own parsers.
package errexpr

import "context"

//go:generate go run github.com/gocrontab/crontab/cmd/crontabgen

// BadCron has a minute out of range.
//
//crontab:name=bad-cron expression="cron:61 * * * *"
type BadCron struct{}

// NeverFires can never fire.
//
//crontab:name=never expression="cron:0 0 30 2 *"
type NeverFires struct{}

// UnknownForm has no known form.
//
//crontab:name=unknown-form expression=weekly:mon
type UnknownForm struct{}

// BadZone names a zone that does not exist.
//
//crontab:name=bad-zone expression=daily:03:00 tz=Europe/Atlantis
type BadZone struct{}

// LocalZone uses the machine's zone.
//
//crontab:name=local-zone expression=daily:03:00 tz=Local
type LocalZone struct{}

func (BadCron) Handle(context.Context) error     { return nil }
func (NeverFires) Handle(context.Context) error  { return nil }
func (UnknownForm) Handle(context.Context) error { return nil }
func (BadZone) Handle(context.Context) error     { return nil }
func (LocalZone) Handle(context.Context) error   { return nil }
