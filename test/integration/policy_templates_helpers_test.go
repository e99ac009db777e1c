package integration

import (
	"context"
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

// Builders for the specs of hub templates, dependencies and PolicySet status.

// configMapPolicy is a root policy in ns whose one ConfigurationPolicy
// (named template) must have ConfigMap "site" in namespace default with data.
func configMapPolicy(ns, name, template string, data map[string]any) *policyv1.Policy {
	GinkgoHelper()
	p := configurationPolicy(name, template, map[string]any{
		"remediationAction": "inform",
		"object-templates": []any{map[string]any{
			"complianceType": "musthave",
			"objectDefinition": map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": "site", "namespace": "default"},
				"data":     data,
			},
		}},
	})
	p.Namespace = ns
	return p
}

// templateObject decodes policy template i of a policy.
func templateObject(p *policyv1.Policy, i int) map[string]any {
	GinkgoHelper()
	Expect(len(p.Spec.PolicyTemplates)).To(BeNumerically(">", i))
	out := map[string]any{}
	Expect(json.Unmarshal(p.Spec.PolicyTemplates[i].ObjectDefinition.Raw, &out)).To(Succeed())
	return out
}

// copiedData returns, for Eventually, the data of the ConfigMap in the first
// object template of the copy of root ns/name in cluster.
func copiedData(ctx context.Context, cluster, ns, name string) func() map[string]any {
	return func() map[string]any {
		p := &policyv1.Policy{}
		if err := hubCP.Client.Get(ctx, client.ObjectKey{Namespace: cluster, Name: ns + "." + name}, p); err != nil {
			return nil
		}
		obj := templateObject(p, 0)
		spec, _ := obj["spec"].(map[string]any)
		ots, _ := spec["object-templates"].([]any)
		if len(ots) == 0 {
			return nil
		}
		def, _ := ots[0].(map[string]any)["objectDefinition"].(map[string]any)
		data, _ := def["data"].(map[string]any)
		return data
	}
}

// hubTemplateError returns, for Eventually, the hub-templates-error
// annotation of the first template of the copy of root ns/name in cluster.
func hubTemplateError(ctx context.Context, cluster, ns, name string) func() string {
	return func() string {
		p := &policyv1.Policy{}
		if err := hubCP.Client.Get(ctx, client.ObjectKey{Namespace: cluster, Name: ns + "." + name}, p); err != nil {
			return "copy missing: " + err.Error()
		}
		meta, _ := templateObject(p, 0)["metadata"].(map[string]any)
		annotations, _ := meta["annotations"].(map[string]any)
		s, _ := annotations["policy.open-cluster-management.io/hub-templates-error"].(string)
		return s
	}
}

// setConfigMap creates or replaces the data of a ConfigMap on the hub.
func setConfigMap(ctx SpecContext, ns, name string, data map[string]string) {
	GinkgoHelper()
	Eventually(func() error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		err := hubCP.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm)
		if client.IgnoreNotFound(err) != nil {
			return err
		}
		cm.Data = data
		if err != nil {
			return hubCP.Client.Create(ctx, cm)
		}
		return hubCP.Client.Update(ctx, cm)
	}).Should(Succeed())
}

// withDependencies returns p with policy-level dependencies.
func withDependencies(p *policyv1.Policy, deps ...policyv1.PolicyDependency) *policyv1.Policy {
	p.Spec.Dependencies = deps
	return p
}

// policyDependency names a Policy of namespace policies at compliance c.
func policyDependency(name string, c policyv1.ComplianceState) policyv1.PolicyDependency {
	return policyv1.PolicyDependency{APIVersion: policyv1.GroupVersion.String(), Kind: policyv1.PolicyKind, Name: name, Namespace: "policies", Compliance: c}
}

// rawTemplate is a policy template from raw JSON.
func rawTemplate(raw string) policyv1.PolicyTemplate {
	return policyv1.PolicyTemplate{ObjectDefinition: runtime.RawExtension{Raw: []byte(raw)}}
}

// jsonString is s as a JSON string literal.
func jsonString(s string) (string, error) {
	b, err := json.Marshal(s)
	return string(b), err
}
