package agent

import (
	"context"
	"errors"
)

// Run runs the agent until ctx ends.
func Run(ctx context.Context, opts Options) error {
	return errors.New("the agent is not implemented yet")
}
