package delete

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

// runReplicaSet deletes ManifestWorkReplicaSet NAME of -n; with --wait it
// waits until the replica set and all its ManifestWorks are gone.
func (o *deleteWorkOptions) runReplicaSet(ctx context.Context, name string) error {
	c, err := o.ClientsFor(cmdutil.HubSide)
	if err != nil {
		return err
	}
	key := client.ObjectKey{Namespace: o.namespace, Name: name}
	rs := &workv1alpha1.ManifestWorkReplicaSet{}
	rs.Namespace, rs.Name = key.Namespace, key.Name
	if err := c.Ctrl.Delete(ctx, rs); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("ManifestWorkReplicaSet %s not found in namespace %s (see `flotilla get works --replicasets -n %s`; a ManifestWork of one cluster is deleted with --clusters)", name, o.namespace, o.namespace)
		}
		return cmdutil.ExplainClusterAPI(err, c, "delete ManifestWorkReplicaSet "+key.String())
	}
	if !o.wait {
		fmt.Fprintf(o.Streams.Out, "ManifestWorkReplicaSet %s of namespace %s is marked for deletion: the hub deletes its ManifestWorks, whose agents remove what they applied.\n", name, o.namespace)
		return nil
	}
	prog := cmdutil.NewProgress(o.Streams.ErrOut)
	var left []string
	err = cmdutil.PollUntil(ctx, time.Now().Add(o.timeout), func(ctx context.Context) (bool, error) {
		works := &workv1.ManifestWorkList{}
		if err := c.Ctrl.List(ctx, works, client.MatchingLabels{workv1.ManifestWorkReplicaSetLabel: key.Namespace + "." + key.Name}); err != nil {
			return false, cmdutil.ExplainClusterAPI(err, c, "list the ManifestWorks of ManifestWorkReplicaSet "+key.String())
		}
		left = left[:0]
		for _, w := range works.Items {
			left = append(left, w.Namespace)
		}
		err := c.Ctrl.Get(ctx, key, &workv1alpha1.ManifestWorkReplicaSet{})
		switch {
		case apierrors.IsNotFound(err) && len(left) == 0:
			return true, nil
		case err != nil && !apierrors.IsNotFound(err):
			return false, cmdutil.ExplainClusterAPI(err, c, "get ManifestWorkReplicaSet "+key.String())
		}
		if len(left) == 0 {
			prog.Report("Waiting for ManifestWorkReplicaSet %s to go: the hub is releasing it", key)
		} else {
			prog.Report("Waiting for ManifestWorkReplicaSet %s to go: the ManifestWorks of clusters %v remain", key, left)
		}
		return false, nil
	})
	if errors.Is(err, cmdutil.ErrTimedOut) {
		return fmt.Errorf("timed out after --timeout %s waiting for ManifestWorkReplicaSet %s to go: the ManifestWorks of clusters %v remain; each waits for its cluster's agent (see flotilla delete work %s --clusters CLUSTER --wait)", o.timeout, key, left, name)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Streams.Out, "ManifestWorkReplicaSet %s of namespace %s is deleted, with its ManifestWorks and what they applied.\n", name, o.namespace)
	return nil
}
