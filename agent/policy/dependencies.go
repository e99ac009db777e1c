package policy

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-io/flotilla/agent/policy/engine"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

// Dependencies are evaluated here, on the managed cluster's agent, as
// OCM's framework does: a Policy dependency is the replicated policy of
// this cluster (read from the agent's cache of its hub namespace), any
// other kind an object on the spoke (a ConfigurationPolicy in the agent's
// namespace) whose status.compliant is compared.
//
// A PolicySet dependency means the compliance of the set's policies on
// this cluster, and which policies a set holds is known only on the hub:
// the hub lists them in the copy in place of the set (hub/policy). A copy
// that still names a set is one whose set the hub did not find; such a
// dependency is never met, and the template stays Pending with a message
// that says so and what to do.

// dependencyState reads the compliance of the object a dependency names;
// found is false when it does not exist or reports none.
type dependencyState func(ctx context.Context, dep policyv1.PolicyDependency, name string) (state policyv1.ComplianceState, found bool, err error)

// unmetDependencies returns, sorted, "<kind> <name>" of each dependency of
// deps whose object is missing or not at the named compliance. rootNS is
// the namespace of the root policy, which a Policy dependency without
// one lives in.
func unmetDependencies(ctx context.Context, deps []policyv1.PolicyDependency, rootNS string, state dependencyState) ([]string, error) {
	var unmet []string
	for _, dep := range deps {
		name := dependencyName(dep, rootNS)
		if isPolicySetDependency(dep) {
			unmet = append(unmet, dep.Kind+" "+name)
			continue
		}
		got, found, err := state(ctx, dep, name)
		if err != nil {
			return nil, fmt.Errorf("read the compliance of dependency %s %s: %w", dep.Kind, name, err)
		}
		if !found || !strings.EqualFold(string(got), string(dep.Compliance)) {
			unmet = append(unmet, dep.Kind+" "+name)
		}
	}
	slices.Sort(unmet)
	return slices.Compact(unmet), nil
}

// dependencyName is the name a dependency's object has where it is
// looked up: a Policy's replicated name "<ns>.<name>" (a name holding a
// dot already is one, as OCM documents; a PolicySet is named the same
// way in messages), anything else its own name.
func dependencyName(dep policyv1.PolicyDependency, rootNS string) string {
	if !isPolicyDependency(dep) && !isPolicySetDependency(dep) {
		return dep.Name
	}
	switch {
	case dep.Namespace != "":
		return dep.Namespace + "." + dep.Name
	case strings.Contains(dep.Name, "."):
		return dep.Name
	}
	return rootNS + "." + dep.Name
}

func isPolicyDependency(dep policyv1.PolicyDependency) bool {
	gv, _ := schema.ParseGroupVersion(dep.APIVersion)
	return dep.Kind == policyv1.PolicyKind && gv.Group == policyv1.GroupVersion.Group
}

func isPolicySetDependency(dep policyv1.PolicyDependency) bool {
	gv, _ := schema.ParseGroupVersion(dep.APIVersion)
	return dep.Kind == policyv1.PolicySetKind && gv.Group == policyv1.GroupVersion.Group
}

// policySetNotSupported ends the pending message of a template that
// depends on a PolicySet.
const policySetNotSupported = "the hub found no such PolicySet: it lists a set's policies in place of a dependency on the set, " +
	"and keeps a dependency on a set it cannot find; create the PolicySet or correct the dependency"

// pendingMessage is the history message of a template held back by its
// dependencies, in OCM's words; policySet adds why a PolicySet among
// them is never met.
func pendingMessage(unmet []string, policySet bool) string {
	format := "Dependencies were not satisfied: %d are still pending (%s)"
	if len(unmet) == 1 {
		format = "Dependencies were not satisfied: %d is still pending (%s)"
	}
	msg := string(policyv1.Pending) + "; template-error; " + fmt.Sprintf(format, len(unmet), strings.Join(unmet, ", "))
	if policySet {
		msg += "; " + policySetNotSupported
	}
	return msg
}

