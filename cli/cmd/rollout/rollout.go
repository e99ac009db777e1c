package rollout

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
	"github.com/flotilla-io/flotilla/cli/cmdutil/workview"
)

// NewCommand is `flotilla rollout`: the revisions of a ManifestWorkReplicaSet
// and its rollout across the fleet.
func NewCommand(g *cmdutil.Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout",
		Short: "Show, undo, pause, resume or follow the rollout of a ManifestWorkReplicaSet",
		Long: `Every change of a ManifestWorkReplicaSet's template, overrides or replica
division is a revision the hub keeps (the last 10). Its rollout sends the
current revision to the clusters its Placements choose, in the order and
pace of their rollout strategies; with spec.rollback, a revision that fails
its gate is rolled back automatically (see docs/rollback.md).

  history   list the revisions: when, who, what changed, how many clusters carry each
  undo      go back to an earlier revision (by default the one before the current)
  pause     stop writing the current revision to more clusters
  resume    go on
  status    wait until the rollout is complete, printing its progress`,
		Example: `  flotilla rollout history web -n apps
  flotilla rollout status web -n apps --timeout 10m
  flotilla rollout undo web -n apps
  flotilla rollout pause web -n apps`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("name what to do: flotilla rollout history|undo|pause|resume|status NAME -n NAMESPACE")
			}
			return fmt.Errorf("flotilla rollout does not know %q: it can show the history, undo, pause, resume or follow the status", args[0])
		},
	}
	cmd.AddCommand(newHistoryCommand(g), newUndoCommand(g), newPauseCommand(g, true), newPauseCommand(g, false), newStatusCommand(g))
	return cmd
}

// target is the replica set a rollout command acts on: NAME and -n.
type target struct {
	*cmdutil.Globals
	namespace string
}

// addTo adds -n and the completion of NAME to cmd.
func (t *target) addTo(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&t.namespace, "namespace", "n", "", "the namespace of the ManifestWorkReplicaSet (default: the kubeconfig context's, else default)")
	cmd.ValidArgsFunction = cmdutil.CompleteObjectNames(t.Globals, func() client.ObjectList { return &workv1alpha1.ManifestWorkReplicaSetList{} }, &t.namespace)
}

// nameArg takes exactly one NAME.
func nameArg(usage string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("name one ManifestWorkReplicaSet (got %d): %s", len(args), usage)
		}
		return nil
	}
}

// get reads the replica set NAME, saying how to find it when it is not there.
func (t *target) get(ctx context.Context, c *cmdutil.Clients, name string) (*workv1alpha1.ManifestWorkReplicaSet, error) {
	key := client.ObjectKey{Namespace: t.NamespaceFlag(t.namespace), Name: name}
	rs := &workv1alpha1.ManifestWorkReplicaSet{}
	if err := c.Ctrl.Get(ctx, key, rs); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("ManifestWorkReplicaSet %s not found in namespace %s (see `%s get works --replicasets` lists them everywhere; pass its namespace with -n)", key.Name, key.Namespace, cmdutil.Self())
		}
		return nil, cmdutil.ExplainClusterAPI(err, c, "get ManifestWorkReplicaSet "+key.String())
	}
	return rs, nil
}

// getWithRevisions connects to the hub and reads the replica set NAME and
// its revisions.
func (t *target) getWithRevisions(ctx context.Context, name string) (*cmdutil.Clients, *workv1alpha1.ManifestWorkReplicaSet, []workview.Revision, error) {
	c, err := t.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return nil, nil, nil, err
	}
	rs, err := t.get(ctx, c, name)
	if err != nil {
		return nil, nil, nil, err
	}
	revs, err := workview.LoadRevisions(ctx, c.Ctrl, rs)
	if err != nil {
		return nil, nil, nil, cmdutil.ExplainClusterAPI(err, c, "read the revisions")
	}
	return c, rs, revs, nil
}
