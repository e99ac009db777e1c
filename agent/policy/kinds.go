package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent/policy/engine"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

// otherKind evaluates a template of another kind than
// ConfigurationPolicy: a CertificatePolicy, kept on the spoke in the
// cluster's namespace with its status; a Gatekeeper ConstraintTemplate or
// constraint, applied to the spoke (Gatekeeper acts on it) and reported
// from what Gatekeeper writes in its status. Each reads the spoke through
// watches, and is evaluated again on their events.
func (r *reconciler) otherKind(ctx context.Context, s *scope, t engine.PolicyTemplate, d policyv1.DetailsPerTemplate) (policyv1.DetailsPerTemplate, error) {
	var cert *policyv1.CertificatePolicy
	var err error
	switch {
	case t.CertificatePolicy != nil:
		s.keepOther[otherKey(policyv1.CertificatePolicyKind, t.Name)] = true
		cert, err = r.ensureCertificatePolicy(ctx, s.policy, t.CertificatePolicy)
	case t.Gatekeeper != nil:
		s.keepOther[otherKey(t.Gatekeeper.GetKind(), t.Name)] = true
		err = r.applyGatekeeper(ctx, s.policy, t.Gatekeeper)
	}
	var invalid *invalidTemplateError
	if errors.As(err, &invalid) {
		r.templateError(s, &d, invalid)
		return d, nil
	}
	if err != nil {
		return d, err
	}
	u := user(s.policy.Name, t.Name)
	watched := r.watches.reader(r.spoke.mapper, u)
	res, err := engine.EvaluateKind(ctx, t, watched, s.now)
	if err != nil {
		return d, err
	}
	r.watches.track(u, watched.used)
	s.requeueAfter(res.Next)
	if cert != nil {
		if err := r.writeCertificateStatus(ctx, cert, res); err != nil {
			return d, err
		}
	}
	klog.FromContext(ctx).V(2).Info("Evaluated the policy template", "template", t.Name, "kind", t.Kind, "compliant", res.State)
	s.record(&d, res.State, res.Message, res.Results)
	return d, nil
}

// otherKey names a template of another kind in scope.keepOther.
func otherKey(kind, name string) string { return kind + "/" + name }

// ensureCertificatePolicy creates or updates the spoke's CertificatePolicy
// of template want of policy p, in the cluster's namespace.
func (r *reconciler) ensureCertificatePolicy(ctx context.Context, p *policyv1.Policy, want *policyv1.CertificatePolicy) (*policyv1.CertificatePolicy, error) {
	return ensureSpokeTemplate(ctx, r, p, "CertificatePolicy", want.Name, want.Annotations,
		func() *policyv1.CertificatePolicy { return &policyv1.CertificatePolicy{} },
		func(got *policyv1.CertificatePolicy) bool {
			if sameJSON(got.Spec, want.Spec) {
				return false
			}
			got.Spec = want.Spec
			return true
		})
}

// writeCertificateStatus records an evaluation in the spoke
// CertificatePolicy's status, when it changed.
func (r *reconciler) writeCertificateStatus(ctx context.Context, cp *policyv1.CertificatePolicy, res *engine.KindResult) error {
	if res.Certificates == nil || reflect.DeepEqual(statusWithoutExpiry(cp.Status), statusWithoutExpiry(*res.Certificates)) {
		return nil
	}
	cp.Status = *res.Certificates
	if err := r.spoke.policies.Status().Update(ctx, cp, client.FieldOwner(FieldManager)); err != nil {
		return fmt.Errorf("update the status of CertificatePolicy %s on the managed cluster: %w", cp.Name, err)
	}
	return nil
}

// statusWithoutExpiry is a status without the time left of each
// certificate, which changes with every evaluation.
func statusWithoutExpiry(st policyv1.CertificatePolicyStatus) policyv1.CertificatePolicyStatus {
	out := *st.DeepCopy()
	for ns, d := range out.CompliancyDetails {
		for name, c := range d.NonCompliantCertificatesList {
			c.Expiry = 0
			d.NonCompliantCertificatesList[name] = c
		}
		out.CompliancyDetails[ns] = d
	}
	return out
}

// applyGatekeeper creates or updates a Gatekeeper ConstraintTemplate or
// constraint on the spoke, labelled with its policy, as OCM's framework
// applies them whatever the remediationAction. A kind the spoke does not
// serve yet is left to the evaluation, which says so and watches for it.
// What Gatekeeper defaults in a spec is kept: only the template's fields
// are compared and patched; the status Gatekeeper writes is never touched.
func (r *reconciler) applyGatekeeper(ctx context.Context, p *policyv1.Policy, want *unstructured.Unstructured) error {
	gvk := want.GroupVersionKind()
	m, err := r.spoke.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return nil
	}
	if err != nil {
		return err
	}
	ri := r.spoke.dynamic.Resource(m.Resource)
	labels := r.templateLabels(p)
	got, err := ri.Get(ctx, want.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		obj := want.DeepCopy()
		l := obj.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		maps.Copy(l, labels)
		obj.SetLabels(l)
		if _, err := ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: FieldManager}); err != nil {
			return invalidOrForbidden(fmt.Errorf("Failed to create policy template: %w", err))
		}
		r.gatekeeper.Store(true)
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s %s on the managed cluster: %w", gvk.Kind, want.GetName(), err)
	}
	r.gatekeeper.Store(true)
	// One that no policy claims (made by hand) is taken over, as OCM's
	// framework applies over it; one of another policy is not.
	if owner := got.GetLabels()[policyv1.PolicyLabel]; owner != "" && owner != p.Name {
		return &invalidTemplateError{fmt.Errorf("the template name %s is taken: policy %q has a %s of that name on the managed cluster; policy template names must be unique on a cluster", want.GetName(), owner, gvk.Kind)}
	}
	spec, _ := want.Object["spec"].(map[string]any)
	if contains(got.Object["spec"], spec) && sameLabels(got.GetLabels(), labels) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}, "spec": spec})
	if err != nil {
		return err
	}
	if _, err := ri.Patch(ctx, want.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager}); err != nil {
		return invalidOrForbidden(fmt.Errorf("Failed to update policy template: %w", err))
	}
	return nil
}

// invalidOrForbidden marks errors that retrying cannot fix: the object is
// invalid, or the agent may not write it (its execution role).
func invalidOrForbidden(err error) error {
	if apierrors.IsForbidden(err) {
		return &invalidTemplateError{err}
	}
	return invalid(err)
}

// contains says whether have holds every field of want with its value
// (lists item by item).
func contains(have, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return len(w) == 0 && have == nil
		}
		for k, v := range w {
			if !contains(h[k], v) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok || len(h) != len(w) {
			return false
		}
		for i := range w {
			if !contains(h[i], w[i]) {
				return false
			}
		}
		return true
	case nil:
		return true
	}
	return sameJSON(have, want)
}
