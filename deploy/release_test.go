package deploy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// TestImageTagIsWhatMakeImagesTags: the charts and kustomize bases install,
// with their defaults, the very tags `make images` writes (its --registry
// and --version), so that a fresh clone's images are the ones installed.
func TestImageTagIsWhatMakeImagesTags(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("this test asks make what `make images` tags, and make is not on PATH: install make (apt-get install make)")
	}
	cmd := exec.Command("make", "--no-print-directory", "-n", "images")
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n images: %v\n%s", err, out)
	}
	registry := regexp.MustCompile(`--registry (\S+)`).FindStringSubmatch(string(out))
	version := regexp.MustCompile(`--version (\S+)`).FindStringSubmatch(string(out))
	if registry == nil || version == nil {
		t.Fatalf("make -n images passes no --registry and --version to hack/images:\n%s", out)
	}
	for name, tc := range map[string]struct {
		ns     string
		values map[string]any
	}{
		HubChart:   {HubNamespace, nil},
		AgentChart: {AgentNamespace, agentValues},
	} {
		want := registry[1] + "/" + name + ":" + version[1]
		objs, err := Render(name, tc.ns, tc.values)
		if err != nil {
			t.Fatal(err)
		}
		if got := image(t, deployment(t, objs)); got != want {
			t.Errorf("chart %s installs image %s, but make images tags %s", name, got, want)
		}
		base, err := os.ReadFile(filepath.Join("kustomize", name, "manager.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(base), "image: "+want+"\n") {
			t.Errorf("kustomize base %s does not install image %s (run make generate)", name, want)
		}
	}
}

// TestRenderReleaseLabels: every object the charts template carries the
// labels Helm's and OCM's charts have, from the release, and the pods too.
func TestRenderReleaseLabels(t *testing.T) {
	for name, tc := range map[string]struct {
		ns     string
		values map[string]any
	}{
		HubChart:   {HubNamespace, nil},
		AgentChart: {AgentNamespace, agentValues},
	} {
		ch, err := Chart(name)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := RenderRelease(name, Release{Name: "fleet-" + name, Namespace: tc.ns, Service: "Helm"}, tc.values)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{
			"app.kubernetes.io/name":       name,
			"app.kubernetes.io/instance":   "fleet-" + name,
			"app.kubernetes.io/version":    ch.Metadata.AppVersion,
			"app.kubernetes.io/managed-by": "Helm",
			"helm.sh/chart":                name + "-" + ch.Metadata.Version,
		}
		for _, o := range objs {
			if o.GetKind() == "CustomResourceDefinition" {
				continue // crds/ is not templated
			}
			labels := o.GetLabels()
			if o.GetKind() == "Deployment" {
				l, _, _ := unstructured.NestedStringMap(o.Object, "spec", "template", "metadata", "labels")
				labels = l
			}
			for k, v := range want {
				if labels[k] != v {
					t.Errorf("%s: %s %s has label %s=%q, want %q", name, o.GetKind(), o.GetName(), k, labels[k], v)
				}
			}
		}
	}
	// flotilla join and init render the same, managed by flotilla, and the
	// version is the tag of the image they install.
	values := map[string]any{"image": map[string]any{"reference": "registry.example.com/team/flotilla-agent:v9.8.7"}}
	for k, v := range agentValues {
		values[k] = v
	}
	objs, err := Render(AgentChart, AgentNamespace, values)
	if err != nil {
		t.Fatal(err)
	}
	d := deployment(t, objs)
	if got := d.GetLabels()["app.kubernetes.io/managed-by"]; got != ManagedBy {
		t.Errorf("Render: managed-by %q, want %q", got, ManagedBy)
	}
	if got := d.GetLabels()["app.kubernetes.io/version"]; got != "v9.8.7" {
		t.Errorf("image.reference ...:v9.8.7: version label %q, want v9.8.7", got)
	}
}