// dependencyState reads a dependency: a Policy from the hub cache of the
// cluster's namespace, any other kind from the spoke.
func (r *reconciler) dependencyState(ctx context.Context, dep policyv1.PolicyDependency, name string) (policyv1.ComplianceState, bool, error) {
	if isPolicyDependency(dep) {
		p := &policyv1.Policy{}
		err := r.hub.Get(ctx, client.ObjectKey{Namespace: r.cfg.ClusterName, Name: name}, p)
		if apierrors.IsNotFound(err) {
			return "", false, nil
		}
		return p.Status.ComplianceState, err == nil && p.Status.ComplianceState != "", err
	}
	gv, err := schema.ParseGroupVersion(dep.APIVersion)
	if err != nil {
		return "", false, err
	}
	m, err := r.spoke.mapper.RESTMapping(gv.WithKind(dep.Kind).GroupKind(), gv.Version)
	if err != nil {
		return "", false, nil
	}
	ns := dep.Namespace
	if dep.Kind == policyv1.ConfigurationPolicyKind || dep.Kind == policyv1.CertificatePolicyKind {
		ns = r.cfg.ClusterName
	}
	var obj *unstructured.Unstructured
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		obj, err = r.spoke.dynamic.Resource(m.Resource).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	} else {
		obj, err = r.spoke.dynamic.Resource(m.Resource).Get(ctx, name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	c, found, _ := unstructured.NestedString(obj.Object, "status", "compliant")
	return policyv1.ComplianceState(c), found && c != "", nil
}

// holdBack reports whether template t waits for its dependencies, and
// records it as Pending in d when it does.
func (r *reconciler) holdBack(ctx context.Context, s *scope, t engine.PolicyTemplate, d *policyv1.DetailsPerTemplate) (bool, error) {
	if len(t.Dependencies) == 0 {
		return false, nil
	}
	rootNS, _, _ := strings.Cut(s.policy.Labels[policyv1.RootPolicyLabel], ".")
	if rootNS == "" {
		rootNS, _, _ = strings.Cut(s.policy.Name, ".")
	}
	unmet, err := unmetDependencies(ctx, t.Dependencies, rootNS, r.dependencyState)
	if err != nil || len(unmet) == 0 {
		return false, err
	}
	msg := pendingMessage(unmet, slices.ContainsFunc(t.Dependencies, isPolicySetDependency))
	s.record(d, policyv1.Pending, msg, nil)
	return true, nil
}

// complianceChanged passes updates of a Policy whose compliance, or that
// of one of its templates, changed: what dependencies look at.
func complianceChanged() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return true },
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(*policyv1.Policy)
			n, ok2 := e.ObjectNew.(*policyv1.Policy)
			return ok1 && ok2 && !slices.Equal(complianceOf(o), complianceOf(n))
		},
	}
}

// complianceOf is a policy's compliance and that of each template, by name.
func complianceOf(p *policyv1.Policy) []string {
	out := []string{string(p.Status.ComplianceState)}
	for _, d := range p.Status.Details {
		out = append(out, d.TemplateMeta.Name+"="+string(d.ComplianceState))
	}
	return out
}

// dependents maps a policy of the cluster to the policies of the cluster
// that depend on it, or on one of its templates.
func (r *reconciler) dependents(ctx context.Context, o client.Object) []reconcile.Request {
	changed, ok := o.(*policyv1.Policy)
	if !ok {
		return nil
	}
	templates := map[string]bool{}
	for _, d := range changed.Status.Details {
		templates[d.TemplateMeta.Name] = true
	}
	for _, t := range engine.PolicyTemplates(changed) {
		templates[t.Name] = true
	}
	list := &policyv1.PolicyList{}
	if err := r.hub.List(ctx, list, client.InNamespace(r.cfg.ClusterName)); err != nil {
		klog.FromContext(ctx).Error(err, "Cannot list the cluster's policies to find those that depend on a policy", "policy", klog.KObj(changed))
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		p := &list.Items[i]
		rootNS, _, _ := strings.Cut(p.Name, ".")
		for _, t := range p.Spec.PolicyTemplates {
			deps := append(slices.Clone(p.Spec.Dependencies), t.ExtraDependencies...)
			if slices.ContainsFunc(deps, func(d policyv1.PolicyDependency) bool {
				if isPolicyDependency(d) {
					return dependencyName(d, rootNS) == changed.Name
				}
				return d.Kind == policyv1.ConfigurationPolicyKind && templates[d.Name]
			}) {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(p)})
				break
			}
		}
	}
	return reqs
}
