package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/gocrontab/crontab/internal/gen"
)

const usage = `usage: crontabgen [-o FILE] [-check] [-tags LIST] [-v] [DIR|PATTERN ...]

crontabgen finds the Go types annotated with //crontab: directives in the
given directories (scanned recursively) or package patterns (default "."),
checks them, and writes the file that registers them. Run "go doc
github.com/gocrontab/crontab/cmd/crontabgen" for the manual.

Flags:
`

func main() {
	cwd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(os.Stderr, "crontabgen: %v\n", err)
		os.Exit(1)
	}
	os.Exit(run(cwd, os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command, run in directory cwd; it returns the exit status: 0
// done (or fresh), 1 errors in the input (or a stale file), 2 a wrong
// command line.
func run(cwd string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("crontabgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	output := fs.String("o", "", "write the generated file to `FILE` (default crontab_gen.go in the first DIR)")
	check := fs.Bool("check", false, "write nothing; exit 1 if FILE is stale or missing")
	tags := fs.String("tags", "", "comma-separated `LIST` of build tags to apply while loading")
	verbose := fs.Bool("v", false, "print each task and job type found, with its schedule in words")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fs.Usage()
			return 0
		}
		return 2
	}
	cfg := gen.Config{Dir: cwd, Args: fs.Args(), Output: *output}
	if *tags != "" {
		cfg.Tags = []string{*tags}
	}
	res, err := gen.Generate(cfg)
	if err != nil {
		var usageErr *gen.UsageError
		var list gen.ErrorList
		switch {
		case errors.As(err, &usageErr):
			fmt.Fprintf(stderr, "crontabgen: %v\nRun crontabgen -h for usage.\n", err)
			return 2
		case errors.As(err, &list):
			for _, e := range list {
				if e.Pos.Filename == "" {
					fmt.Fprintf(stderr, "crontabgen: %s\n", e.Msg)
				} else {
					fmt.Fprintln(stderr, e.Format(cwd))
				}
			}
		default:
			fmt.Fprintf(stderr, "crontabgen: %v\n", err)
		}
		return 1
	}
	name := gen.DisplayPath(cwd, res.Output)
	if *verbose {
		printTasks(stdout, res.Tasks)
	}
	if *check {
		stale, missing, err := gen.Stale(res)
		switch {
		case err != nil:
			fmt.Fprintf(stderr, "crontabgen: %v\n", err)
			return 1
		case missing:
			fmt.Fprintf(stderr, "%s is missing: run go generate\n", name)
			return 1
		case stale:
			fmt.Fprintf(stderr, "%s is stale: run go generate\n", name)
			return 1
		}
		return 0
	}
	if err := gen.WriteFile(res.Output, res.Source); err != nil {
		fmt.Fprintf(stderr, "crontabgen: %v\n", err)
		return 1
	}
	return 0
}

// printTasks writes -v's lines, in the order of the generated file: each
// task's name, expression and schedule in words with its zone, or that it
// is a job type.
func printTasks(w io.Writer, tasks []gen.Task) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, t := range tasks {
		if t.Expression == "" {
			fmt.Fprintf(tw, "%s\t(job type)\truns when enqueued\n", t.Name)
			continue
		}
		words := strings.TrimSuffix(t.Description, " ("+t.TZ+")") // words that name the zone already
		fmt.Fprintf(tw, "%s\t%s\t%s, %s\n", t.Name, t.Expression, words, t.TZ)
	}
	tw.Flush()
}
