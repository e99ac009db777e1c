package admission

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/workreplicaset/health"
)

// replicaSet is a replica set whose template holds manifest (JSON text).
func replicaSet(manifest string, annotations map[string]string) *workv1alpha1.ManifestWorkReplicaSet {
	return &workv1alpha1.ManifestWorkReplicaSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: workv1alpha1.GroupVersion.String(), Kind: "ManifestWorkReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web", Annotations: annotations},
		Spec: workv1alpha1.ManifestWorkReplicaSetSpec{
			PlacementRefs: []workv1alpha1.LocalPlacementReference{{Name: "prod"}},
			ManifestWorkTemplate: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{
				{RawExtension: runtime.RawExtension{Raw: []byte(manifest)}},
			}}},
		},
	}
}

const (
	v1 = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.27"}]}}}}`
	v2 = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.28"}]}}}}`
	// v1Reordered is v1 with its keys in another order.
	v1Reordered = `{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"namespace":"default","name":"web"},"spec":{"template":{"spec":{"containers":[{"image":"nginx:1.27","name":"web"}]}}}}`
)

func raw(t *testing.T, rs *workv1alpha1.ManifestWorkReplicaSet) []byte {
	t.Helper()
	data, err := json.Marshal(rs)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// admit runs the handler as the API server calls it, and returns the
// answer and the object the API server would store.
func admit(t *testing.T, user string, old, rs *workv1alpha1.ManifestWorkReplicaSet) (admission.Response, *workv1alpha1.ManifestWorkReplicaSet) {
	t.Helper()
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Operation: admissionv1.Create, Namespace: rs.Namespace, Name: rs.Name,
		UserInfo: authenticationv1.UserInfo{Username: user},
		Object:   runtime.RawExtension{Raw: raw(t, rs)},
	}}
	if old != nil {
		req.Operation, req.OldObject = admissionv1.Update, runtime.RawExtension{Raw: raw(t, old)}
	}
	resp := Handler{Checker: health.NewChecker()}.Handle(context.Background(), req)
	if !resp.Allowed {
		return resp, nil
	}
	stored := req.Object.Raw
	if len(resp.Patch) > 0 {
		if *resp.PatchType != admissionv1.PatchTypeJSONPatch {
			t.Fatalf("patch type %s", *resp.PatchType)
		}
		patch, err := jsonpatch.DecodePatch(resp.Patch)
		if err != nil {
			t.Fatalf("the patch %s does not decode: %v", resp.Patch, err)
		}
		if stored, err = patch.Apply(stored); err != nil {
			t.Fatalf("the patch %s does not apply: %v", resp.Patch, err)
		}
	}
	got := &workv1alpha1.ManifestWorkReplicaSet{}
	if err := json.Unmarshal(stored, got); err != nil {
		t.Fatal(err)
	}
	return resp, got
}

func TestChangedBy(t *testing.T) {
	const by = workv1alpha1.ChangedByAnnotation
	tests := []struct {
		name     string
		old, new *workv1alpha1.ManifestWorkReplicaSet
		// want is the annotation stored; "" with wantNone: none.
		want     string
		wantNone bool
	}{
		{name: "create records the user", new: replicaSet(v1, nil), want: "alice"},
		{name: "create replaces a forged value", new: replicaSet(v1, map[string]string{by: "mallory", "team": "a"}), want: "alice"},
		{name: "create with other annotations adds it", new: replicaSet(v1, map[string]string{"team": "a"}), want: "alice"},
		{name: "a template change records the user",
			old: replicaSet(v1, map[string]string{by: "bob"}), new: replicaSet(v2, map[string]string{by: "bob"}), want: "alice"},
		{name: "a template change replaces a forged value",
			old: replicaSet(v1, map[string]string{by: "bob"}), new: replicaSet(v2, map[string]string{by: "mallory"}), want: "alice"},
		{name: "an overrides change records the user",
			old: replicaSet(v1, map[string]string{by: "bob"}),
			new: func() *workv1alpha1.ManifestWorkReplicaSet {
				rs := replicaSet(v1, map[string]string{by: "bob"})
				rs.Spec.Overrides = []workv1alpha1.ClusterOverride{{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}}
				return rs
			}(), want: "alice"},
		{name: "a replica division change records the user",
			old: replicaSet(v1, map[string]string{by: "bob"}),
			new: func() *workv1alpha1.ManifestWorkReplicaSet {
				rs := replicaSet(v1, map[string]string{by: "bob"})
				rs.Spec.ReplicaDivision = &workv1alpha1.ReplicaDivision{}
				return rs
			}(), want: "alice"},
		{name: "an unchanged shape keeps the old author",
			old: replicaSet(v1, map[string]string{by: "bob"}), new: replicaSet(v1, map[string]string{by: "bob", "team": "a"}), want: "bob"},
		{name: "manifests in another key order are unchanged",
			old: replicaSet(v1, map[string]string{by: "bob"}), new: replicaSet(v1Reordered, map[string]string{by: "bob"}), want: "bob"},
		{name: "an unchanged shape puts back a forged value",
			old: replicaSet(v1, map[string]string{by: "bob"}), new: replicaSet(v1, map[string]string{by: "mallory"}), want: "bob"},
		{name: "an unchanged shape puts back a removed value",
			old: replicaSet(v1, map[string]string{by: "bob"}), new: replicaSet(v1, nil), want: "bob"},
		{name: "an unchanged shape removes a value the old one did not have",
			old: replicaSet(v1, nil), new: replicaSet(v1, map[string]string{by: "mallory"}), wantNone: true},
		{name: "an unchanged shape removes an empty forged value",
			old: replicaSet(v1, nil), new: replicaSet(v1, map[string]string{by: ""}), wantNone: true},
		{name: "a change of the rollout alone keeps the author",
			old: replicaSet(v1, map[string]string{by: "bob"}),
			new: func() *workv1alpha1.ManifestWorkReplicaSet {
				rs := replicaSet(v1, map[string]string{by: "bob"})
				rs.Spec.PlacementRefs = append(rs.Spec.PlacementRefs, workv1alpha1.LocalPlacementReference{Name: "dev"})
				return rs
			}(), want: "bob"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, got := admit(t, "alice", tt.old, tt.new)
			if !resp.Allowed {
				t.Fatalf("refused: %v", resp.Result)
			}
			v, ok := got.Annotations[by]
			switch {
			case tt.wantNone && ok:
				t.Errorf("stored %s=%q, want none", by, v)
			case !tt.wantNone && (!ok || v != tt.want):
				t.Errorf("stored %s=%q (present %v), want %q", by, v, ok, tt.want)
			}
			if tt.new.Annotations["team"] != got.Annotations["team"] {
				t.Errorf("other annotations changed: %v", got.Annotations)
			}
		})
	}
}

