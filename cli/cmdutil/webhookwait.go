package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// webhookUnavailable says whether err is the API server failing to call an
// admission webhook: a 500 "failed calling webhook" (nothing listens at
// the webhook's address, or it does not answer). Nothing was written, so
// the request may be sent again. A hub that restarts serves its API a few
// moments before its webhook, and a webhook that refuses the object
// answers 4xx, never this.
func webhookUnavailable(err error) bool {
	return apierrors.IsInternalError(err) && strings.Contains(err.Error(), "failed calling webhook")
}

// WebhookWaitOf is how long the writes of cmd ride out an unavailable
// webhook: its --timeout, or DefaultWaitTimeout for a command without one.
func WebhookWaitOf(cmd *cobra.Command) time.Duration {
	if f := cmd.Flags().Lookup("timeout"); f != nil && f.Value.Type() == "duration" {
		if d, err := time.ParseDuration(f.Value.String()); err == nil && d > 0 {
			return d
		}
	}
	return DefaultWaitTimeout
}

// waitingForWebhook wraps c so that its creates, updates and patches that
// fail because the API server cannot call a webhook are sent again until
// g.WebhookWait has passed since the clients were made (as the command
// starts), saying once on progress that
// they wait.
func (g *Globals) waitingForWebhook(c client.Client, where string) client.Client {
	deadline := time.Now().Add(g.WebhookWait)
	prog := NewProgress(g.Streams.ErrOut)
	retry := func(ctx context.Context, write func() error) error {
		for {
			err := write()
			if !webhookUnavailable(err) {
				return err
			}
			remaining := time.Until(deadline)
			if remaining <= 0 {
				return fmt.Errorf("timed out after --timeout %s waiting for %s to reach its admission webhook: %w\n"+
					"The hub serves that webhook: check that flotilla-hub runs and has said that it is ready", g.WebhookWait, where, err)
			}
			prog.Report("Waiting for %s to reach its admission webhook: %v", where, err)
			select {
			case <-ctx.Done():
				return errors.Join(ctx.Err(), err)
			case <-time.After(min(PollInterval, remaining)):
			}
		}
	}
	return webhookWaitingClient{Client: c, retry: retry}
}

// webhookWaitingClient is a client whose writes go through retry.
type webhookWaitingClient struct {
	client.Client
	retry func(ctx context.Context, write func() error) error
}

func (c webhookWaitingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	return c.retry(ctx, func() error { return c.Client.Create(ctx, obj, opts...) })
}

func (c webhookWaitingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return c.retry(ctx, func() error { return c.Client.Update(ctx, obj, opts...) })
}

func (c webhookWaitingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return c.retry(ctx, func() error { return c.Client.Patch(ctx, obj, patch, opts...) })
}
