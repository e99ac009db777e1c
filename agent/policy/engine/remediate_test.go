package engine

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1 "github.com/flotilla-io/flotilla/api/policy/v1"
)

// TestUnnamedNeverActs proves that enforce plans no action for an object
// template without a name, whatever its complianceType and whether objects
// match, differ or are missing, and that each result says why.
func TestUnnamedNeverActs(t *testing.T) {
	defs := map[string]string{
		"matches":  `{apiVersion: v1, kind: Pod, metadata: {namespace: default, labels: {app: web}}}`,
		"differs":  `{apiVersion: v1, kind: Pod, metadata: {namespace: default, labels: {app: other}}}`,
		"no kind":  `{apiVersion: rbac.authorization.k8s.io/v1, kind: Role, metadata: {namespace: default}, rules: [{verbs: ["*"]}]}`,
		"selector": `{apiVersion: v1, kind: Pod, metadata: {labels: {app: web}}}`,
	}
	for _, ct := range []string{"musthave", "mustonlyhave", "mustnothave", "MustNotHave"} {
		for what, def := range defs {
			spec := "remediationAction: enforce\n"
			if what == "selector" {
				spec += "namespaceSelector: {include: [default, kube-system]}\n"
			}
			spec += "object-templates:\n- complianceType: " + ct + "\n  objectDefinition: " + def
			res := Evaluate(context.Background(), policy(t, spec), objects(t, cluster))
			if len(res.Actions) > 0 {
				t.Errorf("%s, %s: enforce plans %v for a template without a name", ct, what, res.Actions)
			}
			for _, tr := range res.Templates {
				if tr.Err != nil {
					t.Fatalf("%s, %s: %v", ct, what, tr.Err.Message)
				}
				for _, o := range tr.Objects {
					if o.Message != InformOnlyUnnamed {
						t.Errorf("%s, %s: object %s says %q, want %q", ct, what, o.Object.Metadata.Name, o.Message, InformOnlyUnnamed)
					}
				}
			}
		}
	}
	// Inform says nothing of the kind.
	res := Evaluate(context.Background(), policy(t, "remediationAction: inform\nobject-templates:\n- complianceType: mustnothave\n  objectDefinition: "+defs["matches"]), objects(t, cluster))
	if o := res.Templates[0].Objects[0]; o.Message != "" {
		t.Errorf("inform: %q", o.Message)
	}
}

// TestDeletionPending: a mustnothave object that is being deleted stays
// NonCompliant, says what it waits for, and is not deleted again; a
// deletion the API server accepted that leaves the object counts only
// once it is gone.
func TestDeletionPending(t *testing.T) {
	set := objects(t, `
apiVersion: v1
kind: Namespace
metadata: {name: legacy, deletionTimestamp: "2026-01-01T00:00:00Z", uid: ns-uid}
spec: {finalizers: [kubernetes]}
status: {phase: Terminating}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: held, namespace: default, finalizers: [example.com/hold]}
`)
	res := Evaluate(context.Background(), policy(t, `
remediationAction: enforce
object-templates:
- complianceType: mustnothave
  objectDefinition: {apiVersion: v1, kind: Namespace, metadata: {name: legacy}}`), set)
	if len(res.Actions) != 0 {
		t.Fatalf("actions on an object being deleted: %v", res.Actions)
	}
	want := "NonCompliant; violation - namespaces [legacy] is being deleted, waiting for namespace phase Terminating to end"
	if got := res.Message(); got != want {
		t.Errorf("message:\n got %s\nwant %s", got, want)
	}
	if w := res.Waiting(); len(w) != 1 || w[0].Name != "legacy" {
		t.Errorf("waiting: %v", w)
	}

	res = Evaluate(context.Background(), policy(t, `
remediationAction: enforce
object-templates:
- complianceType: mustnothave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: held, namespace: default}}`), set)
	if len(res.Actions) != 1 {
		t.Fatalf("actions: %v", res.Actions)
	}
	still := res.Actions[0].Object.DeepCopy()
	still.SetDeletionTimestamp(nil)
	res.Done(res.Actions[0], still, nil)
	want = "NonCompliant; violation - configmaps [held] in namespace default is being deleted, waiting for finalizers example.com/hold"
	if got := res.Message(); got != want {
		t.Errorf("message:\n got %s\nwant %s", got, want)
	}
	if got := res.Compliance(); got != policyv1.NonCompliant {
		t.Errorf("compliance %s", got)
	}
}

// TestCreateMutated: an object that enforce created and admission changed
// away from the template is NonCompliant, naming the fields.
func TestCreateMutated(t *testing.T) {
	res := Evaluate(context.Background(), policy(t, `
remediationAction: enforce
object-templates:
- complianceType: musthave
  objectDefinition: {apiVersion: v1, kind: ConfigMap, metadata: {name: new, namespace: default}, data: {mode: fast}}`), objects(t, cluster))
	if len(res.Actions) != 1 {
		t.Fatalf("actions: %v", res.Actions)
	}
	got := res.Actions[0].Object.DeepCopy()
	_ = unstructured.SetNestedField(got.Object, "slow", "data", "mode")
	res.Done(res.Actions[0], got, nil)
	want := "NonCompliant; violation - configmaps [new] in namespace default was created, but the API server changed it from the template: data.mode"
	if msg := res.Message(); msg != want {
		t.Errorf("message:\n got %s\nwant %s", msg, want)
	}
	if !strings.Contains(res.Templates[0].Objects[0].Reason, "does not match") {
		t.Errorf("reason %s", res.Templates[0].Objects[0].Reason)
	}
}
