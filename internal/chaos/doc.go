// Package chaos is the chaos soak of the scheduler (cmd/crontabchaos, make
// chaos, and TestChaosSoak in make test): worker processes of the
// scheduler generated for package tasks, and a producer of delayed jobs,
// against a private redis-server with appendonly yes and appendfsync
// always, while faults from a seeded plan hit them.
//
// The parts, one file each:
//
//   - plan.go: the fault plan, a pure function of the seed (Plan);
//   - fleet.go: the supervisor of the worker processes (start, SIGKILL,
//     SIGSTOP/SIGCONT, SIGTERM, restart), which records when each process
//     lived and was stopped;
//   - proxy.go: the in-process toxiproxy proxies, one per worker slot and
//     one for the producer, which add latency and cut connections;
//   - producer.go: enqueues jobs with due times and ids of its own through
//     its proxy, cancels some, and records what each call returned;
//   - worker.go: the worker mode of the soak's own executable (WorkerArg);
//     its handlers (package tasks) journal every start and end, fsync'd;
//   - check.go: the checker, over the journals, the history (read with the
//     public Inspector.History) and what the producer and supervisor saw;
//   - chaos.go: Run, which puts them together, and the Report.
//
// Workers reach Redis only through their proxies; the harness and the
// checker talk to it directly. The checker asserts the guarantees of
// runtime/doc.go, no stronger: see RELIABILITY.md, "Chaos soak".
package chaos
