// Command app declares a task in package main, which cannot be imported.
package main

import "context"

// InMain is in package main.
//
//crontab:name=in-main expression=every:1m
type InMain struct{}

func (InMain) Handle(context.Context) error { return nil }

func main() {}
