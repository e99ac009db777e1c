// Package policy is `flotilla policy test`: evaluate OCM Policies against
// a directory of objects or a cluster, with the agent's own engine, and
// say what each would find and what enforce would change.
package policy
