package deploy

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
)

var agentValues = map[string]any{
	"clusterName": "cluster1",
	"hub":         map[string]any{"apiServer": "https://hub.example.com:6443", "caCert": "-----BEGIN CERTIFICATE-----\n"},
	"bootstrap":   map[string]any{"token": "abcdef.0123456789abcdef"},
}

// TestLint runs helm lint, strict, on both charts.
func TestLint(t *testing.T) {
	for name, tc := range map[string]struct {
		ns     string
		values map[string]any
	}{
		HubChart:   {HubNamespace, nil},
		AgentChart: {AgentNamespace, agentValues},
	} {
		t.Run(name, func(t *testing.T) {
			res := lint.AllWithKubeVersion(filepath.Join("charts", name), tc.values, tc.ns, nil)
			for _, m := range res.Messages {
				if m.Severity > support.InfoSev {
					t.Errorf("helm lint: %s", m)
				}
			}
		})
	}
}

// TestRender renders each chart and checks what a platform team relies on.
func TestRender(t *testing.T) {
	hub, err := Render(HubChart, HubNamespace, map[string]any{"metrics": map[string]any{"serviceMonitor": map[string]any{"enabled": true}}})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, o := range hub {
		kinds[o.GetKind()]++
	}
	for _, k := range []string{"CustomResourceDefinition", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Service", "Deployment", "ServiceMonitor"} {
		if kinds[k] == 0 {
			t.Errorf("hub chart renders no %s", k)
		}
	}
	if hub[0].GetKind() != "CustomResourceDefinition" {
		t.Errorf("hub chart renders %s first, want the CRDs", hub[0].GetKind())
	}
	agent, err := Render(AgentChart, AgentNamespace, agentValues)
	if err != nil {
		t.Fatal(err)
	}
	var secret, deployment bool
	for _, o := range agent {
		switch o.GetKind() {
		case "Secret":
			secret = o.GetName() == "bootstrap-hub-kubeconfig"
		case "Deployment":
			deployment = true
			args := strings.Join(mustStrings(t, o.Object, "spec", "template", "spec", "containers"), " ")
			if !strings.Contains(args, "--cluster-name=cluster1") {
				t.Errorf("agent args %s, want --cluster-name=cluster1", args)
			}
		}
		if o.GetLabels()["app.kubernetes.io/name"] != "flotilla-agent" {
			t.Errorf("%s %s lacks the label unjoin finds it by", o.GetKind(), o.GetName())
		}
	}
	if !secret || !deployment {
		t.Errorf("agent chart: bootstrap Secret %v, Deployment %v", secret, deployment)
	}
}

// TestRenderHubServers: hub.servers becomes the agent's --hub-server, and
// no value means no flag.
func TestRenderHubServers(t *testing.T) {
	argsFor := func(values map[string]any) string {
		t.Helper()
		objs, err := Render(AgentChart, AgentNamespace, values)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if o.GetKind() == "Deployment" {
				return strings.Join(mustStrings(t, o.Object, "spec", "template", "spec", "containers"), " ")
			}
		}
		t.Fatal("no Deployment")
		return ""
	}
	if args := argsFor(agentValues); strings.Contains(args, "--hub-server") {
		t.Errorf("agent args %s without hub.servers, want no --hub-server", args)
	}
	values := map[string]any{
		"clusterName": "cluster1",
		"hub": map[string]any{"apiServer": "https://hub.example.com:6443", "caCert": "-----BEGIN CERTIFICATE-----\n",
			"servers": []any{"192.0.2.12:6443", "hub-3.example.com:6443"}},
		"bootstrap": map[string]any{"token": "abcdef.0123456789abcdef"},
	}
	if args := argsFor(values); !strings.Contains(args, "--hub-server=192.0.2.12:6443,hub-3.example.com:6443") {
		t.Errorf("agent args %s, want --hub-server=192.0.2.12:6443,hub-3.example.com:6443", args)
	}
}

// TestRenderErrors: a missing required value says which and how to fix it.
func TestRenderErrors(t *testing.T) {
	tests := []struct {
		chart, ns string
		values    map[string]any
		want      string
	}{
		{AgentChart, AgentNamespace, map[string]any{"bootstrap": map[string]any{"create": false}}, "clusterName is required"},
		{AgentChart, AgentNamespace, map[string]any{"clusterName": "c1"}, "hub.apiServer is required"},
		{HubChart, "default", nil, "install flotilla-hub into namespace open-cluster-management-hub"},
		{AgentChart, AgentNamespace, map[string]any{"clusterName": "c1", "hub": agentValues["hub"], "bootstrap": agentValues["bootstrap"],
			"addons": map[string]any{"installNamespaces": []any{}}}, "addons.installNamespaces is empty"},
	}
	for _, tt := range tests {
		_, err := Render(tt.chart, tt.ns, tt.values)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s with %v: error %v, want %q", tt.chart, tt.values, err, tt.want)
		}
	}
}

