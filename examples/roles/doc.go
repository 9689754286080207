// Command roles shows process roles (crontab.WithTasks): one package of
// annotated types, ./tasks, with two periodic tasks ("send reminders"
// every second, "report" every two seconds) and a job type ("send sms"),
// built once and run as two fleets on one Redis namespace.
//
// A local and a remote runner: the scheduler fleet (-role scheduler; a
// few processes, next to the database, say) registers and fires only the
// periodic tasks; the worker fleet (-role worker; as many processes as the
// jobs need, elsewhere) runs only the "send sms" jobs. "send reminders"
// enqueues a "send sms" job at each instant, so the two cooperate through
// the queue:
//
//	REDIS_URL=redis://127.0.0.1:6379 go run ./examples/roles -role scheduler &
//	REDIS_URL=redis://127.0.0.1:6379 go run ./examples/roles -role scheduler &
//	REDIS_URL=redis://127.0.0.1:6379 go run ./examples/roles -role worker &
//	REDIS_URL=redis://127.0.0.1:6379 go run ./examples/roles -role worker &
//
// What each fleet leaves alone it leaves exactly as it is: a scheduler
// process claims no "send sms" job (the job claim takes only jobs of the
// process's types), a worker passes over the periodic tasks without a
// record, neither prunes nor re-registers the other's tasks, and each
// instant of a periodic task is split among the scheduler processes only
// (the processes that run its type). Every instant fires once and every
// job runs once, in a process of the right fleet; nothing is
// dead-lettered. The end-to-end test TestExampleRoles runs two processes
// of each fleet and checks exactly that.
//
// A fleet's processes are interchangeable: stop one and the others carry
// on. Stop a whole fleet and its work waits in Redis (the jobs in the
// queue, the tasks' instants, then one catch-up fire per misfire policy)
// until a process of it runs again.
package main
