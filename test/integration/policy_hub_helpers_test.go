package integration

import (
	"context"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	clusterv1beta1 "github.com/flotilla-io/flotilla/api/cluster/v1beta1"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
	policyv1beta1 "github.com/flotilla-io/flotilla/api/policy/v1beta1"
)

// Builders for the hub policy specs: clusters are created by the admin
// (no agents), each with its hub namespace, and the specs write the status
// of replicated policies themselves, as an agent would.

// createPolicyMember creates a cluster in set with labels, and its hub namespace.
func createPolicyMember(ctx SpecContext, name, set string, labels map[string]string) {
	GinkgoHelper()
	createMember(ctx, name, set, member{labels: labels})
	ensureNamespace(ctx, name)
}

// prodPlacement places on the clusters labelled env=prod.
func prodPlacement(ctx SpecContext, ns, name string) {
	GinkgoHelper()
	createPlacement(ctx, ns, name, clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{
		{RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}},
	}})
}

// bindPolicy binds subjects (kind and name) in ns to Placement placement.
func bindPolicy(ctx SpecContext, ns, name, placement string, subjects ...policyv1.Subject) {
	GinkgoHelper()
	Expect(hubCP.Client.Create(ctx, &policyv1.PlacementBinding{
		ObjectMeta:   metav1.ObjectMeta{Namespace: ns, Name: name},
		PlacementRef: policyv1.PlacementSubject{APIGroup: policyv1.PlacementAPIGroup, Kind: policyv1.PlacementKind, Name: placement},
		Subjects:     subjects,
	})).To(Succeed())
}

// policySubject names a Policy in a binding.
func policySubject(name string) policyv1.Subject {
	return policyv1.Subject{APIGroup: policyv1.GroupVersion.Group, Kind: policyv1.PolicyKind, Name: name}
}

// rootPolicy is the example policy, named name in ns.
func rootPolicy(ns, name string) *policyv1.Policy {
	GinkgoHelper()
	p := examplePolicy()
	p.Namespace, p.Name = ns, name
	return p
}

// copiesOf returns, for Eventually, the sorted namespaces of a root's replicated policies.
func copiesOf(ctx context.Context, ns, name string) func() []string {
	return func() []string {
		list := &policyv1.PolicyList{}
		Expect(hubCP.Client.List(ctx, list, client.MatchingLabels{policyv1.RootPolicyLabel: ns + "." + name})).To(Succeed())
		out := []string{}
		for _, p := range list.Items {
			out = append(out, p.Namespace)
		}
		slices.Sort(out)
		return out
	}
}

// getPolicy reads a policy from the hub.
func getPolicy(ctx context.Context, ns, name string) *policyv1.Policy {
	GinkgoHelper()
	p := &policyv1.Policy{}
	Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p)).To(Succeed())
	return p
}

// reportCompliance writes the compliance of a replicated policy, as the
// agent of its cluster would.
func reportCompliance(ctx SpecContext, cluster, name string, state policyv1.ComplianceState, message string) {
	GinkgoHelper()
	Eventually(func() error {
		p := &policyv1.Policy{}
		if err := hubCP.Client.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, p); err != nil {
			return err
		}
		p.Status.ComplianceState = state
		p.Status.Details = []policyv1.DetailsPerTemplate{{
			TemplateMeta:    metav1.ObjectMeta{Name: "policy-namespace-example"},
			ComplianceState: state,
			History:         []policyv1.ComplianceHistory{{LastTimestamp: metav1.Now(), Message: message}},
		}}
		return hubCP.Client.Status().Update(ctx, p)
	}).Should(Succeed())
}

// relabelCluster replaces the labels of a cluster but its set label.
func relabelCluster(ctx SpecContext, name string, labels map[string]string) {
	GinkgoHelper()
	Eventually(func() error {
		mc := &clusterv1.ManagedCluster{}
		if err := hubCP.Client.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
			return err
		}
		for k, v := range labels {
			mc.Labels[k] = v
		}
		return hubCP.Client.Update(ctx, mc)
	}).Should(Succeed())
}

// policyGone returns, for Eventually, whether a policy no longer exists.
func policyGone(ctx context.Context, ns, name string) func() bool {
	return func() bool {
		err := hubCP.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &policyv1.Policy{})
		return apierrors.IsNotFound(err)
	}
}

// sorted returns names sorted.
func sorted(names ...string) []string {
	slices.Sort(names)
	return names
}

// perCluster returns entries sorted by cluster name, as a root's status lists them.
func perCluster(entries ...policyv1.CompliancePerClusterStatus) []policyv1.CompliancePerClusterStatus {
	slices.SortFunc(entries, func(x, y policyv1.CompliancePerClusterStatus) int {
		return strings.Compare(x.ClusterName, y.ClusterName)
	})
	return entries
}

// setDisabled sets spec.disabled of a root policy.
func setDisabled(ctx SpecContext, ns, name string, disabled bool) {
	GinkgoHelper()
	Eventually(func() error {
		p := getPolicy(ctx, ns, name)
		p.Spec.Disabled = disabled
		return hubCP.Client.Update(ctx, p)
	}).Should(Succeed())
}

// policySet builds a PolicySet listing policies.
func policySet(ns, name string, policies ...string) *policyv1beta1.PolicySet {
	s := &policyv1beta1.PolicySet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	for _, p := range policies {
		s.Spec.Policies = append(s.Spec.Policies, policyv1.NonEmptyString(p))
	}
	return s
}

// getPolicySet reads a PolicySet from the hub.
func getPolicySet(ctx context.Context, ns, name string) *policyv1beta1.PolicySet {
	GinkgoHelper()
	s := &policyv1beta1.PolicySet{}
	Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s)).To(Succeed())
	return s
}

// rootEvents returns, for Eventually, the notes of the events about a policy.
func rootEvents(ctx context.Context, ns, name string) func() []string {
	return func() []string {
		list := &eventsv1.EventList{}
		Expect(hubCP.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		var out []string
		for _, e := range list.Items {
			if e.Regarding.Kind == "Policy" && e.Regarding.Name == name {
				out = append(out, e.Note)
			}
		}
		return out
	}
}
