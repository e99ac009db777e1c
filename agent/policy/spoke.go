package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/agent/policy/engine"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

// invalidTemplateError is a policy template that the spoke cannot hold as
// it is: it is reported, not retried.
type invalidTemplateError struct{ err error }

func (e *invalidTemplateError) Error() string { return e.err.Error() }
func (e *invalidTemplateError) Unwrap() error { return e.err }

// templateLabels are the labels of a policy's ConfigurationPolicies on the
// spoke, which tie them to the policy.
func (r *reconciler) templateLabels(p *policyv1.Policy) map[string]string {
	return map[string]string{
		policyv1.PolicyLabel:           p.Name,
		policyv1.ClusterNameLabel:      r.cfg.ClusterName,
		policyv1.ClusterNamespaceLabel: p.Namespace,
	}
}

// ensureTemplate creates or updates the spoke's ConfigurationPolicy of
// template want of policy p, in the cluster's namespace (named as the
// cluster, where OCM's agent keeps them), for everyone on the cluster to
// see, and returns it.
func (r *reconciler) ensureTemplate(ctx context.Context, p *policyv1.Policy, want *policyv1.ConfigurationPolicy) (*policyv1.ConfigurationPolicy, error) {
	spec := want.Spec
	defaultSpec(&spec)
	return ensureSpokeTemplate(ctx, r, p, "ConfigurationPolicy", want.Name, want.Annotations,
		func() *policyv1.ConfigurationPolicy { return &policyv1.ConfigurationPolicy{} },
		func(got *policyv1.ConfigurationPolicy) bool {
			if sameJSON(got.Spec, spec) {
				return false
			}
			got.Spec = spec
			return true
		})
}

// ensureSpokeTemplate creates or updates the spoke object of kind named
// name, of a template of policy p, in the cluster's namespace: newObj
// makes an empty object of the kind; setSpec sets the wanted spec on an
// object and says whether that changed it. A name another policy's
// template holds is an invalid template.
func ensureSpokeTemplate[T client.Object](ctx context.Context, r *reconciler, p *policyv1.Policy, kind, name string, annotations map[string]string,
	newObj func() T, setSpec func(got T) bool) (T, error) {
	var none T
	labels := r.templateLabels(p)
	got := newObj()
	err := r.spoke.policies.Get(ctx, client.ObjectKey{Namespace: r.cfg.ClusterName, Name: name}, got)
	if apierrors.IsNotFound(err) {
		obj := newObj()
		setSpec(obj)
		obj.SetName(name)
		obj.SetNamespace(r.cfg.ClusterName)
		obj.SetLabels(labels)
		obj.SetAnnotations(annotations)
		if err := r.spoke.policies.Create(ctx, obj, client.FieldOwner(FieldManager)); err != nil {
			return none, invalid(fmt.Errorf("Failed to create policy template: %w", err))
		}
		klog.FromContext(ctx).V(1).Info("Created the policy template on the managed cluster", "kind", kind, "template", name)
		return obj, nil
	}
	if err != nil {
		return none, fmt.Errorf("read %s %s on the managed cluster: %w", kind, name, err)
	}
	if owner := got.GetLabels()[policyv1.PolicyLabel]; owner != p.Name {
		return none, &invalidTemplateError{fmt.Errorf("the template name %s is taken: policy %s has a %s of that name on the managed cluster; policy template names must be unique on a cluster", name, owner, kind)}
	}
	specChanged := setSpec(got)
	if !specChanged && sameLabels(got.GetLabels(), labels) {
		return got, nil
	}
	l := got.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	maps.Copy(l, labels)
	got.SetLabels(l)
	if err := r.spoke.policies.Update(ctx, got, client.FieldOwner(FieldManager)); err != nil {
		return none, invalid(fmt.Errorf("Failed to update policy template: %w", err))
	}
	return got, nil
}

// invalid marks errors that retrying cannot fix.
func invalid(err error) error {
	if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
		return &invalidTemplateError{err}
	}
	return err
}

// defaultSpec applies the CRD's defaults, so that a spec read back from
// the spoke compares equal to the one the agent wrote.
func defaultSpec(s *policyv1.ConfigurationPolicySpec) {
	if s.RemediationAction == "" {
		s.RemediationAction = policyv1.Inform
	}
	if s.PruneObjectBehavior == "" {
		s.PruneObjectBehavior = policyv1.PruneNone
	}
	if !reflect.ValueOf(s.NamespaceSelector).IsZero() && s.NamespaceSelector.TerminatingInclusion == "" {
		s.NamespaceSelector.TerminatingInclusion = policyv1.TerminatingDefault
	}
	for i := range s.ObjectTemplates {
		if s.ObjectTemplates[i].RecreateOption == "" {
			s.ObjectTemplates[i].RecreateOption = policyv1.RecreateNone
		}
	}
}