// TestRenderKnobs: the values users of cert-manager's and OCM's charts set
// reach the pods and the ServiceAccount of both charts.
func TestRenderKnobs(t *testing.T) {
	knobs := `
podLabels: {team: fleet}
podAnnotations: {prometheus.io/scrape: "false"}
serviceAccount: {annotations: {iam.example.com/role: fleet}}
extraEnv: [{name: HTTPS_PROXY, value: "http://proxy.example.com:3128"}]
volumes: [{name: trust, configMap: {name: trust-bundle}}]
volumeMounts: [{name: trust, mountPath: /etc/ssl/certs/extra, readOnly: true}]
topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}]
`
	for name, tc := range map[string]struct {
		ns     string
		values map[string]any
	}{
		HubChart:   {HubNamespace, nil},
		AgentChart: {AgentNamespace, agentValues},
	} {
		values := map[string]any{}
		if err := yaml.Unmarshal([]byte(knobs), &values); err != nil {
			t.Fatal(err)
		}
		for k, v := range tc.values {
			values[k] = v
		}
		objs, err := Render(name, tc.ns, values)
		if err != nil {
			t.Fatal(err)
		}
		d := deployment(t, objs)
		pod, _, _ := unstructured.NestedMap(d.Object, "spec", "template")
		podLabels, _, _ := unstructured.NestedStringMap(pod, "metadata", "labels")
		podAnnotations, _, _ := unstructured.NestedStringMap(pod, "metadata", "annotations")
		if podLabels["team"] != "fleet" || podLabels["app.kubernetes.io/name"] != name || podAnnotations["prometheus.io/scrape"] != "false" {
			t.Errorf("%s: pod labels %v, annotations %v", name, podLabels, podAnnotations)
		}
		c := container(t, d)
		if !hasNamed(c["env"], "HTTPS_PROXY") || !hasNamed(c["volumeMounts"], "trust") {
			t.Errorf("%s: container env %v, volumeMounts %v", name, c["env"], c["volumeMounts"])
		}
		volumes, _, _ := unstructured.NestedSlice(pod, "spec", "volumes")
		if !hasNamed(volumes, "trust") {
			t.Errorf("%s: volumes %v", name, volumes)
		}
		spread, _, _ := unstructured.NestedSlice(pod, "spec", "topologySpreadConstraints")
		if len(spread) != 1 {
			t.Fatalf("%s: topologySpreadConstraints %v", name, spread)
		}
		sel, _, _ := unstructured.NestedStringMap(spread[0].(map[string]any), "labelSelector", "matchLabels")
		if sel["app.kubernetes.io/name"] != name || spread[0].(map[string]any)["topologyKey"] != "topology.kubernetes.io/zone" {
			t.Errorf("%s: topology spread %v, want the zone key and a selector of the chart's pods", name, spread[0])
		}
		for _, o := range objs {
			if o.GetKind() == "ServiceAccount" && o.GetAnnotations()["iam.example.com/role"] != "fleet" {
				t.Errorf("%s: ServiceAccount %s annotations %v", name, o.GetName(), o.GetAnnotations())
			}
		}
	}
}

// TestRenderAgentReadiness: the agent's pod is ready by the agent's /readyz
// on its health port.
func TestRenderAgentReadiness(t *testing.T) {
	objs, err := Render(AgentChart, AgentNamespace, agentValues)
	if err != nil {
		t.Fatal(err)
	}
	c := container(t, deployment(t, objs))
	path, _, _ := unstructured.NestedString(c, "readinessProbe", "httpGet", "path")
	port, _, _ := unstructured.NestedString(c, "readinessProbe", "httpGet", "port")
	if path != "/readyz" || port != "health" {
		t.Errorf("agent readinessProbe %v, want GET /readyz on port health", c["readinessProbe"])
	}
	args := strings.Join(stringsOf(c["args"]), " ")
	if !strings.Contains(args, "--health-probe-bind-address=:9447") {
		t.Errorf("agent args %s serve no health port", args)
	}
}

