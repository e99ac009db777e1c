package templates

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// objects is a Reader over fixed objects.
type objects struct {
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
	err        error
}

func (o objects) ConfigMap(ns, name string) (*corev1.ConfigMap, error) {
	return o.configMaps[ns+"/"+name], o.err
}

func (o objects) Secret(ns, name string) (*corev1.Secret, error) {
	return o.secrets[ns+"/"+name], o.err
}

func TestResolve(t *testing.T) {
	reader := objects{
		configMaps: map[string]*corev1.ConfigMap{"policies/site": {
			ObjectMeta: metav1.ObjectMeta{Namespace: "policies", Name: "site"},
			Data:       map[string]string{"dns": "10.0.0.53", "replicas": "3", "debug": "true", "motd": "line one\nline two"},
		}},
		secrets: map[string]*corev1.Secret{"policies/creds": {
			ObjectMeta: metav1.ObjectMeta{Namespace: "policies", Name: "creds"},
			Data:       map[string][]byte{"password": []byte("s3cret")},
		}},
	}
	data := Data{
		ManagedClusterName:   "cluster-a",
		ManagedClusterLabels: map[string]string{"region": "eu-west", "env": "prod"},
		PolicyMetadata:       map[string]any{"name": "p", "namespace": "policies"},
	}
	cm := ConfigMap
	tests := []struct {
		name     string
		in       string // YAML of the object definition
		want     string // YAML of the result
		wantRefs []Ref
		wantErr  string
	}{
		{
			name: "no hub template is left alone, managed-cluster templates included",
			in:   `{a: '{{ fromConfigMap "x" "y" "z" }}'}`,
			want: `{a: '{{ fromConfigMap "x" "y" "z" }}'}`,
		},
		{
			name: "cluster name and labels",
			in:   `{name: '{{hub .ManagedClusterName hub}}', region: '{{hub index .ManagedClusterLabels "region" hub}}', missing: 'x{{hub .ManagedClusterLabels.none hub}}'}`,
			want: `{name: cluster-a, region: eu-west, missing: x}`,
		},
		{
			name: "policy metadata",
			in:   `{owner: '{{hub .PolicyMetadata.namespace hub}}/{{hub .PolicyMetadata.name hub}}'}`,
			want: `{owner: policies/p}`,
		},
		{
			name:     "fromConfigMap, the empty namespace being the policy's",
			in:       `{a: '{{hub fromConfigMap "policies" "site" "dns" hub}}', b: '{{hub fromConfigMap "" "site" "dns" hub}}'}`,
			want:     `{a: 10.0.0.53, b: 10.0.0.53}`,
			wantRefs: []Ref{{cm, "policies", "site"}, {cm, "policies", "site"}},
		},
		{
			name:     "fromSecret gives the stored base64, base64dec the value",
			in:       `{a: '{{hub fromSecret "" "creds" "password" hub}}', b: '{{hub fromSecret "" "creds" "password" | base64dec hub}}'}`,
			want:     `{a: czNjcmV0, b: s3cret}`,
			wantRefs: []Ref{{Secret, "policies", "creds"}, {Secret, "policies", "creds"}},
		},
		{
			name:     "toInt and toBool drop the quotes",
			in:       `{replicas: '{{hub fromConfigMap "" "site" "replicas" | toInt hub}}', debug: '{{hub fromConfigMap "" "site" "debug" | toBool hub}}'}`,
			want:     `{replicas: 3, debug: true}`,
			wantRefs: []Ref{{cm, "policies", "site"}, {cm, "policies", "site"}},
		},
		{
			name: "base64enc",
			in:   `{a: '{{hub .ManagedClusterName | base64enc hub}}'}`,
			want: `{a: Y2x1c3Rlci1h}`,
		},
		{
			name:     "autoindent keeps a multi-line value inside its block",
			in:       "{data: {motd: \"{{hub fromConfigMap \\\"\\\" \\\"site\\\" \\\"motd\\\" | autoindent hub}}\\n\"}}",
			want:     "{data: {motd: \"line one\\nline two\\n\"}}",
			wantRefs: []Ref{{cm, "policies", "site"}},
		},
		{
			name:    "another namespace is out of reach",
			in:      `{a: '{{hub fromConfigMap "kube-system" "site" "dns" hub}}'}`,
			wantErr: "the ConfigMap kube-system/site is out of reach: hub templates read only the namespace of the policy, policies",
		},
		{
			name:    "a secret of another namespace too",
			in:      `{a: '{{hub fromSecret "default" "creds" "password" hub}}'}`,
			wantErr: "the Secret default/creds is out of reach",
		},
		{
			name:     "a missing ConfigMap, which is still watched",
			in:       `{a: '{{hub fromConfigMap "" "nope" "dns" hub}}'}`,
			wantErr:  "failed to get the configmap nope from policies: not found",
			wantRefs: []Ref{{cm, "policies", "nope"}},
		},
		{
			name:    "an unparsable expression",
			in:      `{a: '{{hub fromConfigMap "" "site" hub}} {{hub end hub}}'}`,
			wantErr: `failed to resolve the template {"a":"{{hub fromConfigMap`,
		},
		{
			name:    "an unknown function",
			in:      `{a: '{{hub lookupEverything hub}}'}`,
			wantErr: `function "lookupEverything" not defined`,
		},
		{
			name:     "toInt of a word",
			in:       `{a: '{{hub fromConfigMap "" "site" "dns" | toInt hub}}'}`,
			wantErr:  `invalid syntax`,
			wantRefs: []Ref{{cm, "policies", "site"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := yaml.YAMLToJSON([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			r := &Resolver{Namespace: "policies", Reader: reader}
			out, refs, err := r.Resolve(raw, data)
			if diff := cmp.Diff(tt.wantRefs, refs); diff != "" {
				t.Errorf("refs (-want +got):\n%s", diff)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				if !strings.HasPrefix(err.Error(), "failed to resolve the template {") {
					t.Errorf("error %q does not start as OCM's do", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			want, err := yaml.YAMLToJSON([]byte(tt.want))
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != string(want) {
				t.Errorf("Resolve = %s, want %s", out, want)
			}
		})
	}
}

func TestResolveReadError(t *testing.T) {
	r := &Resolver{Namespace: "policies", Reader: objects{err: errors.New("the hub is down")}}
	_, _, err := r.Resolve([]byte(`{"a":"{{hub fromConfigMap \"\" \"site\" \"dns\" hub}}"}`), Data{})
	if err == nil || !strings.Contains(err.Error(), "the hub is down") {
		t.Fatalf("error = %v, want the read error", err)
	}
}

// BenchmarkResolve measures one cluster's resolution of a typical
// template: the propagator does this once per cluster per reconcile.
func BenchmarkResolve(b *testing.B) {
	reader := objects{configMaps: map[string]*corev1.ConfigMap{"policies/site": {Data: map[string]string{"dns": "10.0.0.53"}}}}
	raw, err := yaml.YAMLToJSON([]byte(`{apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy, metadata: {name: site},
spec: {object-templates: [{complianceType: musthave, objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: site, namespace: default},
data: {cluster: '{{hub .ManagedClusterName hub}}', region: '{{hub index .ManagedClusterLabels "region" hub}}', dns: '{{hub fromConfigMap "" "site" "dns" hub}}'}}}]}}`))
	if err != nil {
		b.Fatal(err)
	}
	r := &Resolver{Namespace: "policies", Reader: reader}
	data := Data{ManagedClusterName: "c1", ManagedClusterLabels: map[string]string{"region": "eu"}}
	for b.Loop() {
		if _, _, err := r.Resolve(raw, data); err != nil {
			b.Fatal(err)
		}
	}
}
