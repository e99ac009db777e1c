package integration

import (
	"context"
	"encoding/json"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/flotilla-io/flotilla/api/cluster/v1"
	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

// examplePolicyName is the policy of the project brief, policy-namespace.yaml
// of the shared examples.
const examplePolicyName = "policy-namespace.yaml"

// policyCluster is a cluster joined by a full agent (agent.Run) on a
// spoke, the way `flotilla join` runs one.
type policyCluster struct {
	env  *agentEnv
	name string
	// namespace is where the agent keeps the cluster's policy templates
	// on the spoke: the namespace named after the cluster, as OCM's agent.
	namespace string
}

// joinPolicyCluster starts a spoke and an agent, and accepts its cluster.
// Everything is removed when the enclosing container ends.
func joinPolicyCluster(ctx SpecContext) *policyCluster {
	GinkgoHelper()
	env := newAgentEnv(ctx)
	c := &policyCluster{env: env, name: newClusterName("policy")}
	opts := env.options(c.name)
	c.namespace = c.name
	env.storeBootstrapSecret(ctx, opts.Namespace, bootstrapKubeconfig(hubCP.URL, hubCP.CAData, env.token))
	startAgent(opts)
	acceptAgent(ctx, c.name)
	deleteClusterAfterSpec(c.name)
	Eventually(clusterCondition(ctx, c.name, clusterv1.ManagedClusterConditionJoined)).Should(HaveField("Status", metav1.ConditionTrue))
	return c
}

// examplePolicy reads the brief's Policy.
func examplePolicy() *policyv1.Policy {
	GinkgoHelper()
	data, err := os.ReadFile(sharedExample(examplePolicyName))
	Expect(err).NotTo(HaveOccurred())
	p := &policyv1.Policy{}
	Expect(yaml.UnmarshalStrict(data, p)).To(Succeed())
	return p
}

// replicate creates root as the propagator would for cluster c: a copy
// named <rootns>.<rootname> in the cluster's namespace, labelled.
func (c *policyCluster) replicate(ctx context.Context, root *policyv1.Policy) *policyv1.Policy {
	GinkgoHelper()
	name := root.Namespace + "." + root.Name
	p := &policyv1.Policy{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: c.name,
			Labels: map[string]string{
				policyv1.ClusterNameLabel:      c.name,
				policyv1.ClusterNamespaceLabel: c.name,
				policyv1.RootPolicyLabel:       name,
			},
			Annotations: root.Annotations,
		},
		Spec: *root.Spec.DeepCopy(),
	}
	Expect(hubCP.Client.Create(ctx, p)).To(Succeed())
	return p
}

// policy reads replicated policy name from the hub.
func (c *policyCluster) policy(ctx context.Context, name string) *policyv1.Policy {
	GinkgoHelper()
	p := &policyv1.Policy{}
	Expect(hubCP.Client.Get(ctx, client.ObjectKey{Namespace: c.name, Name: name}, p)).To(Succeed())
	return p
}

// history returns the messages of a replicated policy's template, newest
// first, for Eventually.
func (c *policyCluster) history(ctx context.Context, name, template string) func() []string {
	return func() []string {
		var out []string
		for _, d := range c.policy(ctx, name).Status.Details {
			if d.TemplateMeta.Name == template {
				for _, h := range d.History {
					out = append(out, h.Message)
				}
			}
		}
		return out
	}
}

// latest returns the newest message of a template, for Eventually.
func (c *policyCluster) latest(ctx context.Context, name, template string) func() string {
	return func() string {
		if h := c.history(ctx, name, template)(); len(h) > 0 {
			return h[0]
		}
		return ""
	}
}

// spokeTemplate reads the agent's ConfigurationPolicy name from the spoke.
func (c *policyCluster) spokeTemplate(ctx context.Context, name string) *policyv1.ConfigurationPolicy {
	GinkgoHelper()
	cp := &policyv1.ConfigurationPolicy{}
	Expect(c.env.spoke.Client.Get(ctx, client.ObjectKey{Namespace: c.namespace, Name: name}, cp)).To(Succeed())
	return cp
}

// setRemediation sets a replicated policy's spec.remediationAction.
func (c *policyCluster) setRemediation(ctx context.Context, name string, action policyv1.RemediationAction) {
	GinkgoHelper()
	Eventually(func() error {
		p := c.policy(ctx, name)
		before := p.DeepCopy()
		p.Spec.RemediationAction = action
		return hubCP.Client.Patch(ctx, p, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	}).Should(Succeed())
}

// configurationPolicy is a root Policy in namespace policies wrapping one
// ConfigurationPolicy with the given spec.
func configurationPolicy(name, template string, spec map[string]any) *policyv1.Policy {
	GinkgoHelper()
	raw, err := json.Marshal(map[string]any{
		"apiVersion": policyv1.GroupVersion.String(), "kind": policyv1.ConfigurationPolicyKind,
		"metadata": map[string]any{"name": template}, "spec": spec,
	})
	Expect(err).NotTo(HaveOccurred())
	return &policyv1.Policy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "policies"},
		Spec:       policyv1.PolicySpec{PolicyTemplates: []policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Raw: raw}}}},
	}
}
