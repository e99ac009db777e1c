package rollout

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/cli/cmdutil/workview"
)

type statusOptions struct {
	target
	timeout time.Duration
	watch   bool
}

func newStatusCommand(g *cmdutil.Globals) *cobra.Command {
	o := &statusOptions{target: target{Globals: g}}
	cmd := &cobra.Command{
		Use:   "status NAME [-n NAMESPACE] [--timeout D] [--watch=false]",
		Short: "Wait until the rollout of a ManifestWorkReplicaSet is complete, printing its progress",
		Long: `Follow the rollout of ManifestWorkReplicaSet NAME as kubectl rollout status
follows a Deployment's: a line each time a cluster's state or the
rollout's changes, until the hub reports it complete and every chosen
cluster's agent reports the current revision Applied and Available
(exit code 0). It fails (exit code 1, saying why) when the rollout
stopped because clusters failed, when the current revision failed and
the hub rolled it back (it waits until the rollback has ended), and after
--timeout. A paused rollout is waited for.

With --watch=false, print the state once: exit code 0 unless the rollout
stopped, or its revision failed.`,
		Example: `  flotilla rollout status web -n apps
  flotilla rollout status web -n apps --timeout 30m
  flotilla rollout status web -n apps --watch=false`,
		Args: nameArg("flotilla rollout status NAME [-n NAMESPACE]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.timeout <= 0 {
				return fmt.Errorf("--timeout %s must be positive", o.timeout)
			}
			return o.run(cmd.Context(), args[0])
		},
	}
	o.addTo(cmd)
	cmd.Flags().DurationVar(&o.timeout, "timeout", cmdutil.DefaultWaitTimeout, "how long to wait in all")
	cmd.Flags().BoolVarP(&o.watch, "watch", "w", true, "wait for the end of the rollout; false prints its state once")
	return cmd
}

func (o *statusOptions) run(ctx context.Context, name string) error {
	c, err := o.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	rs, err := o.get(ctx, c, name)
	if err != nil {
		return err
	}
	key := client.ObjectKeyFromObject(rs)
	err = workview.RolloutWait{Out: o.Streams.Out, Timeout: o.timeout, Once: !o.watch,
		StoppedHint: fmt.Sprintf("Fix the spec and apply it again, or go back with %s rollout undo %s -n %s; see %s describe work %s -n %s",
			cmdutil.Self(), key.Name, key.Namespace, cmdutil.Self(), key.Name, key.Namespace),
	}.Run(ctx, c, key)
	if err != nil {
		return err
	}
	if o.watch {
		fmt.Fprintf(o.Streams.Out, "ManifestWorkReplicaSet %s successfully rolled out.\n", key)
	}
	return nil
}
