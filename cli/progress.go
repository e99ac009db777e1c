package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// progress reports the state of a long wait, one line per change, so that
// it reads the same on a terminal, in a log file and in CI.
type progress struct {
	w    io.Writer
	last string
}

func newProgress(w io.Writer) *progress { return &progress{w: w} }

// report prints the message unless it is the one printed last.
func (p *progress) report(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if msg == p.last {
		return
	}
	p.last = msg
	fmt.Fprintln(p.w, msg)
}

// errTimedOut ends a wait whose deadline passed.
var errTimedOut = errors.New("timed out")

// pollUntil calls cond every pollInterval until it reports done or fails,
// or until deadline passes (errTimedOut). Requests inside cond run with
// ctx, not with the deadline, so that a timeout is never mistaken for a
// failing server.
func pollUntil(ctx context.Context, deadline time.Time, cond func(context.Context) (bool, error)) error {
	for {
		done, err := cond(ctx)
		if err != nil || done {
			return err
		}
		remaining := time.Until(deadline)
		if remaining <= 0 {
			return errTimedOut
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(pollInterval, remaining)):
		}
	}
}
