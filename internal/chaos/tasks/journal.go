package tasks

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	crontab "github.com/gocrontab/crontab/runtime"
)

// Kind says whether an event is a handler's start or its end.
type Kind byte

// The event kinds.
const (
	Start Kind = 'S'
	End   Kind = 'E'
)

// Event is one line of a journal.
type Event struct {
	Kind Kind
	// Task is the task's or job type's name.
	Task string
	// Fire is the scheduled instant (a job's due time as the runtime saw it).
	Fire time.Time
	// JobID is set for jobs.
	JobID string
	// Attempt counts from 1.
	Attempt int
	// Process is the scheduler's process id.
	Process string
	// Wall is the local clock when the line was written.
	Wall time.Time
}

// line is e in the journal's format: kind, task, fire (unix ms), job id or
// "-", attempt, process, wall (unix ns), separated by tabs. Task names may
// hold spaces, never tabs.
func (e Event) line() string {
	job := e.JobID
	if job == "" {
		job = "-"
	}
	return fmt.Sprintf("%c\t%s\t%d\t%s\t%d\t%s\t%d\n", e.Kind, e.Task, e.Fire.UnixMilli(), job, e.Attempt, e.Process, e.Wall.UnixNano())
}

func parseEvent(s string) (Event, bool) {
	f := strings.Split(s, "\t")
	if len(f) != 7 || len(f[0]) != 1 || (f[0][0] != byte(Start) && f[0][0] != byte(End)) {
		return Event{}, false
	}
	fire, err1 := strconv.ParseInt(f[2], 10, 64)
	attempt, err2 := strconv.Atoi(f[4])
	wall, err3 := strconv.ParseInt(f[6], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return Event{}, false
	}
	e := Event{Kind: Kind(f[0][0]), Task: f[1], Fire: time.UnixMilli(fire), JobID: f[3], Attempt: attempt,
		Process: f[5], Wall: time.Unix(0, wall)}
	if e.JobID == "-" {
		e.JobID = ""
	}
	return e, true
}

// Writer appends events to a journal file, one write and one fsync per
// line, so a process killed with SIGKILL loses at most the line it was
// writing. It is safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	f   *os.File
	err error // the first write error, reported by Close
}

// Create creates (or truncates) the journal at path.
func Create(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &Writer{f: f}, nil
}

func (w *Writer) write(k Kind, run crontab.RunInfo) {
	if w == nil {
		return
	}
	line := Event{Kind: k, Task: run.Task, Fire: run.Fire, JobID: run.JobID, Attempt: run.Attempt,
		Process: run.Process, Wall: time.Now()}.line()
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.f.WriteString(line); err != nil && w.err == nil {
		w.err = err
	}
	if err := w.f.Sync(); err != nil && w.err == nil {
		w.err = err
	}
}

// Close closes the file and returns the first error of any write.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.f.Close()
	if w.err != nil {
		return w.err
	}
	return err
}

// Read returns the events of the journal at path. A line that does not
// parse (the last one, cut by a SIGKILL) is counted in bad and skipped.
func Read(path string) (events []Event, bad int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if e, ok := parseEvent(sc.Text()); ok {
			events = append(events, e)
		} else {
			bad++
		}
	}
	return events, bad, sc.Err()
}
