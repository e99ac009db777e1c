// Package dev is `flotilla dev up|status|restart|down`: a hub, simulated
// clusters (flotilla-dev-cluster) and their agents as detached processes
// on this machine, initialised, joined and accepted as a user would, with
// a state file in the dev directory that records each process (pid and
// start time, so that a reused pid is never taken for one of them).
package dev
