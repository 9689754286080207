package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/gocrontab/crontab/internal/redisnet"
)

// How the command reports errors. Every error goes to stderr as one line
// per failure, each beginning with "crontab: " once:
//
//   - a usage error (exit 2): "crontab: MSG; run 'crontab --help' for usage";
//   - a Redis that cannot be reached (exit 1), whatever command met it:
//     "crontab: cannot reach Redis at ADDR (REASON); set -redis or REDIS_URL";
//   - any other failure (exit 1): "crontab: " and the error, whose own
//     leading "crontab: " (package runtime's errors begin with one, see its
//     documentation) is dropped; an error of several failures (pause a b)
//     is one line per failure.
//
// No command at all is the one case that prints more: the help, then the
// usage line.
const redisHint = "set -redis or REDIS_URL"

// report prints err as described above and returns the exit status.
func (c *cli) report(err error) int {
	var ue usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(c.stderr, "crontab: %s; run 'crontab --help' for usage\n", flatten(ue.msg))
		return exitUsage
	}
	if _, ok := redisnet.Unreachable(err); ok {
		fmt.Fprintf(c.stderr, "crontab: %s\n", redisnet.Explain(err, c.redisAddr(), redisHint))
		return exitFailure
	}
	for _, e := range failures(err) {
		fmt.Fprintf(c.stderr, "crontab: %s\n", flatten(strings.TrimPrefix(e.Error(), "crontab: ")))
	}
	return exitFailure
}

// redisAddr is the address of the Redis the command speaks to, for
// messages: the client's, or the -redis URL's when there is no client.
func (c *cli) redisAddr() string {
	if a := redisnet.Addr(c.rdb); a != "" {
		return a
	}
	return c.redisURL
}

// failures splits an errors.Join of several failures (one per name of
// pause a b) into them.
func failures(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, failures(e)...)
		}
		return out
	}
	return []error{err}
}

// flatten makes msg one line: a multi-line error (a stored error text) is
// joined with "; ".
func flatten(msg string) string {
	var parts []string
	for l := range strings.Lines(msg) {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}
