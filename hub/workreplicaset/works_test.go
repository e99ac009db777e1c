package workreplicaset

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// specOf is a ManifestWork spec of the given manifests.
func specOf(raw ...string) workv1.ManifestWorkSpec {
	var s workv1.ManifestWorkSpec
	for _, r := range raw {
		s.Workload.Manifests = append(s.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(r)}})
	}
	return s
}

func ptr[T any](v T) *T { return &v }

func TestSpecEqual(t *testing.T) {
	a := specOf(`{"kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"1"}}`)
	if !SpecEqual(&a, ptr(specOf(`{"data":{"a":"1"},"metadata":{"name":"x"},"kind":"ConfigMap"}`))) {
		t.Error("the same manifest with keys in another order differs")
	}
	if SpecEqual(&a, ptr(specOf(`{"kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"2"}}`))) {
		t.Error("different data is the same")
	}
	b := specOf(`{"kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"1"}}`)
	b.DeleteOption = &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeOrphan}
	if SpecEqual(&a, &b) {
		t.Error("a different deleteOption is the same")
	}
}