// sameJSON compares two values by their JSON, which ignores the order and
// spacing of embedded objects.
func sameJSON(a, b any) bool {
	var x, y any
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil || json.Unmarshal(ja, &x) != nil || json.Unmarshal(jb, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// sameLabels says whether have holds every label of want.
func sameLabels(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// writeTemplateStatus records an evaluation in the spoke
// ConfigurationPolicy's status: compliance, compliancyDetails (a
// condition keeps its time while it says the same), relatedObjects (an
// object the policy created stays marked as created), history.
func (r *reconciler) writeTemplateStatus(ctx context.Context, cp *policyv1.ConfigurationPolicy, res *engine.Result, now time.Time) error {
	before := cp.DeepCopy()
	st := &cp.Status
	st.ComplianceState = res.Compliance()
	details := res.CompliancyDetails(metaTime(now))
	for i := range details {
		if i < len(before.Status.CompliancyDetails) {
			keepTransitionTimes(details[i].Conditions, before.Status.CompliancyDetails[i].Conditions)
		}
	}
	st.CompliancyDetails = details
	created := map[types.UID]bool{}
	for _, ro := range before.Status.RelatedObjects {
		if ro.Properties != nil && ro.Properties.CreatedByPolicy != nil && *ro.Properties.CreatedByPolicy && ro.Properties.UID != "" {
			created[types.UID(ro.Properties.UID)] = true
		}
	}
	st.RelatedObjects = res.RelatedObjects(func(uid types.UID) bool { return created[uid] })
	st.LastEvaluated = now.UTC().Format(time.RFC3339)
	st.LastEvaluatedGeneration = cp.Generation
	msg := res.Message()
	if len(st.History) == 0 || st.History[0].Message != msg {
		st.History = append([]policyv1.HistoryEvent{{LastTimestamp: metaTime(now), Message: msg}}, st.History...)
		if len(st.History) > engine.HistoryLimit {
			st.History = st.History[:engine.HistoryLimit]
		}
	}
	if reflect.DeepEqual(before.Status, cp.Status) {
		return nil
	}
	if err := r.spoke.policies.Status().Update(ctx, cp, client.FieldOwner(FieldManager)); err != nil {
		return fmt.Errorf("update the status of ConfigurationPolicy %s on the managed cluster: %w", cp.Name, err)
	}
	return nil
}

// keepTransitionTimes keeps the time of each condition that says what it
// said before.
func keepTransitionTimes(now, before []policyv1.TemplateCondition) {
	for i := range now {
		if i < len(before) && now[i].Type == before[i].Type && now[i].Reason == before[i].Reason && now[i].Message == before[i].Message {
			now[i].LastTransitionTime = before[i].LastTransitionTime
		}
	}
}

// spokeTemplates lists the spoke ConfigurationPolicies of policy.
func (r *reconciler) spokeTemplates(ctx context.Context, policy string) ([]policyv1.ConfigurationPolicy, error) {
	list := &policyv1.ConfigurationPolicyList{}
	if err := r.spoke.policies.List(ctx, list, client.InNamespace(r.cfg.ClusterName), client.MatchingLabels{policyv1.PolicyLabel: policy}); err != nil {
		return nil, fmt.Errorf("list the policy's ConfigurationPolicies on the managed cluster: %w", err)
	}
	return list.Items, nil
}

// removePolicy removes (and prunes) every spoke ConfigurationPolicy of a
// policy that is gone, being deleted or disabled.
func (r *reconciler) removePolicy(ctx context.Context, policy string) error {
	cps, err := r.spokeTemplates(ctx, policy)
	if err != nil {
		return err
	}
	var errs []error
	for i := range cps {
		errs = append(errs, r.removeTemplate(ctx, &cps[i]))
	}
	errs = append(errs, r.pruneOtherKinds(ctx, policy, nil))
	r.watches.releaseAll(policy)
	return errors.Join(errs...)
}

// removeTemplate prunes what an enforced template managed, as its
// pruneObjectBehavior says, stops its watches and deletes it.
func (r *reconciler) removeTemplate(ctx context.Context, cp *policyv1.ConfigurationPolicy) error {
	if cp.Spec.RemediationAction.IsEnforce() {
		if err := r.prune(ctx, cp); err != nil {
			return err
		}
	}
	r.watches.track(user(cp.Labels[policyv1.PolicyLabel], cp.Name), nil)
	if err := r.spoke.policies.Delete(ctx, cp); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete ConfigurationPolicy %s on the managed cluster: %w", cp.Name, err)
	}
	klog.FromContext(ctx).V(1).Info("Removed the policy template from the managed cluster", "template", cp.Name)
	return nil
}
