package policytemplate_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/internal/policytemplate"
)

// objects is an ObjectReader over fixed objects, as a hub holding them.
type objects struct {
	items []*unstructured.Unstructured
	err   error
}

var mapper = func() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	for _, k := range []struct {
		gvk        schema.GroupVersionKind
		namespaced bool
	}{
		{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, true},
		{schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, true},
		{schema.GroupVersionKind{Version: "v1", Kind: "Node"}, false},
		{schema.GroupVersionKind{Group: "cluster.open-cluster-management.io", Version: "v1", Kind: "ManagedCluster"}, false},
		{schema.GroupVersionKind{Group: "policy.open-cluster-management.io", Version: "v1", Kind: "ConfigurationPolicy"}, true},
	} {
		scope := meta.RESTScopeRoot
		if k.namespaced {
			scope = meta.RESTScopeNamespace
		}
		m.Add(k.gvk, scope)
	}
	return m
}()

func (o objects) Mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	return mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
}

func (o objects) Get(m *meta.RESTMapping, ns, name string) (*unstructured.Unstructured, error) {
	for _, obj := range o.items {
		if obj.GroupVersionKind() == m.GroupVersionKind && obj.GetNamespace() == ns && obj.GetName() == name {
			return obj, o.err
		}
	}
	return nil, o.err
}

func (o objects) List(m *meta.RESTMapping, ns string, sel labels.Selector) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, obj := range o.items {
		if obj.GroupVersionKind() == m.GroupVersionKind && (ns == "" || obj.GetNamespace() == ns) && sel.Matches(labels.Set(obj.GetLabels())) {
			out = append(out, obj)
		}
	}
	return out, o.err
}

func object(doc string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		panic(err)
	}
	return u
}