func TestNoPatchWhenRight(t *testing.T) {
	resp, _ := admit(t, "alice", replicaSet(v1, map[string]string{workv1alpha1.ChangedByAnnotation: "bob"}), replicaSet(v1, map[string]string{workv1alpha1.ChangedByAnnotation: "bob"}))
	if !resp.Allowed || len(resp.Patch) > 0 {
		t.Fatalf("an unchanged replica set: allowed %v, patch %s; want allowed without a patch", resp.Allowed, resp.Patch)
	}
}

func TestHealthCheckAdmission(t *testing.T) {
	bad := &workv1alpha1.HealthCheck{Expression: "values.AvailableReplicas =="}
	good := &workv1alpha1.HealthCheck{Expression: "values.AvailableReplicas == values.Replicas"}
	withCheck := func(hc *workv1alpha1.HealthCheck, manifest string) *workv1alpha1.ManifestWorkReplicaSet {
		rs := replicaSet(manifest, nil)
		rs.Spec.HealthCheck = hc
		return rs
	}

	t.Run("a create with a bad expression is refused, naming the field", func(t *testing.T) {
		resp, _ := admit(t, "alice", nil, withCheck(bad, v1))
		if resp.Allowed {
			t.Fatal("admitted")
		}
		if resp.Result.Code != http.StatusUnprocessableEntity || resp.Result.Reason != metav1.StatusReasonInvalid {
			t.Errorf("code %d reason %s, want 422 Invalid", resp.Result.Code, resp.Result.Reason)
		}
		if !strings.Contains(resp.Result.Message, "ManifestWorkReplicaSet apps/web is refused: spec.healthCheck.expression: Invalid value") ||
			!strings.Contains(resp.Result.Message, "does not compile") {
			t.Errorf("message %q", resp.Result.Message)
		}
		if d := resp.Result.Details; d == nil || len(d.Causes) != 1 || d.Causes[0].Field != "spec.healthCheck.expression" || d.Causes[0].Type != metav1.CauseTypeFieldValueInvalid {
			t.Errorf("details %+v, want one cause for spec.healthCheck.expression", d)
		}
	})
	t.Run("an update that makes it bad is refused", func(t *testing.T) {
		if resp, _ := admit(t, "alice", withCheck(good, v1), withCheck(bad, v1)); resp.Allowed {
			t.Fatal("admitted")
		}
	})
	t.Run("a good expression is admitted", func(t *testing.T) {
		if resp, _ := admit(t, "alice", nil, withCheck(good, v1)); !resp.Allowed {
			t.Fatalf("refused: %s", resp.Result.Message)
		}
	})
	t.Run("a bad one stored before stays editable otherwise", func(t *testing.T) {
		resp, got := admit(t, "alice", withCheck(bad, v1), withCheck(bad, v2))
		if !resp.Allowed {
			t.Fatalf("refused: %s", resp.Result.Message)
		}
		if got.Annotations[workv1alpha1.ChangedByAnnotation] != "alice" {
			t.Errorf("annotations %v", got.Annotations)
		}
	})
}

func TestUndecodable(t *testing.T) {
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Operation: admissionv1.Create, UserInfo: authenticationv1.UserInfo{Username: "alice"},
		Object: runtime.RawExtension{Raw: []byte(`{"spec":{"overrides":"nope"}}`)},
	}}
	resp := Handler{Checker: health.NewChecker()}.Handle(context.Background(), req)
	if resp.Allowed || resp.Result.Code != http.StatusBadRequest || !strings.Contains(resp.Result.Message, "decode the ManifestWorkReplicaSet") {
		t.Fatalf("allowed %v: %+v", resp.Allowed, resp.Result)
	}
}
