// Package cmdutil is the library every flotilla command uses, so that the
// commands (cli/cmd/...) never need each other: Globals (the global flags
// and streams) and the Clients they make for the hub or a managed
// cluster; -o and the printers (tables, JSON, YAML, objects); Progress and
// PollUntil for waiting commands; errors in the what/where/how-to-fix style
// (Explain, ExplainClusterAPI); shell completion of the hub's object names;
// the --clusters vocabulary and the kind verbs (RunKindVerb); waiting for a
// starting hub or an unreachable admission webhook; table columns, label
// selectors and placement decisions. What only one command needs stays in
// that command's package; what belongs to one noun and several commands
// has a sub-package here (handshake, workview).
package cmdutil