var (
	configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secrets    = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

func TestHubResolve(t *testing.T) {
	reader := objects{items: []*unstructured.Unstructured{
		object(`{apiVersion: v1, kind: ConfigMap, metadata: {name: site, namespace: policies, labels: {copy: "yes"}},
data: {dns: 10.0.0.53, replicas: "3", debug: "true", motd: "line one\nline two"}}`),
		object(`{apiVersion: v1, kind: ConfigMap, metadata: {name: other, namespace: policies, labels: {copy: "yes"}}, data: {a: b}}`),
		object(`{apiVersion: v1, kind: ConfigMap, metadata: {name: site, namespace: kube-system}, data: {dns: x}}`),
		object(`{apiVersion: v1, kind: Secret, metadata: {name: creds, namespace: policies}, data: {password: ` + base64.StdEncoding.EncodeToString([]byte("s3cret")) + `}}`),
		object(`{apiVersion: cluster.open-cluster-management.io/v1, kind: ManagedCluster, metadata: {name: cluster-a}, spec: {hubAcceptsClient: true}}`),
		object(`{apiVersion: cluster.open-cluster-management.io/v1, kind: ManagedCluster, metadata: {name: cluster-b}}`),
	}}
	data := policytemplate.HubData{
		ManagedClusterName:   "cluster-a",
		ManagedClusterLabels: map[string]string{"region": "eu-west", "env": "prod"},
		PolicyMetadata:       map[string]any{"name": "p", "namespace": "policies"},
	}
	site := policytemplate.Ref{Resource: configMaps, Kind: "ConfigMap", Namespace: "policies", Name: "site"}
	tests := []struct {
		name      string
		in        string // YAML of the object definition
		want      string // YAML of the result
		wantRefs  []policytemplate.Ref
		wantErr   string
		sensitive bool
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
			wantRefs: []policytemplate.Ref{site, site},
		},
		{
			name:      "fromSecret gives the stored base64, base64dec the value",
			in:        `{a: '{{hub fromSecret "" "creds" "password" hub}}', b: '{{hub fromSecret "" "creds" "password" | base64dec hub}}'}`,
			want:      `{a: czNjcmV0, b: s3cret}`,
			wantRefs:  []policytemplate.Ref{{Resource: secrets, Kind: "Secret", Namespace: "policies", Name: "creds"}, {Resource: secrets, Kind: "Secret", Namespace: "policies", Name: "creds"}},
			sensitive: true,
		},
		{
			name:     "toInt and toBool drop the quotes, also inside if/else",
			in:       `{replicas: '{{hub if eq .ManagedClusterLabels.env "prod" hub}}{{hub fromConfigMap "" "site" "replicas" | toInt hub}}{{hub else hub}}1{{hub end hub}}', debug: '{{hub fromConfigMap "" "site" "debug" | toBool hub}}'}`,
			want:     `{replicas: 3, debug: true}`,
			wantRefs: []policytemplate.Ref{site, site},
		},
		{
			name:     "default",
			in:       `{a: '{{hub fromConfigMap "" "site" "none" | default "fallback" hub}}'}`,
			want:     `{a: fallback}`,
			wantRefs: []policytemplate.Ref{site},
		},
		{
			name:     "copyConfigMapData copies the data as a map",
			in:       `{data: '{{hub copyConfigMapData "" "other" hub}}'}`,
			want:     `{data: {a: b}}`,
			wantRefs: []policytemplate.Ref{{Resource: configMaps, Kind: "ConfigMap", Namespace: "policies", Name: "other"}},
		},
		{
			name:      "copySecretData copies the data as stored",
			in:        `{data: '{{hub copySecretData "" "creds" hub}}'}`,
			want:      `{data: {password: czNjcmV0}}`,
			wantRefs:  []policytemplate.Ref{{Resource: secrets, Kind: "Secret", Namespace: "policies", Name: "creds"}},
			sensitive: true,
		},
		{
			name:     "lookup of one object and of a list, in the policy's namespace",
			in:       `{dns: '{{hub (lookup "v1" "ConfigMap" "" "site").data.dns hub}}', names: '{{hub range (lookup "v1" "ConfigMap" "policies" "" "copy=yes").items hub}}{{hub .metadata.name hub}} {{hub end hub}}'}`,
			want:     `{dns: 10.0.0.53, names: 'other site '}`,
			wantRefs: []policytemplate.Ref{site, {Resource: configMaps, Kind: "ConfigMap", Namespace: "policies"}},
		},
		{
			name:     "lookup of a missing object is empty",
			in:       `{a: 'x{{hub (lookup "v1" "ConfigMap" "" "nope").data hub}}'}`,
			want:     `{a: 'x<no value>'}`,
			wantRefs: []policytemplate.Ref{{Resource: configMaps, Kind: "ConfigMap", Namespace: "policies", Name: "nope"}},
		},
		{
			name:     "lookup of the cluster's own ManagedCluster",
			in:       `{accepted: '{{hub (lookup "cluster.open-cluster-management.io/v1" "ManagedCluster" "" .ManagedClusterName).spec.hubAcceptsClient | toString | toBool hub}}'}`,
			want:     `{accepted: true}`,
			wantRefs: []policytemplate.Ref{{Resource: schema.GroupVersionResource{Group: "cluster.open-cluster-management.io", Version: "v1", Resource: "managedclusters"}, Kind: "ManagedCluster", Name: "cluster-a"}},
		},
		{
			name:    "lookup of another cluster",
			in:      `{a: '{{hub (lookup "cluster.open-cluster-management.io/v1" "ManagedCluster" "" "cluster-b").metadata.name hub}}'}`,
			wantErr: "lookup of cluster-scoped resource 'ManagedCluster/cluster-b' is not allowed",
		},
		{
			name:    "getNodesWithExactRoles reads Nodes, which are cluster-scoped",
			in:      `{a: '{{hub hasNodesWithExactRoles "infra" hub}}'}`,
			wantErr: "lookup of cluster-scoped resource 'Node/' is not allowed",
		},
		{
			name:    "fromClusterClaim of a kind the hub does not serve",
			in:      `{a: '{{hub fromClusterClaim "id.k8s.io" hub}}'}`,
			wantErr: "one or more API resources are not installed on the API server",
		},
		{
			name:    "a ConfigMap of another namespace is out of reach",
			in:      `{a: '{{hub fromConfigMap "kube-system" "site" "dns" hub}}'}`,
			wantErr: "the namespace argument is restricted to policies: the ConfigMap kube-system/site is out of reach",
		},
		{
			name:      "so is a lookup there",
			in:        `{a: '{{hub (lookup "v1" "Secret" "kube-system" "") hub}}'}`,
			wantErr:   "the namespace argument is restricted to policies",
			sensitive: true,
		},
		{
			name:     "a missing ConfigMap, which is still watched",
			in:       `{a: '{{hub fromConfigMap "" "nope" "dns" hub}}'}`,
			wantErr:  `failed getting the ConfigMap nope from policies: configmaps "nope" not found`,
			wantRefs: []policytemplate.Ref{{Resource: configMaps, Kind: "ConfigMap", Namespace: "policies", Name: "nope"}},
		},
		{
			name:      "an empty name",
			in:        `{a: '{{hub fromSecret "" "" "k" hub}}'}`,
			wantErr:   "the input is invalid: namespace, name, and key must be specified",
			sensitive: true,
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
			name:     "toInt of a word is 0",
			in:       `{a: '{{hub fromConfigMap "" "site" "dns" | toInt hub}}'}`,
			want:     `{a: 0}`,
			wantRefs: []policytemplate.Ref{site},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := yaml.YAMLToJSON([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			r := &policytemplate.HubResolver{Namespace: "policies", Reader: reader}
			out, refs, sensitive, err := r.Resolve(raw, data)
			if diff := cmp.Diff(tt.wantRefs, refs); diff != "" {
				t.Errorf("refs (-want +got):\n%s", diff)
			}
			if sensitive != tt.sensitive {
				t.Errorf("sensitive = %t, want %t", sensitive, tt.sensitive)
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

func TestHubResolveReadError(t *testing.T) {
	r := &policytemplate.HubResolver{Namespace: "policies", Reader: objects{err: errors.New("the hub is down")}}
	_, _, _, err := r.Resolve([]byte(`{"a":"{{hub fromConfigMap \"\" \"site\" \"dns\" hub}}"}`), policytemplate.HubData{})
	if err == nil || !strings.Contains(err.Error(), "the hub is down") {
		t.Fatalf("error = %v, want the read error", err)
	}
}

// BenchmarkHubResolve measures one cluster's resolution of a typical
// template: the propagator does this once per cluster per reconcile.
func BenchmarkHubResolve(b *testing.B) {
	reader := objects{items: []*unstructured.Unstructured{object(`{apiVersion: v1, kind: ConfigMap, metadata: {name: site, namespace: policies}, data: {dns: 10.0.0.53}}`)}}
	raw, err := yaml.YAMLToJSON([]byte(`{apiVersion: policy.open-cluster-management.io/v1, kind: ConfigurationPolicy, metadata: {name: site},
spec: {object-templates: [{complianceType: musthave, objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: site, namespace: default},
data: {cluster: '{{hub .ManagedClusterName hub}}', region: '{{hub index .ManagedClusterLabels "region" hub}}', dns: '{{hub fromConfigMap "" "site" "dns" hub}}'}}}]}}`))
	if err != nil {
		b.Fatal(err)
	}
	r := &policytemplate.HubResolver{Namespace: "policies", Reader: reader}
	data := policytemplate.HubData{ManagedClusterName: "c1", ManagedClusterLabels: map[string]string{"region": "eu"}}
	for b.Loop() {
		if _, _, _, err := r.Resolve(raw, data); err != nil {
			b.Fatal(err)
		}
	}
}
