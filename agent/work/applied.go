package work

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// errAppliedDeleting says that the AppliedManifestWork of an earlier work
// of the same name is still being removed.
var errAppliedDeleting = errors.New("the AppliedManifestWork of an earlier ManifestWork of this name is still being deleted")

// getApplied returns the work's AppliedManifestWork, or nil when there is
// none. It reads the spoke only when the watch says the record changed
// since the agent last read or wrote it.
func (r *reconciler) getApplied(ctx context.Context, s *scope) (*workv1.AppliedManifestWork, error) {
	name := AppliedManifestWorkName(r.hubHash, s.work.Name)
	if a := s.state.applied; a != nil && r.watcher.current(appliedGVR, "", name, a.ResourceVersion) {
		return a, nil
	}
	if s.state.applied == nil && r.watcher.absent(appliedGVR, "", name) {
		// A new work: ensureApplied creates the record, and reads it
		// should it exist after all.
		return nil, nil
	}
	a := &workv1.AppliedManifestWork{}
	err := r.spoke.applied.Get(ctx, client.ObjectKey{Name: name}, a)
	switch {
	case apierrors.IsNotFound(err):
		s.state.applied = nil
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read AppliedManifestWork %s: %w", name, err)
	}
	s.state.applied = a
	return a, nil
}

// ensureApplied makes sure the work has its AppliedManifestWork, the owner
// of everything it applies, belonging to this agent and not being evicted.
func (r *reconciler) ensureApplied(ctx context.Context, s *scope) (err error) {
	if s.refused != "" {
		return nil
	}
	defer func() {
		if err != nil {
			// What the pass changed in memory was not written: read again.
			s.state.applied = nil
		}
	}()
	a, err := r.getApplied(ctx, s)
	if err != nil {
		return err
	}
	if a == nil {
		a = &workv1.AppliedManifestWork{
			ObjectMeta: metav1.ObjectMeta{Name: AppliedManifestWorkName(r.hubHash, s.work.Name), Labels: r.appliedLabels()},
			Spec:       workv1.AppliedManifestWorkSpec{HubHash: r.hubHash, AgentID: r.agentID, ManifestWorkName: s.work.Name},
		}
		err := r.spoke.applied.Create(ctx, a)
		if apierrors.IsAlreadyExists(err) {
			// Created by an earlier pass that the watch has not shown yet.
			err = r.spoke.applied.Get(ctx, client.ObjectKeyFromObject(a), a)
		}
		if err != nil {
			return fmt.Errorf("create AppliedManifestWork %s: %w", a.Name, err)
		}
	}
	if !a.DeletionTimestamp.IsZero() {
		s.requeueAfter(time.Second)
		return errAppliedDeleting
	}
	if k := a.Labels[AgentLabel]; k != "" && k != r.agentKey {
		// Two clusters of one hub share this spoke, and both have a work of
		// this name: AppliedManifestWork names cannot tell them apart.
		s.refused = fmt.Sprintf("AppliedManifestWork %s belongs to another cluster's agent on this managed cluster (cluster %q); give the ManifestWork another name",
			a.Name, a.Labels[clusterv1.ClusterNameLabel])
		return nil
	}
	if a.Spec.AgentID != r.agentID || a.Labels[AgentLabel] != r.agentKey || a.Labels[clusterv1.ClusterNameLabel] != r.cfg.ClusterName {
		// Adopt a record of an earlier agent of this cluster.
		before := a.DeepCopy()
		a.Spec.AgentID = r.agentID
		if a.Labels == nil {
			a.Labels = map[string]string{}
		}
		maps.Copy(a.Labels, r.appliedLabels())
		if err := r.spoke.applied.Patch(ctx, a, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("adopt AppliedManifestWork %s: %w", a.Name, err)
		}
	}
	if a.Status.EvictionStartTime != nil {
		before := a.DeepCopy()
		a.Status.EvictionStartTime = nil
		if err := r.spoke.applied.Status().Patch(ctx, a, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("stop the eviction of AppliedManifestWork %s: %w", a.Name, err)
		}
	}
	s.applied, s.state.applied = a, a
	return nil
}

// recordApplied writes the objects the work applied, and those it still
// waits to be deleted, into the AppliedManifestWork's status.
func (r *reconciler) recordApplied(ctx context.Context, s *scope) error {
	if s.applied == nil {
		return nil
	}
	var list []workv1.AppliedManifestResourceMeta
	seen := map[workv1.ResourceIdentifier]bool{}
	for _, m := range s.manifests {
		id := m.key.identity()
		if !m.result.owned || seen[id] {
			continue
		}
		seen[id] = true
		list = append(list, workv1.AppliedManifestResourceMeta{ResourceIdentifier: id, Version: m.key.Version})
	}
	// An object whose manifest failed this time is still the work's.
	current := s.identities()
	for _, e := range s.applied.Status.AppliedResources {
		if !seen[e.ResourceIdentifier] && current[e.ResourceIdentifier] {
			seen[e.ResourceIdentifier] = true
			list = append(list, e)
		}
	}
	for _, e := range s.leftover {
		if !seen[e.ResourceIdentifier] {
			seen[e.ResourceIdentifier] = true
			list = append(list, e)
		}
	}
	slices.SortFunc(list, func(a, b workv1.AppliedManifestResourceMeta) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Resource, b.Resource), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	if equality.Semantic.DeepEqual(list, s.applied.Status.AppliedResources) {
		return nil
	}
	before := s.applied.DeepCopy()
	s.applied.Status.AppliedResources = list
	if err := r.spoke.applied.Status().Patch(ctx, s.applied, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		s.state.applied = nil
		return fmt.Errorf("record what ManifestWork %s applied in AppliedManifestWork %s: %w", s.work.Name, s.applied.Name, err)
	}
	s.state.applied = s.applied
	return nil
}

// identities are the objects the work's manifests name, read-only ones
// aside, which the work never owns.
func (s *scope) identities() map[workv1.ResourceIdentifier]bool {
	ids := map[workv1.ResourceIdentifier]bool{}
	for _, m := range s.manifests {
		if m.invalid == nil && m.strategy != workv1.UpdateStrategyTypeReadOnly {
			ids[m.key.identity()] = true
		}
	}
	return ids
}

// appliedLabels are the labels of this agent's AppliedManifestWorks: the
// agent's key, which its watch selects, and the cluster's name, by which
// it finds its records of another hub.
func (r *reconciler) appliedLabels() map[string]string {
	return map[string]string{AgentLabel: r.agentKey, clusterv1.ClusterNameLabel: r.cfg.ClusterName}
}
