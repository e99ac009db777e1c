package policy

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

// prepareSpoke makes the cluster's namespace on the spoke, where the
// agent keeps the policies' ConfigurationPolicies (OCM's agent keeps
// them in a namespace named after the cluster, and policies written for
// OCM look for them there), and moves those an older agent kept in its
// own namespace.
func (a *Agent) prepareSpoke(ctx context.Context) error {
	ns := &corev1.Namespace{}
	err := a.spoke.policies.Get(ctx, client.ObjectKey{Name: a.cfg.ClusterName}, ns)
	if apierrors.IsNotFound(err) {
		ns = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: a.cfg.ClusterName}}
		if err = a.spoke.policies.Create(ctx, ns, client.FieldOwner(FieldManager)); apierrors.IsAlreadyExists(err) {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("ensure namespace %s on the managed cluster, where the policies' ConfigurationPolicies are kept: %w", a.cfg.ClusterName, err)
	}
	if a.cfg.Namespace == a.cfg.ClusterName {
		return nil
	}
	return a.migrate(ctx)
}

// migrate moves the ConfigurationPolicies this agent made in its own
// namespace (those labelled with a policy of this cluster) to the
// cluster's namespace: each is created there with its spec, labels,
// annotations and status (history, related objects and the objects it
// created among them), as evaluated at the generation it gets, so that
// it is not due before its interval says and enforce does not act again
// on what it did; then the old one is deleted without pruning. A
// ConfigurationPolicy already in the new place wins over the old one.
func (a *Agent) migrate(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	old := &policyv1.ConfigurationPolicyList{}
	err := a.spoke.policies.List(ctx, old, client.InNamespace(a.cfg.Namespace),
		client.MatchingLabels{policyv1.ClusterNameLabel: a.cfg.ClusterName}, client.HasLabels{policyv1.PolicyLabel})
	if err != nil {
		return fmt.Errorf("list the ConfigurationPolicies of namespace %s to move them to namespace %s: %w", a.cfg.Namespace, a.cfg.ClusterName, err)
	}
	var errs []error
	for i := range old.Items {
		if err := a.move(ctx, &old.Items[i]); err != nil {
			errs = append(errs, err)
			continue
		}
		logger.Info("Moved a ConfigurationPolicy to the cluster's namespace", "template", old.Items[i].Name, "from", a.cfg.Namespace, "to", a.cfg.ClusterName)
	}
	return errors.Join(errs...)
}

// move moves one ConfigurationPolicy, as migrate says.
func (a *Agent) move(ctx context.Context, cp *policyv1.ConfigurationPolicy) error {
	moved := &policyv1.ConfigurationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: cp.Name, Namespace: a.cfg.ClusterName, Labels: cp.Labels, Annotations: cp.Annotations},
		Spec:       cp.Spec,
	}
	err := a.spoke.policies.Create(ctx, moved, client.FieldOwner(FieldManager))
	switch {
	case apierrors.IsAlreadyExists(err):
		// Moved already, by an earlier start that stopped before deleting.
	case err != nil:
		return fmt.Errorf("move ConfigurationPolicy %s to namespace %s: %w", cp.Name, a.cfg.ClusterName, err)
	default:
		moved.Status = *cp.Status.DeepCopy()
		if moved.Status.LastEvaluatedGeneration == cp.Generation {
			moved.Status.LastEvaluatedGeneration = moved.Generation
		}
		if err := a.spoke.policies.Status().Update(ctx, moved, client.FieldOwner(FieldManager)); err != nil {
			// The new one without its status would be evaluated afresh:
			// remove it, and move again on the next start.
			_ = a.spoke.policies.Delete(ctx, moved)
			return fmt.Errorf("move the status of ConfigurationPolicy %s to namespace %s: %w", cp.Name, a.cfg.ClusterName, err)
		}
	}
	if err := a.spoke.policies.Delete(ctx, cp, client.Preconditions{UID: &cp.UID}); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete ConfigurationPolicy %s of namespace %s once moved: %w", cp.Name, a.cfg.Namespace, err)
	}
	return nil
}
