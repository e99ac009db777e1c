package policy_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	policycmd "github.com/flotilla-io/flotilla/cli/cmd/policy"
)

// hubPolicy copies objects from the hub into the cluster through hub
// templates, one of them in the namespaceSelector.
const hubPolicy = `
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata: {name: site, namespace: policies}
spec:
  remediationAction: inform
  policy-templates:
  - objectDefinition:
      apiVersion: policy.open-cluster-management.io/v1
      kind: ConfigurationPolicy
      metadata: {name: site-config}
      spec:
        remediationAction: inform
        namespaceSelector:
          include: ['{{hub fromConfigMap "" "site" "namespace" hub}}']
        object-templates:
        - complianceType: musthave
          objectDefinition:
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: site}
            data:
              cluster: '{{hub .ManagedClusterName hub}}'
              region: '{{hub index .ManagedClusterLabels "region" | default "none" hub}}'
              dns: '{{hub (lookup "v1" "ConfigMap" "" "site").data.dns hub}}'
  - objectDefinition:
      apiVersion: policy.open-cluster-management.io/v1
      kind: ConfigurationPolicy
      metadata: {name: site-copy}
      spec:
        remediationAction: inform
        object-templates-raw: |
          {{hub- range (lookup "v1" "ConfigMap" "" "" "copy=yes").items hub}}
          - complianceType: musthave
            objectDefinition:
              apiVersion: v1
              kind: ConfigMap
              metadata: {name: '{{hub .metadata.name hub}}', namespace: apps}
              data: '{{hub copyConfigMapData "" .metadata.name hub}}'
          {{hub- end hub}}
`

const hubObjects = `
apiVersion: cluster.open-cluster-management.io/v1
kind: ManagedCluster
metadata: {name: cluster1, labels: {region: eu}}
spec: {hubAcceptsClient: true}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: site, namespace: policies, labels: {copy: "yes"}}
data: {namespace: apps, dns: 10.0.0.53}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: site, namespace: other}
data: {namespace: wrong, dns: 10.9.9.9}
`

// clusterObjects hold what the resolved policy asks for.
const clusterObjects = `
apiVersion: v1
kind: ConfigMap
metadata: {name: site, namespace: apps}
data: {cluster: cluster1, region: eu, dns: 10.0.0.53, namespace: apps}
`

func TestPolicyTestHubObjects(t *testing.T) {
	dir := clusterDir(t, map[string]string{"policy.yaml": hubPolicy, "hub/objects.yaml": hubObjects, "cluster/objects.yaml": clusterObjects})
	policy := filepath.Join(dir, "policy.yaml")

	code, out, errOut := flotilla("policy", "test", policy, "--against", filepath.Join(dir, "cluster"))
	if code != 1 || !strings.Contains(errOut, policy+": hub templates ({{hub ... hub}}) in Policy policies/site, policy template at index 0; Policy policies/site, policy template at index 1") ||
		!strings.Contains(errOut, "pass --hub-objects DIR") || out != "" {
		t.Errorf("without --hub-objects: exit code %d, stdout %q, stderr %q; want 1 and the templates named, with the flag that resolves them", code, out, errOut)
	}

	code, out, errOut = flotilla("policy", "test", policy, "--hub-objects", filepath.Join(dir, "hub"), "--against", filepath.Join(dir, "cluster"), "-o", "json")
	if code != 0 {
		t.Fatalf("with --hub-objects: exit code %d (stdout %s, stderr %q)", code, out, errOut)
	}
	var report policycmd.TestReport
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, d := range report.Policies[0].Status.Details {
		got[d.TemplateMeta.Name] = d.History[0].Message
	}
	want := map[string]string{
		"site-config": "Compliant; notification - configmaps [site] found as specified in namespace apps",
		"site-copy":   "Compliant; notification - configmaps [site] found as specified in namespace apps",
	}
	for name, msg := range want {
		if got[name] != msg {
			t.Errorf("%s: %q, want %q", name, got[name], msg)
		}
	}
}

func TestPolicyTestHubObjectsErrors(t *testing.T) {
	twoClusters := hubObjects + "---\napiVersion: cluster.open-cluster-management.io/v1\nkind: ManagedCluster\nmetadata: {name: cluster2}\n"
	outOfReach := strings.Replace(hubPolicy, `(lookup "v1" "ConfigMap" "" "site")`, `(lookup "v1" "ConfigMap" "other" "site")`, 1)
	dir := clusterDir(t, map[string]string{"policy.yaml": hubPolicy, "reach.yaml": outOfReach, "two/objects.yaml": twoClusters,
		"hub/objects.yaml": hubObjects, "cluster/objects.yaml": clusterObjects})
	cluster := filepath.Join(dir, "cluster")

	code, _, errOut := flotilla("policy", "test", filepath.Join(dir, "policy.yaml"), "--hub-objects", filepath.Join(dir, "two"), "--against", cluster)
	if code != 1 || !strings.Contains(errOut, "holds 2 ManagedClusters (cluster1, cluster2): name the one the policy is copied for with --clusters NAME") {
		t.Errorf("two clusters: exit code %d, stderr %q", code, errOut)
	}
	code, out, _ := flotilla("policy", "test", filepath.Join(dir, "policy.yaml"), "--hub-objects", filepath.Join(dir, "two"), "--cluster", "cluster2", "--against", cluster)
	if code != 1 || !strings.Contains(out, "configmaps [site] found but not as specified in namespace apps") {
		t.Errorf("--cluster cluster2 (no region label, another name): exit code %d, stdout %q", code, out)
	}
	code, out, errOut = flotilla("policy", "test", filepath.Join(dir, "reach.yaml"), "--hub-objects", filepath.Join(dir, "hub"), "--against", cluster)
	if code != 1 || !strings.Contains(out, "NonCompliant; template-error; failed to resolve the template") ||
		!strings.Contains(out, "the namespace argument is restricted to policies") {
		t.Errorf("a lookup outside the policy's namespace: exit code %d, stdout %q, stderr %q", code, out, errOut)
	}
}
