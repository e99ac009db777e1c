package workreplicaset

import (
	"testing"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

func dataOf(raw ...string) *workv1alpha1.RevisionData {
	return &workv1alpha1.RevisionData{ManifestWorkTemplate: specOf(raw...)}
}

const (
	web127 = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"namespace":"default","name":"web"},"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.27"}]}}}}`
	web128 = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"namespace":"default","name":"web"},"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.28"}]}}}}`
	web3   = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"namespace":"default","name":"web"},"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.28"}]}}}}`
	cmA    = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"default","name":"a"},"data":{"k":"1"}}`
	cmA2   = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"default","name":"a"},"data":{"k":"2","l":"3","m":"4","n":"5"}}`
	ns     = `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"}}`
)

func TestChangeSummary(t *testing.T) {
	div := &workv1alpha1.RevisionData{ManifestWorkTemplate: specOf(web127), ReplicaDivision: &workv1alpha1.ReplicaDivision{}}
	opt := dataOf(web127)
	opt.ManifestWorkTemplate.DeleteOption = &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeOrphan}
	for _, tc := range []struct {
		name       string
		prev, next *workv1alpha1.RevisionData
		want       string
	}{
		{"first", nil, dataOf(ns, web127), "Namespace team added; Deployment default/web added"},
		{"image", dataOf(web127), dataOf(web128), "Deployment default/web: image nginx:1.27 → nginx:1.28"},
		{"image and a field", dataOf(web127), dataOf(web3), "Deployment default/web: image nginx:1.27 → nginx:1.28, spec.replicas"},
		{"fields, counted past three", dataOf(cmA), dataOf(cmA2), "ConfigMap default/a: data.k, data.l, data.m, (+1 more)"},
		{"added and removed", dataOf(cmA), dataOf(ns), "Namespace team added; ConfigMap default/a removed"},
		{"keys in another order are no change", dataOf(web127), dataOf(`{"kind":"Deployment","apiVersion":"apps/v1","spec":{"template":{"spec":{"containers":[{"image":"nginx:1.27","name":"web"}]}},"replicas":2},"metadata":{"name":"web","namespace":"default"}}`), "no change"},
		{"replica division", dataOf(web127), div, "replicaDivision changed"},
		{"another template field", dataOf(web127), opt, "manifestWorkTemplate deleteOption changed"},
		{"manifests counted past three", dataOf(), dataOf(ns, cmA, web127, `{"kind":"Secret","metadata":{"name":"s"}}`), "Namespace team added; ConfigMap default/a added; Deployment default/web added; (+1 more)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := changeSummary(tc.prev, tc.next); got != tc.want {
				t.Errorf("changeSummary = %q, want %q", got, tc.want)
			}
		})
	}
}
