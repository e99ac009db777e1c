// Package unjoin is `flotilla unjoin`: remove the agent that join
// installed from the managed cluster, leaving what the agent applied.
package unjoin
