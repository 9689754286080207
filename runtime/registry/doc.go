// Package registry holds the task and job types a process knows: the
// TaskInterface every task implements, the TaskConfig that describes one,
// and the Registry that validates configs and resolves names to types. It
// has no Redis dependency, so the generator (crontabgen) validates
// directives with it exactly as the generated Register will, without
// linking the scheduler.
//
// The runtime package (github.com/gocrontab/crontab/runtime, imported as
// crontab) re-exports the names of this package but Entry, so generated
// code and applications write crontab.TaskConfig, crontab.NewRegistry and
// so on.
package registry