// TestRenderAddOns: the hub's add-on grants are the values' names and no
// more, and the agent's add-on Secrets stay in the install namespaces.
func TestRenderAddOns(t *testing.T) {
	rules := func(objs []*unstructured.Unstructured, kind, ns string) []rbacv1.PolicyRule {
		t.Helper()
		var out []rbacv1.PolicyRule
		for _, o := range objs {
			if o.GetKind() == kind && o.GetNamespace() == ns && strings.Contains(o.GetName(), "flotilla") {
				var r rbacv1.ClusterRole
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &r); err != nil {
					t.Fatal(err)
				}
				out = append(out, r.Rules...)
			}
		}
		return out
	}
	grants := func(rs []rbacv1.PolicyRule, group, resource, verb string) []string {
		var names []string
		for _, r := range rs {
			if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
				if len(r.ResourceNames) == 0 {
					return []string{"*"}
				}
				names = append(names, r.ResourceNames...)
			}
		}
		return names
	}

	hub, err := Render(HubChart, HubNamespace, nil)
	if err != nil {
		t.Fatal(err)
	}
	rs := rules(hub, "ClusterRole", "")
	for _, g := range []struct{ group, resource, verb string }{
		{"rbac.authorization.k8s.io", "clusterroles", "bind"},
		{"rbac.authorization.k8s.io", "roles", "bind"},
		{"certificates.k8s.io", "signers", "sign"},
		{"certificates.k8s.io", "certificatesigningrequests/status", "update"},
	} {
		if got := grants(rs, g.group, g.resource, g.verb); got != nil {
			t.Errorf("by default the hub may %s %s/%s %v", g.verb, g.group, g.resource, got)
		}
	}
	if got := grants(rs, "addon.open-cluster-management.io", "addondeploymentconfigs", "watch"); got == nil {
		t.Error("the hub may not watch AddOnDeploymentConfigs")
	}

	hub, err = Render(HubChart, HubNamespace, map[string]any{"addons": map[string]any{
		"hubPermissions":  map[string]any{"clusterRoles": []any{"hello-hub"}, "roles": []any{"hello-ns"}},
		"customSigners":   []any{"example.com/*"},
		"configResources": []any{map[string]any{"group": "proxy.open-cluster-management.io", "resources": []any{"managedproxyconfigurations"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	rs = rules(hub, "ClusterRole", "")
	for _, g := range []struct {
		group, resource, verb string
		want                  []string
	}{
		{"rbac.authorization.k8s.io", "clusterroles", "bind", []string{"hello-hub"}},
		{"rbac.authorization.k8s.io", "roles", "bind", []string{"hello-ns"}},
		{"certificates.k8s.io", "signers", "approve", []string{"kubernetes.io/kube-apiserver-client", "example.com/*"}},
		{"certificates.k8s.io", "signers", "sign", []string{"example.com/*"}},
		{"certificates.k8s.io", "certificatesigningrequests/status", "update", []string{"*"}},
		{"proxy.open-cluster-management.io", "managedproxyconfigurations", "watch", []string{"*"}},
		{"addon.open-cluster-management.io", "addondeploymentconfigs", "watch", nil},
	} {
		if got := grants(rs, g.group, g.resource, g.verb); !slices.Equal(got, g.want) {
			t.Errorf("the hub may %s %s/%s %v, want %v", g.verb, g.group, g.resource, got, g.want)
		}
	}

	agent, err := Render(AgentChart, AgentNamespace, map[string]any{"clusterName": "c1", "hub": agentValues["hub"], "bootstrap": agentValues["bootstrap"],
		"addons": map[string]any{"installNamespaces": []any{"addons-a", "addons-b"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := grants(rules(agent, "ClusterRole", ""), "", "secrets", "list"); got != nil {
		t.Errorf("the agent may list Secrets cluster-wide: %v", got)
	}
	for _, ns := range []string{"addons-a", "addons-b"} {
		rs := rules(agent, "Role", ns)
		if grants(rs, "", "secrets", "create") == nil || grants(rs, "coordination.k8s.io", "leases", "get") == nil {
			t.Errorf("the agent may not write add-on Secrets and read Leases in %s: %v", ns, rs)
		}
	}
	args := strings.Join(mustStrings(t, deployment(t, agent).Object, "spec", "template", "spec", "containers"), " ")
	if !strings.Contains(args, "--addon-install-namespaces=addons-a,addons-b") {
		t.Errorf("agent args %s, want --addon-install-namespaces=addons-a,addons-b", args)
	}
}

// mustStrings returns the args of the first container at path.
func mustStrings(t *testing.T, obj map[string]any, path ...string) []string {
	t.Helper()
	var v any = obj
	for _, p := range path {
		v = v.(map[string]any)[p]
	}
	var out []string
	for _, a := range v.([]any)[0].(map[string]any)["args"].([]any) {
		out = append(out, a.(string))
	}
	return out
}