// TestRenderReplicas: more than one hub replica gets a PodDisruptionBudget
// over the hub's pods; one gets none.
func TestRenderReplicas(t *testing.T) {
	pdbs := func(values map[string]any) []*unstructured.Unstructured {
		t.Helper()
		objs, err := Render(HubChart, HubNamespace, values)
		if err != nil {
			t.Fatal(err)
		}
		var out []*unstructured.Unstructured
		for _, o := range objs {
			if o.GetKind() == "PodDisruptionBudget" {
				out = append(out, o)
			}
		}
		return out
	}
	if got := pdbs(nil); len(got) != 0 {
		t.Errorf("one replica: %d PodDisruptionBudgets, want none", len(got))
	}
	got := pdbs(map[string]any{"replicas": 3, "webhook": map[string]any{"certificate": map[string]any{"secretName": "hub-webhook-tls"}}})
	if len(got) != 1 {
		t.Fatalf("three replicas: %d PodDisruptionBudgets, want one", len(got))
	}
	sel, _, _ := unstructured.NestedStringMap(got[0].Object, "spec", "selector", "matchLabels")
	min, _, _ := unstructured.NestedFieldNoCopy(got[0].Object, "spec", "minAvailable")
	if sel["app.kubernetes.io/name"] != HubChart || fmt.Sprint(min) != "1" {
		t.Errorf("PodDisruptionBudget selector %v minAvailable %v, want the hub's pods and 1", sel, min)
	}
}

