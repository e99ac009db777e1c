package rollout

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/cli/cmdutil/workview"
)

// newPauseCommand is `rollout pause` (pause) or `rollout resume`.
func newPauseCommand(g *cmdutil.Globals, pause bool) *cobra.Command {
	t := &target{Globals: g}
	verb, long := "resume", `Remove annotation work.flotilla.io/paused from ManifestWorkReplicaSet
NAME: the hub goes on rolling out its current revision where it stopped.`
	if pause {
		verb, long = "pause", `Set annotation work.flotilla.io/paused=true on ManifestWorkReplicaSet NAME:
the hub writes the current revision to no more clusters (nor rolls one
back) until "flotilla rollout resume NAME". The clusters keep what they
have; PlacementRolledOut says the rollout is paused.`
	}
	cmd := &cobra.Command{
		Use:     verb + " NAME [-n NAMESPACE]",
		Short:   map[bool]string{true: "Pause the rollout of a ManifestWorkReplicaSet", false: "Resume the paused rollout of a ManifestWorkReplicaSet"}[pause],
		Long:    long,
		Example: fmt.Sprintf("  flotilla rollout %s web -n apps", verb),
		Args:    nameArg("flotilla rollout " + verb + " NAME [-n NAMESPACE]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return t.setPaused(cmd.Context(), args[0], pause)
		},
	}
	t.addTo(cmd)
	return cmd
}

func (t *target) setPaused(ctx context.Context, name string, pause bool) error {
	c, err := t.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	rs, err := t.get(ctx, c, name)
	if err != nil {
		return err
	}
	key := client.ObjectKeyFromObject(rs)
	switch {
	case workview.Paused(rs) == pause && pause:
		fmt.Fprintf(t.Streams.Out, "The rollout of ManifestWorkReplicaSet %s is already paused.\n", key)
		return nil
	case workview.Paused(rs) == pause:
		fmt.Fprintf(t.Streams.Out, "The rollout of ManifestWorkReplicaSet %s is not paused.\n", key)
		return nil
	}
	if err := workview.SetPaused(ctx, c.Ctrl, key, pause); err != nil {
		return cmdutil.ExplainClusterAPI(err, c, "annotate ManifestWorkReplicaSet "+key.String())
	}
	if pause {
		fmt.Fprintf(t.Streams.Out, "The rollout of ManifestWorkReplicaSet %s is paused: resume it with %s rollout resume %s -n %s\n", key, cmdutil.Self(), key.Name, key.Namespace)
	} else {
		fmt.Fprintf(t.Streams.Out, "The rollout of ManifestWorkReplicaSet %s is resumed.\n", key)
	}
	return nil
}
