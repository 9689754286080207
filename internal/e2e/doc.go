// Package e2e holds the end-to-end tests of the scheduler: several real OS
// processes of the worker program (./worker) against a private
// redis-server, killed and skewed as the scheduler's guarantees demand.
package e2e
