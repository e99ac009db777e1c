package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Progress reports the state of a long wait, one line per change, so that
// it reads the same on a terminal, in a log file and in CI.
type Progress struct {
	w    io.Writer
	last string
	// since is when last was first reported; hinted is the line whose
	// hint was printed.
	since  time.Time
	hinted string
	now    func() time.Time
}

// NewProgress reports to w.
func NewProgress(w io.Writer) *Progress { return &Progress{w: w, now: time.Now} }

// slowWait is how long one state of a wait lasts before its progress
// line adds a hint about what may be wrong. Every step a wait watches
// (the hub accepting a cluster, an agent joining, applying a work) takes
// a few seconds when all is well; 20 s without change is worth a look.
const slowWait = 20 * time.Second

// Wait reports what a wait is at, as "prefix: state". A state may end
// with a hint in parentheses, e.g. "its agent has not joined yet (see
// `flotilla describe cluster c1`)": the hint is left out while things are
// merely in progress, and printed once, with the command that shows the
// cause, when the same state has lasted slowWait.
func (p *Progress) Wait(prefix, state string) {
	what, hint := SplitHint(state)
	line := prefix + ": " + what
	if line != p.last {
		p.since = p.now()
	}
	p.Report("%s", line)
	if hint != "" && p.hinted != line && p.now().Sub(p.since) >= slowWait {
		p.hinted = line
		fmt.Fprintf(p.w, "  Still so after %s: %s\n", slowWait, hint)
	}
}

// SplitHint cuts a final parenthesised hint off a state.
func SplitHint(state string) (what, hint string) {
	if !strings.HasSuffix(state, ")") {
		return state, ""
	}
	depth := 0
	for i := len(state) - 1; i >= 0; i-- {
		switch state[i] {
		case ')':
			depth++
		case '(':
			if depth--; depth == 0 {
				if i == 0 || state[i-1] != ' ' {
					return state, ""
				}
				return state[:i-1], state[i+1 : len(state)-1]
			}
		}
	}
	return state, ""
}

// Report prints the message unless it is the one printed last.
func (p *Progress) Report(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if msg == p.last {
		return
	}
	p.last = msg
	fmt.Fprintln(p.w, msg)
}

// ErrTimedOut ends a wait whose deadline passed.
var ErrTimedOut = errors.New("timed out")

// PollUntil calls cond every PollInterval until it reports done or fails,
// or until deadline passes (ErrTimedOut). Requests inside cond run with
// ctx, not with the deadline, so that a timeout is never mistaken for a
// failing server.
func PollUntil(ctx context.Context, deadline time.Time, cond func(context.Context) (bool, error)) error {
	for {
		done, err := cond(ctx)
		if err != nil || done {
			return err
		}
		remaining := time.Until(deadline)
		if remaining <= 0 {
			return ErrTimedOut
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(PollInterval, remaining)):
		}
	}
}
