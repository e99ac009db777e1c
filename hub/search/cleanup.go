package search

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	"github.com/flotilla-io/flotilla/hub/search/store"
)

// unavailableRequeue is how soon a cleanup the database refused is tried
// again.
const unavailableRequeue = 10 * time.Second

// Setup runs s's cleanup in mgr: a deleted ManagedCluster's rows go, and
// at the start the rows of every cluster the hub no longer has. It also
// lets the query read SearchConfig default from mgr's cache.
func (s *Server) Setup(mgr manager.Manager) error {
	s.mu.Lock()
	s.config = mgr.GetClient()
	s.mu.Unlock()
	c := &cleanup{client: mgr.GetClient(), store: s.store}
	if err := mgr.Add(manager.RunnableFunc(c.sweep)); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("search-cleanup").
		For(&clusterv1.ManagedCluster{}, builder.WithPredicates(predicate.Funcs{
			// Only a deletion concerns the index; the sweep covers those
			// that happened while the hub did not run.
			CreateFunc: func(event.CreateEvent) bool { return false },
			UpdateFunc: func(event.UpdateEvent) bool { return false },
		})).
		Complete(c)
}

// cleanup deletes the rows of clusters the hub no longer has.
type cleanup struct {
	client client.Client
	store  store.Store
}

func (c *cleanup) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var mc clusterv1.ManagedCluster
	err := c.client.Get(ctx, req.NamespacedName, &mc)
	if err == nil || !apierrors.IsNotFound(err) {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	return c.forget(ctx, req.Name)
}

func (c *cleanup) forget(ctx context.Context, cluster string) (reconcile.Result, error) {
	if err := c.store.DeleteCluster(ctx, cluster); err != nil {
		klog.FromContext(ctx).Info("Cannot delete a deleted cluster's search index rows; retrying", "cluster", cluster, "reason", err.Error())
		return reconcile.Result{RequeueAfter: unavailableRequeue}, nil
	}
	klog.FromContext(ctx).Info("Deleted a deleted cluster's search index rows", "cluster", cluster)
	return reconcile.Result{}, nil
}

// sweep deletes, once at the start, the rows of clusters the hub no
// longer has, retrying while the database does not answer.
func (c *cleanup) sweep(ctx context.Context) error {
	for {
		err := c.sweepOnce(ctx)
		if err == nil {
			return nil
		}
		klog.FromContext(ctx).Info("Cannot sweep the search index of deleted clusters; retrying", "reason", err.Error(), "retryIn", unavailableRequeue)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(unavailableRequeue):
		}
	}
}

func (c *cleanup) sweepOnce(ctx context.Context) error {
	held, err := c.store.Clusters(ctx)
	if err != nil {
		return err
	}
	var list clusterv1.ManagedClusterList
	if err := c.client.List(ctx, &list); err != nil {
		return fmt.Errorf("list the ManagedClusters: %w", err)
	}
	for _, mc := range list.Items {
		delete(held, mc.Name)
	}
	for cluster := range held {
		if err := c.store.DeleteCluster(ctx, cluster); err != nil {
			return err
		}
		klog.FromContext(ctx).Info("Deleted the search index rows of a cluster the hub no longer has", "cluster", cluster)
	}
	return nil
}
