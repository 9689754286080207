// Package errdupname holds the generated file for packages a and b, which
// declare the same task names.
package errdupname

//go:generate go run github.com/gocrontab/crontab/cmd/crontabgen .
