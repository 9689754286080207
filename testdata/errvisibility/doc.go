// Package errvisibility has tasks that the generated file, in package out,
// cannot refer to: unexported, in package main, in another tree's internal
// package, or in a package that imports out.
package errvisibility

//go:generate go run github.com/gocrontab/crontab/cmd/crontabgen -o out/crontab_gen.go ./tasks ./cmd ./cyclic ./lib
