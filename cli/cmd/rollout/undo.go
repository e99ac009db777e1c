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

type undoOptions struct {
	target
	toRevision int64
}

func newUndoCommand(g *cmdutil.Globals) *cobra.Command {
	o := &undoOptions{target: target{Globals: g}}
	cmd := &cobra.Command{
		Use:   "undo NAME [-n NAMESPACE] [--to-revision N]",
		Short: "Roll a ManifestWorkReplicaSet back to an earlier revision",
		Long: `Write the template, overrides and replica division of revision N (by
default the revision before the current one) back into ManifestWorkReplicaSet
NAME. The hub makes that revision the current one again (renumbered: it
takes the next number, as kubectl rollout undo does) and rolls it out by
the replica set's own strategy; clusters that already run it are not
touched. The write is refused if someone changed the spec after undo read
it. Follow the rollout with "flotilla rollout status NAME".`,
		Example: `  flotilla rollout undo web -n apps
  flotilla rollout undo web -n apps --to-revision 3 && flotilla rollout status web -n apps`,
		Args: nameArg("flotilla rollout undo NAME [-n NAMESPACE] [--to-revision N]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.toRevision < 0 {
				return fmt.Errorf("--to-revision %d: revisions are numbered from 1 (leave it out for the revision before the current one)", o.toRevision)
			}
			return o.run(cmd.Context(), args[0])
		},
	}
	o.addTo(cmd)
	cmd.Flags().Int64Var(&o.toRevision, "to-revision", 0, "the revision to go back to (default: the one before the current revision)")
	return cmd
}

// errSpecChanged refuses an undo whose replica set changed after it was read.
var errSpecChanged = errors.New("spec changed")

func (o *undoOptions) run(ctx context.Context, name string) error {
	c, rs, revs, err := o.getWithRevisions(ctx, name)
	if err != nil {
		return err
	}
	to, err := undoTarget(rs, revs, o.toRevision)
	if err != nil {
		return err
	}
	key := client.ObjectKeyFromObject(rs)
	if workview.SameRevisionData(to.Data, workview.SpecRevisionData(&rs.Spec)) {
		fmt.Fprintf(o.Streams.Out, "ManifestWorkReplicaSet %s is already at revision %d: nothing to undo.\n", key, to.Number)
		return nil
	}
	if err := applyRevision(ctx, c, rs, to); err != nil {
		if errors.Is(err, errSpecChanged) {
			return fmt.Errorf("nothing was undone: the spec of ManifestWorkReplicaSet %s changed after undo read it (someone else wrote it): see %s rollout history %s -n %s, then undo again",
				key, cmdutil.Self(), key.Name, key.Namespace)
		}
		return cmdutil.ExplainClusterAPI(err, c, "update ManifestWorkReplicaSet "+key.String())
	}
	fmt.Fprintf(o.Streams.Out, "ManifestWorkReplicaSet %s rolled back to revision %d (%s): the hub rolls it out by its strategy.\n", key, to.Number, cmdutil.OrDash(to.Summary))
	if workview.Paused(rs) {
		o.Notef("Its rollout is paused: nothing reaches the clusters until %s rollout resume %s -n %s.", cmdutil.Self(), key.Name, key.Namespace)
	}
	o.Notef("Follow it with: %s rollout status %s -n %s", cmdutil.Self(), key.Name, key.Namespace)
	return nil
}

// undoTarget is revision n, or with n 0 the one before the current
// revision (the newest, when the hub has not recorded the current spec
// yet: it will be the next).
func undoTarget(rs *workv1alpha1.ManifestWorkReplicaSet, revs []workview.Revision, n int64) (*workview.Revision, error) {
	if n > 0 {
		rev, err := findRevision(rs, revs, n)
		if err != nil {
			return nil, err
		}
		if rev.DataErr != "" {
			return nil, fmt.Errorf("revision %d of ManifestWorkReplicaSet %s/%s cannot be read (%s): undo to another one", n, rs.Namespace, rs.Name, rev.DataErr)
		}
		return rev, nil
	}
	cur := workview.CurrentRevision(revs)
	var before *workview.Revision
	for i := range revs {
		if revs[i].DataErr == "" && !revs[i].Current && (cur == nil || revs[i].Number < cur.Number) {
			before = &revs[i]
		}
	}
	if before == nil {
		return nil, fmt.Errorf("ManifestWorkReplicaSet %s/%s has no revision before the current one to go back to (it has revisions %s)",
			rs.Namespace, rs.Name, workview.RevisionNumbers(revs))
	}
	return before, nil
}

// applyRevision writes rev's data into the replica set's spec, with an
// optimistic lock: a conflict is retried only while what shapes the works
// is still what undo read (the hub writes the status and annotations
// meanwhile), and refused (errSpecChanged) once someone else changed it.
func applyRevision(ctx context.Context, c *cmdutil.Clients, read *workv1alpha1.ManifestWorkReplicaSet, rev *workview.Revision) error {
	seen := workview.SpecRevisionData(&read.Spec)
	cur := read.DeepCopy()
	for attempt := 0; ; attempt++ {
		if cur.Generation != read.Generation && !workview.SameRevisionData(workview.SpecRevisionData(&cur.Spec), seen) {
			return errSpecChanged
		}
		d := rev.Data.DeepCopy()
		cur.Spec.ManifestWorkTemplate, cur.Spec.Overrides, cur.Spec.ReplicaDivision = d.ManifestWorkTemplate, d.Overrides, d.ReplicaDivision
		err := c.Ctrl.Update(ctx, cur) // carries cur's resourceVersion: the lock
		if !apierrors.IsConflict(err) || attempt == 4 {
			return err
		}
		cur = &workv1alpha1.ManifestWorkReplicaSet{}
		if err := c.Ctrl.Get(ctx, client.ObjectKeyFromObject(read), cur); err != nil {
			return err
		}
	}
}