// TestRenderCertManager: with cert-manager, a Certificate for the webhook
// Service into the Secret the hub mounts, no self-signed certificate, and
// the webhook configurations the hub fills in, annotated for cert-manager's
// CA injector.
func TestRenderCertManager(t *testing.T) {
	objs, err := Render(HubChart, HubNamespace, map[string]any{
		"replicas": 2,
		"webhook": map[string]any{"certificate": map[string]any{"certManager": map[string]any{
			"enabled": true, "issuerRef": map[string]any{"name": "fleet-ca", "kind": "ClusterIssuer"},
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var cert *unstructured.Unstructured
	var webhooks []string
	for _, o := range objs {
		switch o.GetKind() {
		case "Certificate":
			cert = o
		case "ValidatingWebhookConfiguration":
			webhooks = append(webhooks, o.GetName())
			if got := o.GetAnnotations()["cert-manager.io/inject-ca-from"]; got != HubNamespace+"/flotilla-hub-webhook" {
				t.Errorf("ValidatingWebhookConfiguration %s: inject-ca-from %q", o.GetName(), got)
			}
		}
	}
	if cert == nil {
		t.Fatal("no Certificate")
	}
	secret, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName")
	dns, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
	issuer, _, _ := unstructured.NestedStringMap(cert.Object, "spec", "issuerRef")
	if secret != "flotilla-hub-webhook-tls" || !contains(dns, "flotilla-hub-webhook."+HubNamespace+".svc") || issuer["name"] != "fleet-ca" || issuer["kind"] != "ClusterIssuer" {
		t.Errorf("Certificate secretName %q dnsNames %v issuerRef %v", secret, dns, issuer)
	}
	if len(webhooks) != 2 {
		t.Errorf("ValidatingWebhookConfigurations %v, want the ManifestWork and Policy ones", webhooks)
	}
	d := deployment(t, objs)
	args := strings.Join(stringsOf(container(t, d)["args"]), " ")
	if strings.Contains(args, "--webhook-self-signed") {
		t.Errorf("hub args %s: self-signed despite cert-manager", args)
	}
	volumes, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "volumes")
	var mounted string
	for _, v := range volumes {
		if v.(map[string]any)["name"] == "webhook-cert" {
			mounted, _, _ = unstructured.NestedString(v.(map[string]any), "secret", "secretName")
		}
	}
	if mounted != secret {
		t.Errorf("the hub mounts Secret %q for the webhook, the Certificate writes %q", mounted, secret)
	}
}

// TestRenderRefuses: what cannot work is refused at render time, saying
// which value and how to fix it.
func TestRenderRefuses(t *testing.T) {
	agent := func(override map[string]any) map[string]any {
		v := map[string]any{}
		for k, x := range agentValues {
			v[k] = x
		}
		for k, x := range override {
			v[k] = x
		}
		return v
	}
	hubAt := func(url string) map[string]any {
		return map[string]any{"apiServer": url, "caCert": "-----BEGIN CERTIFICATE-----\n"}
	}
	tests := []struct {
		name, chart, ns string
		values          map[string]any
		want            string
	}{
		{"cluster name with capitals", AgentChart, AgentNamespace, agent(map[string]any{"clusterName": "Cluster1"}), `clusterName "Cluster1" is not a DNS-1123 label`},
		{"cluster name with underscore", AgentChart, AgentNamespace, agent(map[string]any{"clusterName": "edge_1"}), `clusterName "edge_1" is not a DNS-1123 label`},
		{"cluster name ending in a dash", AgentChart, AgentNamespace, agent(map[string]any{"clusterName": "edge-"}), "is not a DNS-1123 label"},
		{"cluster name of 64 characters", AgentChart, AgentNamespace, agent(map[string]any{"clusterName": strings.Repeat("a", 64)}), "is not a DNS-1123 label"},
		{"agent hub at localhost", AgentChart, AgentNamespace, agent(map[string]any{"hub": hubAt("https://localhost:6443")}), `hub.apiServer "https://localhost:6443" is a loopback address`},
		{"agent hub at 127.0.0.1", AgentChart, AgentNamespace, agent(map[string]any{"hub": hubAt("https://127.0.0.1:6443")}), "is a loopback address"},
		{"agent hub at ::1", AgentChart, AgentNamespace, agent(map[string]any{"hub": hubAt("https://[::1]:6443")}), "is a loopback address"},
		{"agent hub over http", AgentChart, AgentNamespace, agent(map[string]any{"hub": hubAt("http://hub.example.com:6443")}), "is not an https URL"},
		{"hub apiServer empty", HubChart, HubNamespace, map[string]any{"apiServer": ""}, "apiServer is required"},
		{"hub apiServer at localhost", HubChart, HubNamespace, map[string]any{"apiServer": "https://localhost:6443"}, `apiServer "https://localhost:6443" is a loopback address`},
		{"hub apiServer at 127.0.0.1", HubChart, HubNamespace, map[string]any{"apiServer": "https://127.0.0.1"}, "is a loopback address"},
		{"hub apiServer at 0.0.0.0", HubChart, HubNamespace, map[string]any{"apiServer": "https://0.0.0.0:6443"}, "is a loopback address"},
		{"two replicas, no webhook certificate", HubChart, HubNamespace, map[string]any{"replicas": 2}, "replicas=2 needs one webhook certificate for every replica"},
		{"cert-manager without an issuer", HubChart, HubNamespace, map[string]any{"webhook": map[string]any{"certificate": map[string]any{"certManager": map[string]any{"enabled": true}}}}, "needs webhook.certificate.certManager.issuerRef.name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Render(tt.chart, tt.ns, tt.values)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
	// What can work is not refused.
	for _, ok := range []map[string]any{
		{"replicas": 2, "webhook": map[string]any{"enabled": false}},
		{"replicas": 2, "webhook": map[string]any{"certificate": map[string]any{"secretName": "hub-webhook-tls"}}},
		{"apiServer": "https://192.0.2.10:6443"},
	} {
		if _, err := Render(HubChart, HubNamespace, ok); err != nil {
			t.Errorf("hub chart with %v: %v", ok, err)
		}
	}
}

func deployment(t *testing.T, objs []*unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			return o
		}
	}
	t.Fatal("no Deployment")
	return nil
}

func container(t *testing.T, d *unstructured.Unstructured) map[string]any {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if len(cs) == 0 {
		t.Fatal("Deployment has no container")
	}
	return cs[0].(map[string]any)
}

func image(t *testing.T, d *unstructured.Unstructured) string {
	t.Helper()
	s, _ := container(t, d)["image"].(string)
	return s
}

func hasNamed(list any, name string) bool {
	items, _ := list.([]any)
	for _, i := range items {
		if m, ok := i.(map[string]any); ok && m["name"] == name {
			return true
		}
	}
	return false
}

func stringsOf(list any) []string {
	items, _ := list.([]any)
	out := make([]string, 0, len(items))
	for _, i := range items {
		s, _ := i.(string)
		out = append(out, s)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
