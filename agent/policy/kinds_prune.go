package policy

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	"github.com/flotilla-io/flotilla/internal/policykinds"
)

var (
	crdResource                = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	constraintTemplateResource = schema.GroupVersionResource{Group: policykinds.GatekeeperTemplatesGroup, Version: "v1", Resource: "constrainttemplates"}
)

// pruneOtherKinds deletes the CertificatePolicies and Gatekeeper objects of
// policy that keep (nil: every one) does not hold: templates removed from
// the policy, or the whole policy. Gatekeeper objects are looked for only
// once this agent applied one, or found Gatekeeper's CRD on start.
func (r *reconciler) pruneOtherKinds(ctx context.Context, policy string, keep map[string]bool) error {
	var errs []error
	certs := &policyv1.CertificatePolicyList{}
	if err := r.spoke.policies.List(ctx, certs, client.InNamespace(r.cfg.ClusterName), client.MatchingLabels{policyv1.PolicyLabel: policy}); err != nil {
		errs = append(errs, fmt.Errorf("list the policy's CertificatePolicies on the managed cluster: %w", err))
	}
	for i := range certs.Items {
		if !keep[otherKey(policyv1.CertificatePolicyKind, certs.Items[i].Name)] {
			r.watches.track(user(policy, certs.Items[i].Name), nil)
			if err := r.spoke.policies.Delete(ctx, &certs.Items[i]); client.IgnoreNotFound(err) != nil {
				errs = append(errs, fmt.Errorf("delete CertificatePolicy %s on the managed cluster: %w", certs.Items[i].Name, err))
			}
		}
	}
	if r.gatekeeper.Load() {
		errs = append(errs, r.pruneGatekeeper(ctx, policy, keep))
	}
	return errors.Join(errs...)
}

// pruneGatekeeper deletes the ConstraintTemplates and constraints of
// policy that keep does not hold.
func (r *reconciler) pruneGatekeeper(ctx context.Context, policy string, keep map[string]bool) error {
	sel := labels.SelectorFromSet(labels.Set{policyv1.PolicyLabel: policy, policyv1.ClusterNameLabel: r.cfg.ClusterName}).String()
	resources := []schema.GroupVersionResource{constraintTemplateResource}
	crds, err := r.spoke.dynamic.Resource(crdResource).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list the CRDs of Gatekeeper's constraints: %w", err)
	}
	for _, crd := range crds.Items {
		if g, _, _ := unstructured.NestedString(crd.Object, "spec", "group"); g == policykinds.GatekeeperConstraintsGroup {
			plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
			m, err := r.spoke.mapper.RESTMapping(schema.GroupKind{Group: g, Kind: kindOf(&crd)})
			if err == nil {
				resources = append(resources, m.Resource)
			} else if plural != "" {
				resources = append(resources, schema.GroupVersionResource{Group: g, Version: "v1beta1", Resource: plural})
			}
		}
	}
	var errs []error
	for _, res := range resources {
		list, err := r.spoke.dynamic.Resource(res).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, o := range list.Items {
			if keep[otherKey(o.GetKind(), o.GetName())] {
				continue
			}
			r.watches.track(user(policy, o.GetName()), nil)
			if err := r.spoke.dynamic.Resource(res).Delete(ctx, o.GetName(), metav1.DeleteOptions{}); client.IgnoreNotFound(err) != nil {
				errs = append(errs, fmt.Errorf("delete %s %s on the managed cluster: %w", o.GetKind(), o.GetName(), err))
				continue
			}
			klog.FromContext(ctx).V(1).Info("Removed a Gatekeeper object of a removed policy template", "kind", o.GetKind(), "name", o.GetName())
		}
	}
	return errors.Join(errs...)
}

// kindOf is the kind a CRD serves.
func kindOf(crd *unstructured.Unstructured) string {
	k, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	return k
}
