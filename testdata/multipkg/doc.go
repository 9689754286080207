// Package multipkg has tasks in three packages (two of them named tasks)
// and the generated file in a fourth directory that has no Go file yet: its
// package is named after the directory, my-registry becoming my_registry.
package multipkg

//go:generate go run github.com/gocrontab/crontab/cmd/crontabgen -o my-registry/crontab_gen.go ./gamma ./beta ./alpha ./cmd
