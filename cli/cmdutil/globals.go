package cmdutil

import (
	"fmt"
	"io"
	"os"
	"time"
)

// NamespaceFlag resolves -n as kubectl does: the flag, else the
// kubeconfig context's namespace, else "default".
func (g *Globals) NamespaceFlag(flag string) string {
	if flag != "" {
		return flag
	}
	if ns, _, err := g.ClientConfig().Namespace(); err == nil && ns != "" {
		return ns
	}
	return "default"
}

// IOStreams are where a command reads its input and writes its output.
type IOStreams struct {
	// In is standard input.
	In io.Reader
	// Out receives results: tables, join commands, JSON and YAML.
	Out io.Writer
	// ErrOut receives progress, notes, warnings and errors.
	ErrOut io.Writer
}

// StdStreams returns the streams of the process.
func StdStreams() IOStreams {
	return IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
}

// Globals are the flags every command shares.
type Globals struct {
	Streams    IOStreams
	Kubeconfig string
	Context    string
	// WebhookWait is how long the command's writes wait for an admission
	// webhook that the API server cannot call (see waitingForWebhook).
	WebhookWait time.Duration
}

// Notef writes a progress or status line to standard error.
func (g *Globals) Notef(format string, args ...any) {
	fmt.Fprintf(g.Streams.ErrOut, format+"\n", args...)
}
